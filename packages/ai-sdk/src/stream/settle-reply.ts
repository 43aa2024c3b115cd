import type { UIMessage } from 'ai';

const settledToolStates = new Set([
  'output-available',
  'output-error',
  'output-denied',
  'approval-requested',
  'approval-responded',
]);

/** The tool call error text of a reply the client stopped (or that was cut off). */
export const STOPPED_REASON = 'The reply was stopped.';
/** The tool call error text of a reply whose model call failed. */
export const FAILED_REASON = 'The reply failed before this tool finished.';

type Part = Record<string, unknown>;

const isTextLike = (part: Part): boolean => part.type === 'text' || part.type === 'reasoning';
const isTool = (part: Part): boolean =>
  typeof part.type === 'string' && (part.type === 'dynamic-tool' || part.type.startsWith('tool-'));

/**
 * The reply with every unfinished part settled, for a reply that was stopped or failed: text and
 * reasoning parts still `streaming` become `done`, and those that never got a character are left
 * out; a tool call that never got its result becomes `output-error` with `reason` (so the next
 * model call does not carry a call without a result). Parts that finished are kept as they are.
 * Returns undefined when nothing but step boundaries is left: a reply stopped before its first
 * word is dropped, not stored empty.
 */
export function settleReply<UI_MESSAGE extends UIMessage>(
  reply: UI_MESSAGE,
  reason: string,
): UI_MESSAGE | undefined {
  const parts: unknown[] = [];
  for (const part of reply.parts as unknown[]) {
    if (typeof part !== 'object' || part === null) {
      parts.push(part);
      continue;
    }
    const record = part as Part;
    if (isTextLike(record) && record.state === 'streaming') {
      // Started but not one character in: nothing the model said, nothing to keep.
      if (record.text === '') continue;
      parts.push({ ...record, state: 'done' });
      continue;
    }
    if (
      isTool(record) &&
      typeof record.state === 'string' &&
      !settledToolStates.has(record.state)
    ) {
      const { state: _state, ...rest } = record;
      parts.push({ ...rest, state: 'output-error', input: record.input ?? {}, errorText: reason });
      continue;
    }
    parts.push(part);
  }
  if (parts.every((part) => (part as Part | null)?.type === 'step-start')) return undefined;
  return { ...reply, parts: parts as UI_MESSAGE['parts'] };
}

/**
 * Whether a message has a part that only a reply cut off mid-stream has: text or reasoning still
 * `streaming`, or a tool call whose input was still streaming. The AI SDK's client keeps its copy
 * of a stopped reply that way (and so does a tab whose server restarted mid-reply).
 */
export function isUnfinished(message: UIMessage): boolean {
  return (message.parts as unknown[]).some((part) => {
    if (typeof part !== 'object' || part === null) return false;
    const record = part as Part;
    return (
      (isTextLike(record) && record.state === 'streaming') ||
      (isTool(record) && record.state === 'input-streaming')
    );
  });
}
