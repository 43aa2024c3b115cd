import type { UIMessage } from 'ai';

type Part = Record<string, unknown>;

/** A tool part (`tool-<name>` or `dynamic-tool`) with its call id. */
function isToolPart(part: unknown): part is Part & { toolCallId: string; state: string } {
  if (typeof part !== 'object' || part === null) return false;
  const { type, toolCallId, state } = part as Part;
  return (
    typeof type === 'string' &&
    (type.startsWith('tool-') || type === 'dynamic-tool') &&
    typeof toolCallId === 'string' &&
    typeof state === 'string'
  );
}

/**
 * What a chat client may add to a reply it continues (a client-side tool's result, an approval
 * answer), taken onto the reply as the server stored it. Everything else in the client's copy
 * (the text the model wrote, the tool inputs, other parts, the metadata) is the server's: a chat
 * client controls what it sends, and a continuation must not let it rewrite what the model said.
 *
 * - A stored tool part waiting for its output (`input-available`) takes the client's
 *   `output-available` (its `output`) or `output-error` (its `errorText`) for the same call id.
 * - A stored tool part waiting for approval (`approval-requested`) takes the client's
 *   `approval-responded` answer (`approved`, and `reason` when a string), under the stored
 *   approval id.
 */
export function acceptToolResults<UI_MESSAGE extends UIMessage>(
  stored: UI_MESSAGE,
  sent: UI_MESSAGE,
): UI_MESSAGE {
  const answers = new Map<string, Part>();
  for (const part of sent.parts) if (isToolPart(part)) answers.set(part.toolCallId, part);
  const parts = stored.parts.map((part) => {
    if (!isToolPart(part)) return part;
    const answer = answers.get(part.toolCallId);
    if (answer === undefined || answer.type !== part.type) return part;
    if (part.state === 'input-available') {
      if (answer.state === 'output-available' && 'output' in answer)
        return { ...part, state: 'output-available', output: answer.output };
      if (answer.state === 'output-error' && typeof answer.errorText === 'string')
        return { ...part, state: 'output-error', errorText: answer.errorText };
      return part;
    }
    if (part.state === 'approval-requested' && answer.state === 'approval-responded') {
      const requested = (part as Part).approval as Part | undefined;
      const given = answer.approval as Part | undefined;
      if (typeof requested?.id !== 'string' || typeof given?.approved !== 'boolean') return part;
      return {
        ...part,
        state: 'approval-responded',
        approval: {
          id: requested.id,
          approved: given.approved,
          ...(typeof given.reason === 'string' ? { reason: given.reason } : {}),
        },
      };
    }
    return part;
  });
  return { ...stored, parts } as UI_MESSAGE;
}

/**
 * The tool calls a stored reply waits for the client to answer: those waiting for their output
 * (`input-available`) or for an approval (`approval-requested`), by call id.
 */
export function waitingCalls(reply: UIMessage): string[] {
  const waiting: string[] = [];
  for (const part of reply.parts) {
    if (!isToolPart(part)) continue;
    if (part.state === 'input-available' || part.state === 'approval-requested')
      waiting.push(part.toolCallId);
  }
  return waiting;
}
