// The chat contract's reads and commands over `fetch`: what a page calls besides the AI SDK's
// own transport (which posts the turns and resumes the streams).
import type { UIMessage } from 'ai';
import { type ChatRoutes, chatRoutes } from './chat-routes';
import {
  type ChatEventsFollower,
  type FollowChatEventsOptions,
  followChatEvents,
} from './follow-chat-events';
import { readSavedChat, type SavedChat } from './saved-chat';

/** A `fetch` (the platform's, or one that adds what the app needs: a token, a test handler). */
export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

/** Options of {@link createChatClient}. */
export interface ChatClientOptions {
  /**
   * The base path of the chat routes (`createChatHandler`'s `basePath`), or its absolute URL.
   * @default '/api/chat'
   */
  readonly api?: string;
  /**
   * The `fetch` every request goes through.
   * @default globalThis.fetch
   */
  readonly fetch?: FetchFunction;
  /** Headers sent with every request (an authorization header, …). */
  readonly headers?: Record<string, string>;
}

/** A failed chat request: the server answered something other than what the route promises. */
export class ChatClientError extends Error {
  override readonly name = 'ChatClientError';
  /** The HTTP status the server answered. */
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** Where to read a chat's path: the newest one, to a message, or to a node. */
export type ChatPathAt = { readonly leaf?: string; readonly node?: string };

/** The reads and commands of one chat contract. See {@link createChatClient}. */
export interface ChatClient {
  /** The contract's URLs. */
  readonly routes: ChatRoutes;
  /** The `fetch` the client uses, with its headers (hand it to the AI SDK's transport). */
  readonly fetch: FetchFunction;
  /**
   * The saved path of a chat (the newest, or `at` a message or node), or null when the server
   * does not know the chat (404): a new chat, which its first turn creates.
   */
  loadChat<UI_MESSAGE extends UIMessage = UIMessage>(
    chatId: string,
    at?: ChatPathAt,
  ): Promise<SavedChat<UI_MESSAGE> | null>;
  /**
   * The conversation of one version of a message: the path to its `leafNodeId` (from
   * `SavedChat.versions`). Throws when the chat or the node is unknown.
   */
  openVersion<UI_MESSAGE extends UIMessage = UIMessage>(
    chatId: string,
    leafNodeId: string,
  ): Promise<SavedChat<UI_MESSAGE>>;
  /**
   * Stops the chat's live reply wherever it is generated (only `messageId` when given) and
   * resolves once the server has saved it: the stopped reply's id, or null when nothing was live.
   */
  stop(chatId: string, messageId?: string): Promise<string | null>;
  /**
   * Whether the chat has a live reply now, from its events' first answer (a page that loads
   * while another tab's reply streams resumes it). False for an unknown chat.
   */
  liveReply(chatId: string): Promise<{ messageId: string; follows: string | null } | null>;
  /** The chat's context use and cost (`GET …/context`), as the server shapes it. */
  readContext(chatId: string): Promise<unknown>;
  /** Follows the chat's change events until `signal` aborts. See {@link followChatEvents}. */
  followEvents(
    chatId: string,
    options: Omit<FollowChatEventsOptions, 'url' | 'fetch'>,
  ): ChatEventsFollower;
}

/** The server's `{ error }` words of a failed answer, or its text. */
async function failure(response: Response, what: string): Promise<ChatClientError> {
  const text = await response.text().catch(() => '');
  let said = text;
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof error === 'string') said = error;
  } catch {
    // Not JSON: the text as it came.
  }
  return new ChatClientError(
    `${what} failed: the server answered ${response.status}${said === '' ? '' : ` (${said})`}.`,
    response.status,
  );
}

/**
 * The chat contract's reads and commands (`createChatHandler` of `@ctxgraph/ai-sdk` serves
 * them), framework free: a React, Vue or Svelte binding builds on it.
 *
 * @example
 * ```ts
 * const client = createChatClient({ api: '/api/chat' });
 * const saved = await client.loadChat('chat-1'); // null: a new chat
 * ```
 */
export function createChatClient(options: ChatClientOptions = {}): ChatClient {
  const routes = chatRoutes(options.api);
  const base = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const extra = options.headers;
  const send: FetchFunction =
    extra === undefined
      ? base
      : (input, init = {}) => {
          const headers = new Headers(init.headers);
          for (const [name, value] of Object.entries(extra)) {
            if (!headers.has(name)) headers.set(name, value);
          }
          return base(input, { ...init, headers });
        };
  const readPath = async <UI_MESSAGE extends UIMessage>(
    chatId: string,
    at: ChatPathAt,
  ): Promise<SavedChat<UI_MESSAGE> | null> => {
    const response = await send(routes.messages(chatId, at), {
      headers: { accept: 'application/json' },
    });
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) throw await failure(response, `Reading chat ${JSON.stringify(chatId)}`);
    return readSavedChat<UI_MESSAGE>(await response.json());
  };
  const client: ChatClient = {
    routes,
    fetch: send,
    loadChat: (chatId, at = {}) => readPath(chatId, at),
    async openVersion<UI_MESSAGE extends UIMessage>(chatId: string, leafNodeId: string) {
      const saved = await readPath<UI_MESSAGE>(chatId, { node: leafNodeId });
      if (saved === null) {
        throw new ChatClientError(
          `Opening a version failed: chat ${JSON.stringify(chatId)} has no node ${JSON.stringify(leafNodeId)} (404).`,
          404,
        );
      }
      return saved;
    },
    async stop(chatId, messageId) {
      const response = await send(routes.stop(chatId), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: messageId === undefined ? '' : JSON.stringify({ messageId }),
      });
      if (response.status === 204) return null;
      if (!response.ok) throw await failure(response, `Stopping chat ${JSON.stringify(chatId)}`);
      const answer = (await response.json()) as { messageId?: unknown };
      return typeof answer.messageId === 'string' ? answer.messageId : null;
    },
    liveReply(chatId) {
      const controller = new AbortController();
      return new Promise((resolve, reject) => {
        followChatEvents({
          url: routes.events(chatId),
          fetch: send,
          signal: controller.signal,
          retry: false,
          onEvent(event) {
            controller.abort();
            resolve(event.live === null ? null : { messageId: event.live, follows: event.follows });
          },
          onEnd(error) {
            if (error === undefined) resolve(null);
            else reject(error);
          },
        });
      });
    },
    async readContext(chatId) {
      const response = await send(routes.context(chatId), {
        headers: { accept: 'application/json' },
      });
      if (!response.ok) {
        throw await failure(response, `Reading the context of chat ${JSON.stringify(chatId)}`);
      }
      return (await response.json()) as unknown;
    },
    followEvents: (chatId, follow) =>
      followChatEvents({ ...follow, url: routes.events(chatId), fetch: send }),
  };
  return client;
}
