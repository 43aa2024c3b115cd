// What the cycle makes of the client's copies of replies it already stored. The AI SDK's client
// keeps a stopped reply as it was when the stream stopped (parts still `streaming`, a tool call
// without its result), while the cycle stores it settled; a tab whose server restarted mid-reply
// holds a half reply the server never saved. Both come back with the client's next message. The
// differences that settling made are not edits, and nothing is ever stored `streaming`.
import type { UIMessage } from 'ai';
import { FAILED_REASON, isUnfinished, STOPPED_REASON, settleReply } from '../stream/settle-reply';

/**
 * The client's messages as the cycle reads them: every one but the last that is a copy of a reply
 * cut off mid-stream is settled the way the cycle settles a stopped reply, and left out when that
 * leaves nothing (a reply stopped before its first word, which the cycle never stored). The last
 * message is the request's own (a new question, or the reply a tool result continues) and is
 * kept as sent.
 */
export function settleClientMessages<UI_MESSAGE extends UIMessage>(
  messages: readonly UI_MESSAGE[],
): UI_MESSAGE[] {
  const settled: UI_MESSAGE[] = [];
  messages.forEach((message, index) => {
    if (index === messages.length - 1 || message.role !== 'assistant' || !isUnfinished(message)) {
      settled.push(message);
      return;
    }
    const copy = settleReply(message, STOPPED_REASON);
    if (copy !== undefined) settled.push(copy);
  });
  return settled;
}

/**
 * Whether `stored` is what the cycle's settling made of the reply the client holds as `sent`: the
 * same message once settled as a stopped or as a failed reply (a tool call the client saw waiting
 * was settled with the error of how the reply ended).
 */
export function isSettledCopy(sent: UIMessage, stored: UIMessage): boolean {
  if (sent.role !== 'assistant' || stored.role !== 'assistant' || sent.id !== stored.id)
    return false;
  return [STOPPED_REASON, FAILED_REASON].some((reason) => {
    const settled = settleReply(sent, reason);
    return settled !== undefined && sameMessage(settled, stored);
  });
}

/** Same role, parts and metadata (as JSON, key order aside). */
export function sameMessage(left: UIMessage, right: UIMessage): boolean {
  return (
    left.role === right.role &&
    canonical(left.parts) === canonical(right.parts) &&
    canonical(left.metadata ?? null) === canonical(right.metadata ?? null)
  );
}

/** JSON with object keys sorted (a client may send the same message with its keys reordered). */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, entry: unknown) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(entry).sort())
      sorted[key] = (entry as Record<string, unknown>)[key];
    return sorted;
  });
}
