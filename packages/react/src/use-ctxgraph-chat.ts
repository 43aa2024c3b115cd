// `useChat` of the AI SDK bound to a ctxgraph chat: the work around it (load, versions, the URL,
// stop, resume, other tabs, the last-message body) is the framework-free session of
// `@ctxgraph/client`; this hook only wires it to React.
import { Chat, type UseChatHelpers, useChat } from '@ai-sdk/react';
import {
  type ChatSessionSnapshot,
  createChatClient,
  createChatSession,
  type FetchFunction,
  type ReplyOutcome,
} from '@ctxgraph/client';
import { type ChatInit, DefaultChatTransport, type UIMessage } from 'ai';
import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from 'react';

/** The versions of one message, for a "2 / 3" switch. */
export interface MessageVersions {
  /** The 0-based position of the version shown. */
  readonly index: number;
  /** How many versions the message has (always more than one). */
  readonly count: number;
  /** Shows version `index` (0-based): its conversation; the URL follows (`onNodeChange`). */
  select(index: number): Promise<void>;
}

/** Options of {@link useCtxgraphChat}: the AI SDK chat's own, and where the chat lives. */
export interface UseCtxgraphChatOptions<UI_MESSAGE extends UIMessage = UIMessage>
  extends Omit<ChatInit<UI_MESSAGE>, 'id' | 'messages' | 'transport'> {
  /** The chat's id (a new id starts a new chat). */
  readonly id: string;
  /**
   * The base path of the chat routes (`createChatHandler`'s `basePath`), or its URL.
   * @default '/api/chat'
   */
  readonly api?: string;
  /**
   * The `fetch` of every request (turns, reads, stop, events).
   * @default globalThis.fetch
   */
  readonly fetch?: FetchFunction;
  /** Headers sent with every request. */
  readonly headers?: Record<string, string>;
  /**
   * The node of the version to show (kept in the URL, see `readNodeFromUrl`), or null / undefined
   * for the newest path. Read when the chat opens.
   */
  readonly node?: string | null;
  /** Told when the node shown changes (a version chosen, a turn on it): keep it in the URL. */
  readonly onNodeChange?: (node: string | null) => void;
}

/** What {@link useCtxgraphChat} returns: `useChat`'s helpers, and the saved chat's. */
export interface UseCtxgraphChatHelpers<UI_MESSAGE extends UIMessage = UIMessage>
  extends Omit<UseChatHelpers<UI_MESSAGE>, 'stop'> {
  /** False until the saved chat was read (show a placeholder until then). */
  readonly loaded: boolean;
  /** The server does not know the chat yet: its first message creates it. */
  readonly isNew: boolean;
  /** The versions of a message, or undefined when it has only one. */
  versionsOf(messageId: string): MessageVersions | undefined;
  /** How each stopped or interrupted reply ended, by message id. */
  readonly outcomes: Readonly<Record<string, ReplyOutcome>>;
  /** The node of the version shown (for the URL), or null for the newest path. */
  readonly node: string | null;
  /**
   * Stops the live reply through the server (wherever it runs) and shows it as saved, marked
   * `aborted` in `outcomes`.
   */
  stop(): Promise<void>;
  /** A stop is under way. */
  readonly stopping: boolean;
  /** The chat's context use and cost (`GET …/context`), as the server shapes it. */
  readContext(): Promise<unknown>;
  /** The last failure of a read or a stop (a turn's own failure is `error`). */
  readonly syncError: Error | undefined;
}

/** The chat's callbacks, called through a ref so the latest render's are used. */
const CALLBACKS = ['onError', 'onToolCall', 'onFinish', 'onData', 'sendAutomaticallyWhen'] as const;

/**
 * `useChat` for a chat saved by ctxgraph (`createChatHandler` on the server): loads the saved
 * chat (a 404 is a new chat), shows the version the URL names (`node`), exposes each message's
 * versions (`versionsOf(id)`: index, count, `select(k)`), stops through the server, resumes a
 * live reply when it opens, follows the chat's events so a second tab stays current, and posts
 * only the new message with the node it follows. Edit a message with
 * `sendMessage({ text, messageId })`, regenerate a reply with `regenerate({ messageId })`.
 *
 * @example
 * ```tsx
 * const chat = useCtxgraphChat<MyUIMessage>({
 *   id: chatId,
 *   node: readNodeFromUrl(),
 *   onNodeChange: writeNodeToUrl,
 * });
 * ```
 */
