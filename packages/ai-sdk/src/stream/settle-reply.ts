import type { UIMessage } from 'ai';

const settledToolStates = new Set([
  'output-available',
  'output-error',
  'output-denied',
  'approval-requested',
  'approval-responded',
]);

/**
 * The reply with every unfinished part settled, for a reply that was stopped or failed: text and
 * reasoning parts still `streaming` become `done`; a tool call that never got its result becomes
 * `output-error` (so the next model call does not carry a call without a result). Parts that
 * finished are kept as they are. Returns undefined when nothing but step boundaries is left (a
 * reply stopped before its first word is dropped, not stored empty).
 */
export function settleReply<UI_MESSAGE extends UIMessage>(
  reply: UI_MESSAGE,
  reason: string,
): UI_MESSAGE | undefined {
  const parts = reply.parts.map((part) => {
    const record = part as Record<string, unknown>;
    if ((part.type === 'text' || part.type === 'reasoning') && record.state === 'streaming') {
      return { ...part, state: 'done' };
    }
    const isTool = part.type === 'dynamic-tool' || part.type.startsWith('tool-');
    if (isTool && typeof record.state === 'string' && !settledToolStates.has(record.state)) {
      const { state: _state, ...rest } = record;
      return { ...rest, state: 'output-error', input: record.input ?? {}, errorText: reason };
    }
    return part;
  }) as UI_MESSAGE['parts'];
  if (parts.every((part) => part.type === 'step-start')) return undefined;
  return { ...reply, parts };
}
