import { toModelMessages } from '@ctxgraph/codecs';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import type { CacheMarkOutput, CacheModel, CacheProfile } from './cache-profiles';
import type { CacheBreakpoint } from './plan-budget';

/** Where the marks go and who places them. */
export interface MarkContext {
  readonly profile: CacheProfile;
  readonly model: CacheModel | null;
  readonly chatId: string;
  readonly branch: string;
}

/**
 * The budgeted conversation as model messages, with the planned breakpoints marked by the cache
 * profile: the system message, and the last model message made from each marked UI message (one
 * UI message can become an assistant message and a tool message; the mark goes on the last, so
 * the cached prefix holds the tool result too). Without a profile (`null`) the output is what
 * `toModelMessages` gives.
 */
export async function toMarkedModelMessages(
  systemPrompt: string,
  messages: readonly UIMessage[],
  breakpoints: readonly CacheBreakpoint[],
  context: MarkContext | null,
): Promise<CacheMarkOutput> {
  const system: SystemModelMessage = { role: 'system', content: systemPrompt };
  if (context === null) {
    return {
      system,
      messages: await toModelMessages(messages.slice()),
      providerOptions: undefined,
    };
  }
  const marked = new Set<string>();
  for (const breakpoint of breakpoints) {
    if (breakpoint.kind === 'message') marked.add(breakpoint.id);
  }
  const output: ModelMessage[] = [];
  const markMessages: number[] = [];
  let sliceStart = 0;
  for (let index = 0; index < messages.length; index += 1) {
    const id = (messages[index] as UIMessage).id;
    if (!marked.has(id) && index < messages.length - 1) continue;
    const converted = await toModelMessages(messages.slice(sliceStart, index + 1));
    output.push(...converted);
    if (marked.has(id) && converted.length > 0) markMessages.push(output.length - 1);
    sliceStart = index + 1;
  }
  return context.profile.mark({
    model: context.model,
    chatId: context.chatId,
    branch: context.branch,
    system,
    messages: output,
    markSystem: breakpoints.some((breakpoint) => breakpoint.kind === 'system'),
    markMessages,
  });
}