export function useCtxgraphChat<UI_MESSAGE extends UIMessage = UIMessage>(
  options: UseCtxgraphChatOptions<UI_MESSAGE>,
): UseCtxgraphChatHelpers<UI_MESSAGE> {
  const latest = useRef(options);
  latest.current = options;
  const { id, api } = options;
  const session = useMemo(
    () =>
      createChatSession<UI_MESSAGE>({
        client: createChatClient({
          ...(api === undefined ? {} : { api }),
          // The latest render's fetch and headers, so neither needs to be stable.
          fetch: (input, init = {}) => {
            const headers = new Headers(init.headers);
            for (const [name, value] of Object.entries(latest.current.headers ?? {})) {
              if (!headers.has(name)) headers.set(name, value);
            }
            return (latest.current.fetch ?? globalThis.fetch)(input, { ...init, headers });
          },
        }),
        chatId: id,
        node: latest.current.node ?? null,
        onNodeChange: (node) => latest.current.onNodeChange?.(node),
      }),
    [id, api],
  );
  const chat = useMemo(() => {
    const {
      fetch: _fetch,
      headers: _headers,
      node: _node,
      onNodeChange: _on,
      api: _api,
      ...init
    } = latest.current;
    const callbacks: Partial<ChatInit<UI_MESSAGE>> = {};
    for (const name of CALLBACKS) {
      if (init[name] === undefined) continue;
      (callbacks as Record<string, (...args: unknown[]) => unknown>)[name] = (...args) =>
        (latest.current[name] as ((...rest: unknown[]) => unknown) | undefined)?.(...args);
    }
    return new Chat<UI_MESSAGE>({
      ...init,
      ...callbacks,
      id: session.getSnapshot().chatId,
      transport: new DefaultChatTransport<UI_MESSAGE>(session.transportOptions()),
    });
  }, [session]);
  const helpers = useChat<UI_MESSAGE>({ chat });
  const snapshot: ChatSessionSnapshot<UI_MESSAGE> = useSyncExternalStore(
    session.subscribe,
    session.getSnapshot,
    session.getSnapshot,
  );

  useEffect(
    () =>
      session.start({
        status: () => chat.status,
        messages: () => chat.messages,
        setMessages: (messages) => {
          chat.messages = messages;
        },
        resumeStream: () => chat.resumeStream(),
        stop: () => chat.stop(),
      }),
    [session, chat],
  );
  // The session reads the chat itself; it only needs to hear that something changed.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the changes are the trigger.
  useEffect(() => {
    session.driverChanged();
  }, [session, helpers.status, helpers.messages]);

  const { sendMessage, regenerate } = helpers;
  const send = useCallback<typeof sendMessage>(
    (...args) => {
      session.beginTurn();
      return sendMessage(...args);
    },
    [session, sendMessage],
  );
  const again = useCallback<typeof regenerate>(
    (...args) => {
      session.beginTurn();
      return regenerate(...args);
    },
    [session, regenerate],
  );
  const versions = snapshot.saved.versions;
  const versionsOf = useCallback(
    (messageId: string): MessageVersions | undefined => {
      const found = versions[messageId];
      if (found === undefined) return undefined;
      return {
        index: found.index,
        count: found.nodes.length,
        select: (index) => session.selectVersion(messageId, index),
      };
    },
    [session, versions],
  );
  return {
    ...helpers,
    sendMessage: send,
    regenerate: again,
    loaded: snapshot.loaded,
    isNew: snapshot.isNew,
    versionsOf,
    outcomes: snapshot.saved.outcomes,
    node: snapshot.node,
    stop: session.stop,
    stopping: snapshot.stopping,
    readContext: useCallback(() => session.readContext(), [session]),
    syncError: snapshot.error,
  };
}
