import {
  CtxGraphError,
  NotFoundError,
  ValidationError,
  type ValidationIssue,
} from '@ctxgraph/fragments-core';

/**
 * A chat request the cycle refuses before anything is written: a body that is not JSON
 * (`readChatBody`) or not an object, a missing or empty `id`, an id or `messageId` the store could
 * not keep, a `trigger` other than `submit-message` / `regenerate-message`, neither a non-empty
 * `messages` array nor a `message`, a message the store could not keep (NUL or a lone surrogate
 * in a string, nesting deeper than `MAX_JSON_DEPTH`), or a message the AI SDK's
 * `validateUIMessages` refuses (with the app's metadata, data part and tool schemas when given).
 * `status` is 400; `issues` names each problem with its path (`messages[1].parts[0].text`).
 */
export class ChatRequestError extends ValidationError {
  static override readonly errorName: string = 'ChatRequestError';
  /** The HTTP status to answer with. */
  readonly status: 400 = 400;

  constructor(
    message: string,
    options: { issues?: readonly ValidationIssue[]; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/**
 * Something a chat request or a read names does not exist for this user: an unknown chat, a
 * message id the chat does not hold (`leaf`), or a chat owned by someone else (answered the same
 * way, so ids of other users' chats are not revealed). `status` is 404.
 */
export class ChatNotFoundForUserError extends NotFoundError {
  static override readonly errorName: string = 'ChatNotFoundForUserError';
  /** The HTTP status to answer with. */
  readonly status: 404 = 404;
}

/**
 * The reply streamed but could not be saved. The client sees it as an `error` chunk at the end
 * of the stream (never a silent loss); the server can catch it through `onSaveError`.
 */
export class ReplyNotSavedError extends CtxGraphError {
  static override readonly errorName: string = 'ReplyNotSavedError';
}
