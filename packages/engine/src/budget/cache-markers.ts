import { toModelMessages } from '@ctxgraph/codecs';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import type { CacheBreakpoint } from './plan-budget';

/** Anthropic's cache breakpoint, as the AI SDK's Anthropic provider reads it from a message. */
function anthropicBreakpoint(): { anthropic: { cacheControl: { type: 'ephemeral' } } } {
  return { anthropic: { cacheControl: { type: 'ephemeral' } } };
}

/**
 * The budgeted conversation as model messages, with the planned breakpoints marked: the system
 * message, and the last model message made from each marked UI message (one UI message can become
 * an assistant message and a tool message; the mark goes on the last, so the cached prefix holds
 * the tool result too). Unmarked (`markers: 'none'`) the output is what `toModelMessages` gives.
 */
export async function toMarkedModelMessages(
  systemPrompt: string,
  messages: readonly UIMessage[],
  breakpoints: readonly CacheBreakpoint[],
  markers: 'anthropic' | 'none',
): Promise<{ system: SystemModelMessage; messages: ModelMessage[] }> {
  if (markers === 'none') {
    return {
      system: { role: 'system', content: systemPrompt },
      messages: await toModelMessages(messages.slice()),
    };
  }
  const marked = new Set<string>();
  for (const breakpoint of breakpoints) {
    if (breakpoint.kind === 'message') marked.add(breakpoint.id);
  }
  const output: ModelMessage[] = [];
  let sliceStart = 0;
  for (let index = 0; index < messages.length; index += 1) {
    if (!marked.has((messages[index] as UIMessage).id) && index < messages.length - 1) continue;
    const converted = await toModelMessages(messages.slice(sliceStart, index + 1));
    const last = converted.at(-1);
    if (last !== undefined && marked.has((messages[index] as UIMessage).id)) {
      converted[converted.length - 1] = {
        ...last,
        providerOptions: { ...last.providerOptions, ...anthropicBreakpoint() },
      } as ModelMessage;
    }
    output.push(...converted);
    sliceStart = index + 1;
  }
  const system: SystemModelMessage = { role: 'system', content: systemPrompt };
  if (breakpoints.some((breakpoint) => breakpoint.kind === 'system') && systemPrompt !== '') {
    system.providerOptions = anthropicBreakpoint();
  }
  return { system, messages: output };
}
