// The AI SDK transport's body for a turn: only the new (or edited) message and the node it
// follows, instead of the whole history.
import type { PrepareSendMessagesRequest, UIMessage } from 'ai';

/** The turn body `createChatHandler` reads: the AI SDK's last-message body plus `after`. */
export interface LastMessageBody<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat id. */
  readonly id: string;
  /** The message the turn adds (or the edited one, or the one a regenerate answers). */
  readonly message: UI_MESSAGE;
  /** What the client asked for. */
  readonly trigger: 'submit-message' | 'regenerate-message';
  /** The message a regenerate or an edit targets. */
  readonly messageId?: string;
  /**
   * The node of the message the new one follows on the client's path (null: the chat's first
   * message); absent when the client does not know it, and the server places the message after
   * the chat's newest one.
   */
  readonly after?: string | null;
}

/**
 * The body of a turn for `messages` as the AI SDK's chat holds them: the last message, and the
 * node of the one before it (`nodeOf`, from the saved path's `nodeIds`). `extra` is the
 * request's own `body` option, kept.
 */
export function lastMessageBody<UI_MESSAGE extends UIMessage>(
  request: {
    readonly id: string;
    readonly messages: readonly UI_MESSAGE[];
    readonly trigger: 'submit-message' | 'regenerate-message';
    readonly messageId: string | undefined;
  },
  nodeOf: (messageId: string) => string | undefined,
  extra: object = {},
): LastMessageBody<UI_MESSAGE> {
  const { id, messages, trigger, messageId } = request;
  const message = messages.at(-1);
  if (message === undefined) {
    throw new TypeError(`A turn of chat ${JSON.stringify(id)} needs a message: the chat is empty.`);
  }
  const previous = messages.at(-2);
  const after = previous === undefined ? null : nodeOf(previous.id);
  return {
    ...extra,
    id,
    message,
    trigger,
    ...(messageId === undefined ? {} : { messageId }),
    ...(after === undefined ? {} : { after }),
  };
}

/**
 * `prepareSendMessagesRequest` for the AI SDK's `DefaultChatTransport`: posts
 * {@link lastMessageBody} (only the new message and the node it follows).
 *
 * @example
 * ```ts
 * const nodeIds: Record<string, string> = {}; // from the saved chat
 * new DefaultChatTransport({
 *   api: '/api/chat',
 *   prepareSendMessagesRequest: prepareLastMessageRequest((id) => nodeIds[id]),
 * });
 * ```
 */
export function prepareLastMessageRequest<UI_MESSAGE extends UIMessage>(
  nodeOf: (messageId: string) => string | undefined,
): PrepareSendMessagesRequest<UI_MESSAGE> {
  return (request) => ({ body: lastMessageBody(request, nodeOf, request.body ?? {}) });
}
