import type { ModelMessage, SystemModelMessage } from 'ai';

/**
 * `resolve({ format: 'model' })`'s one rule for system-role messages in the history, the same on
 * AI SDK 6 and 7: they leave `messages` and join `system`, in order, after the rendered context
 * (texts separated by a blank line). AI SDK 7 refuses system messages inside `messages` unless
 * `allowSystemInMessages` is set, so `streamText({ system, messages })` works on both majors. A
 * system message's own provider options (a cache breakpoint on it, say) do not carry over:
 * `system` keeps its own.
 */
export function foldSystemMessages(
  system: SystemModelMessage,
  messages: readonly ModelMessage[],
): { system: SystemModelMessage; messages: ModelMessage[] } {
  const texts: string[] = [];
  const rest: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') texts.push(message.content);
    else rest.push(message);
  }
  if (texts.length === 0) return { system, messages: rest };
  const content = [system.content, ...texts].filter((text) => text !== '').join('\n\n');
  return { system: { ...system, content }, messages: rest };
}
