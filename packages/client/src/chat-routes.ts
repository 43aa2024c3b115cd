// The URLs of the reference chat contract (`createChatHandler` of `@ctxgraph/ai-sdk`), in one
// place, so every request of the client agrees on them.

/** The routes of one chat contract, under its base path. */
export interface ChatRoutes {
  /** The base path itself: `POST` a turn here (the AI SDK transport's `api`). */
  readonly turn: string;
  /**
   * `GET` a chat's saved path: the newest one, the path to a message (`leaf`, a message id) or to
   * a node (`node`, a version's `leafNodeId`).
   */
  messages(chatId: string, at?: { readonly leaf?: string; readonly node?: string }): string;
  /** `GET` the chat's live reply to resume (204 when none). */
  stream(chatId: string): string;
  /** `POST` to stop the chat's live reply. */
  stop(chatId: string): string;
  /** `GET` the chat's change events (server-sent events). */
  events(chatId: string): string;
  /** `GET` the chat's context use and cost. */
  context(chatId: string): string;
}

/**
 * The routes of a chat contract served under `api` (`createChatHandler`'s `basePath`), as URLs a
 * `fetch` takes: relative when `api` is a path (`/api/chat`), absolute when it is a URL.
 *
 * @example
 * ```ts
 * const routes = chatRoutes('/api/chat');
 * routes.messages('chat-1', { node: 'n-7' }); // '/api/chat/chat-1/messages?node=n-7'
 * ```
 */
export function chatRoutes(api = '/api/chat'): ChatRoutes {
  const base = api.replace(/\/+$/, '');
  const chat = (chatId: string, rest: string): string => {
    if (typeof chatId !== 'string' || chatId === '') {
      throw new TypeError(
        `A chat route needs a chat id (a non-empty string), received ${JSON.stringify(chatId)}.`,
      );
    }
    return `${base}/${encodeURIComponent(chatId)}/${rest}`;
  };
  return {
    turn: base,
    messages(chatId, at = {}) {
      if (at.leaf !== undefined && at.node !== undefined) {
        throw new TypeError('A chat path is read to a leaf message or to a node, not both.');
      }
      const query =
        at.leaf !== undefined
          ? `?leaf=${encodeURIComponent(at.leaf)}`
          : at.node !== undefined
            ? `?node=${encodeURIComponent(at.node)}`
            : '';
      return chat(chatId, `messages${query}`);
    },
    stream: (chatId) => chat(chatId, 'stream'),
    stop: (chatId) => chat(chatId, 'stop'),
    events: (chatId) => chat(chatId, 'events'),
    context: (chatId) => chat(chatId, 'context'),
  };
}
