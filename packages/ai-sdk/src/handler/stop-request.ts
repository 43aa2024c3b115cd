import { assertIdentifier, ValidationError } from '@ctxgraph/fragments-core';
import { ChatRequestError } from '../errors';

/** The largest stop body read, in characters: `{"messageId": …}` with the longest id fits easily. */
const MAX_STOP_BODY_LENGTH = 4_096;

/** What a stop request (`POST …/:id/stop`) asks for: every live reply of the chat, or the one named. */
export interface StopRequest {
  /** The reply to stop (its `start` chunk's messageId); absent: every live reply of the chat. */
  readonly messageId?: string;
}

function refused(problem: string, path = ''): ChatRequestError {
  return new ChatRequestError(
    `Stop request refused: ${problem}. Send an empty body, or JSON {"messageId": "<the reply's id>"}.`,
    { issues: [{ path, message: problem }] },
  );
}

/**
 * Reads the body of a stop request: empty (or only whitespace), or a JSON object whose only key
 * is `messageId`, an id the store could keep. Anything else is a {@link ChatRequestError} (400)
 * that says what was wrong, before the chat is even read.
 */
export async function readStopRequest(request: Request): Promise<StopRequest> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_STOP_BODY_LENGTH) {
    throw refused(
      `the body is ${declared} bytes, more than a stop needs (${MAX_STOP_BODY_LENGTH})`,
    );
  }
  const text = await request.text();
  if (text.length > MAX_STOP_BODY_LENGTH) {
    throw refused(`the body is ${text.length} characters, more than a stop needs`);
  }
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw refused(`the body is ${text.length} characters that are not JSON`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw refused(
      `the body must be a JSON object, received ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`,
    );
  }
  const extra = Object.keys(body).filter((key) => key !== 'messageId');
  if (extra.length > 0) {
    throw refused(
      `unexpected ${extra.length === 1 ? 'key' : 'keys'} ${extra.map((key) => JSON.stringify(key)).join(', ')}`,
      extra[0],
    );
  }
  if (!('messageId' in body)) return {};
  const { messageId } = body as { messageId: unknown };
  try {
    assertIdentifier('stop', 'messageId', messageId);
  } catch (error) {
    if (ValidationError.isInstance(error)) {
      throw refused(`messageId ${error.issues[0]?.message ?? 'is not a valid id'}`, 'messageId');
    }
    throw error;
  }
  return { messageId };
}
