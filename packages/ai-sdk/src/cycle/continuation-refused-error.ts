import { ChatRequestError } from '../errors';

/**
 * A `submit-message` that ends with an assistant message continues that reply (a client-side
 * tool's result, an approval answer), and the cycle refused it before anything was written and
 * before the model was called: the chat holds no such reply on the client's path, the message it
 * names is not an assistant reply (a user's question sent back as one), the reply waits for no
 * tool result or approval (it was answered already: by another tab, or by an earlier request),
 * the copy answers none of the calls it waits for, or another request is answering it right now.
 * It is a {@link ChatRequestError}, so `chatErrorResponse` answers it with a 400 and
 * `{ error, issues }`; `issues[0].path` is `messages[<index>]` (or `message`). A client that gets
 * it should reload the chat (`cycle.messages`): the reply as stored shows what happened.
 */
export class ContinuationRefusedError extends ChatRequestError {
  static override readonly errorName: string = 'ContinuationRefusedError';
}
