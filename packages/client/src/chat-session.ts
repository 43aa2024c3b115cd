// One chat as a page shows it, framework free: the saved path it reads (node ids, versions,
// outcomes), the version shown (for the URL), and the work around the AI SDK's chat that no
// hook should redo: load, resume, follow the events of other tabs, stop through the server,
// switch version. A binding (React's `useCtxgraphChat`, a Vue or Svelte one) hands it the AI
// SDK chat it runs as a `ChatDriver` and renders its snapshot.
import type { ChatStatus, HttpChatTransportInitOptions, UIMessage } from 'ai';
import type { ChatClient, ChatPathAt } from './chat-client';
import type { ChatEventsFollower, RetryOptions } from './follow-chat-events';
import { prepareLastMessageRequest } from './last-message-request';
import type { ChatEvent, SavedChat, SavedVersions } from './saved-chat';

/** The AI SDK chat a session drives (what `useChat` returns, or a `Chat` instance gives). */
export interface ChatDriver<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat's status now. */
  status(): ChatStatus;
  /** The chat's messages now. */
  messages(): readonly UI_MESSAGE[];
  /** Replaces the chat's messages. */
  setMessages(messages: UI_MESSAGE[]): void;
  /** Resumes the chat's live reply (`GET …/stream`; nothing when none is live). */
  resumeStream(): Promise<void>;
  /** Stops reading the reply's stream (the client side of a stop). */
  stop(): Promise<void>;
}

/** What a page shows of a session. A new object after every change. */
export interface ChatSessionSnapshot<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat. */
  readonly chatId: string;
  /** False until the first read of the saved chat ended. */
  readonly loaded: boolean;
  /** The server does not know the chat yet: its first turn creates it. */
  readonly isNew: boolean;
  /** The last saved path read (empty for a new chat). */
  readonly saved: SavedChat<UI_MESSAGE>;
  /**
   * The node the shown path leads to when the user chose a version (keep it in the URL so a
   * reload shows the same one), or null for the chat's newest path.
   */
  readonly node: string | null;
  /** A stop was asked and the stopped reply is not read back yet. */
  readonly stopping: boolean;
  /** The last failure of a read or a stop, cleared by the next success. */
  readonly error: Error | undefined;
}

/** Options of {@link createChatSession}. */
export interface ChatSessionOptions {
  /** The contract's client (`createChatClient`). */
  readonly client: ChatClient;
  /** The chat. */
  readonly chatId: string;
  /** The node to show first (from the URL), or null / undefined for the newest path. */
  readonly node?: string | null;
  /** Told when the node shown changes (a version chosen, a turn on it): keep it in the URL. */
  readonly onNodeChange?: (node: string | null) => void;
  /**
   * How the events follower waits before connecting again (a dropped connection, a chat not
   * created yet). It connects at once when the page's own first turn created the chat.
   * @default { initialMs: 1000, maxMs: 15000 }
   */
  readonly retry?: RetryOptions;
}

/** One chat as a page shows it. See {@link createChatSession}. */
export interface ChatSession<UI_MESSAGE extends UIMessage = UIMessage> {
  /** Calls `listener` after every change of the snapshot; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** The snapshot now (the same object until something changed: `useSyncExternalStore` ready). */
  getSnapshot(): ChatSessionSnapshot<UI_MESSAGE>;
  /**
   * Loads the saved chat into `driver` (the node named, else the newest path; a node the chat
   * does not have falls back to the newest path), resumes a live reply, then follows the chat's
   * events: another tab's turn is read and its live reply resumed. Returns what ends it all.
   */
  start(driver: ChatDriver<UI_MESSAGE>): () => void;
  /**
   * Tell the session the driver's status or messages changed (a binding calls it on each
   * change): a reply of its own is not followed twice, and once a turn ends the saved path is
   * read again (its node ids place the next message, its versions are current).
   */
  driverChanged(): void;
  /** Call before the binding's own turn (send, edit, regenerate): reads started before are stale. */
  beginTurn(): void;
  /** The versions of a message, when it has more than one. */
  versionsOf(messageId: string): SavedVersions | undefined;
  /** Shows version `index` (0-based) of a message: its conversation, and its node for the URL. */
  selectVersion(messageId: string, index: number): Promise<void>;
  /** Stops the live reply through the server, then shows it as saved (marked as stopped). */
  stop(): Promise<void>;
  /** The chat's context use and cost (`GET …/context`), as the server shapes it. */
  readContext(): Promise<unknown>;
  /** The `DefaultChatTransport` options: the contract's routes, and the last-message body. */
  transportOptions(): Pick<
    HttpChatTransportInitOptions<UI_MESSAGE>,
    'api' | 'fetch' | 'prepareSendMessagesRequest' | 'prepareReconnectToStreamRequest'
  >;
}

const busy = (status: ChatStatus): boolean => status === 'submitted' || status === 'streaming';

const emptyChat = <UI_MESSAGE extends UIMessage>(): SavedChat<UI_MESSAGE> => ({
  messages: [],
  outcomes: {},
  nodeIds: {},
  versions: {},
});

const asError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));

/**
 * One chat as a page shows it (see the module's header), as a store: `subscribe` and
 * `getSnapshot` for `useSyncExternalStore` or any signal library.
 *
 * @example
 * ```ts
 * const session = createChatSession({ client: createChatClient(), chatId: 'chat-1' });
 * const end = session.start(driver); // driver: the AI SDK chat the page runs
 * ```
 */
export function createChatSession<UI_MESSAGE extends UIMessage = UIMessage>(
  options: ChatSessionOptions,
): ChatSession<UI_MESSAGE> {
  const { client, chatId } = options;
  const listeners = new Set<() => void>();
  let snapshot: ChatSessionSnapshot<UI_MESSAGE> = {
    chatId,
    loaded: false,
    isNew: false,
    saved: emptyChat(),
    node: options.node ?? null,
    stopping: false,
    error: undefined,
  };
  const update = (change: Partial<ChatSessionSnapshot<UI_MESSAGE>>): void => {
    snapshot = { ...snapshot, ...change };
    for (const listener of [...listeners]) listener();
  };
  let driver: ChatDriver<UI_MESSAGE> | undefined;
  let ended = false;
  /** Counts the starts: a start that was ended (React's strict mode starts twice) stops early. */
  let runs = 0;
  /** Moves on with every read and every turn: a read applies only if nothing started after it. */
  let generation = 0;
  /** Replies this page streamed or resumed: an event about one of them is no news. */
  const followed = new Set<string>();
  /** The newest event, and the newest revision a read started after. */
  let latest: ChatEvent | null = null;
  let readRevision = -1;
  /** The last message a turn's path was read back to (once per message). */
  let readBack: string | undefined;
  /** The chat was busy when last told of a change. */
  let streaming = false;
  /**
   * A reply whose read-back is under way, or found it not saved yet: the next refresh reads the
   * path to it again (a refresh of the path shown would read the version the page showed before
   * the turn, and win over the read-back as the later read).
   */
  let pending: string | undefined;
  let stopping = false;
  /** The events follower of the current start. */
  let follower: ChatEventsFollower | undefined;
  /** Resolved when the driver is idle again (a stop waits for its stream to end). */
  let idleWaiters: (() => void)[] = [];

  /**
   * Reads the path `at` and shows it, unless a turn or another read started meanwhile (or the
   * chat streams, unless `force`). `node`: the node shown once it is read (undefined: unchanged),
   * set in the same change as the path.
   */
  const show = async (
    at: ChatPathAt,
    how: {
      readonly force?: boolean;
      readonly node?: (saved: SavedChat<UI_MESSAGE>) => string | null | undefined;
    } = {},
  ): Promise<SavedChat<UI_MESSAGE> | null | undefined> => {
    generation += 1;
    const mine = generation;
    readRevision = Math.max(readRevision, latest?.version ?? -1);
    const saved = await client.loadChat<UI_MESSAGE>(chatId, at);
    if (ended || mine !== generation || driver === undefined) return undefined;
    if (how.force !== true && busy(driver.status())) return undefined;
    if (saved !== null) {
      driver.setMessages(saved.messages);
      const node = how.node?.(saved);
      const moved = node !== undefined && node !== snapshot.node;
      const created = snapshot.loaded && snapshot.isNew;
      update({ saved, isNew: false, error: undefined, ...(moved ? { node } : {}) });
      if (moved) options.onNodeChange?.(node);
      // The chat exists now (its first turn): its events can be followed without the wait.
      if (created) follower?.retryNow();
    }
    return saved;
  };

  const report = (error: unknown): void => {
    if (!ended) update({ error: asError(error) });
  };

  /** The path the page shows now, for a read that refreshes it. */
  const shownPath = (): ChatPathAt => (snapshot.node === null ? {} : { node: snapshot.node });

  /**
   * Reads the path to a reply that ended (its nodes and versions). The client can hear a reply's
   * end before the server has saved it (a 404 then): the chat's next event, the save's, reads
   * it again.
   */
  const readBackTo = (replyId: string): void => {
    pending = replyId;
    void show(
      { leaf: replyId },
      {
        // On a chosen version, the URL follows the turn to its new leaf.
        node: (saved) =>
          snapshot.node === null ? undefined : (saved.nodeIds[replyId] ?? snapshot.node),
      },
    )
      .then((saved) => {
        if (saved === undefined) return;
        if (saved !== null && pending === replyId) pending = undefined;
        if (saved !== null) catchUp();
      })
      .catch(report);
  };

  /** Brings the page up to the newest event while it streams nothing itself. */
  const catchUp = (): void => {
    if (ended || driver === undefined || latest === null) return;
    if (busy(driver.status()) || stopping) return;
    const event = latest;
    const live = event.live;
    // A reply the page shows already is one it streamed (its own turn, or one it resumed).
    if (live !== null && !followed.has(live) && !driver.messages().some((m) => m.id === live)) {
      const reply = live;
      followed.add(reply);
      void (async () => {
        // The question the reply answers (saved before the reply), then the reply's stream.
        const at: ChatPathAt = event.follows === null ? {} : { leaf: event.follows };
        const saved = await show(at, { node: () => null });
        if (saved === undefined || driver === undefined) return;
        await driver.resumeStream();
      })().catch((error: unknown) => {
        followed.delete(reply);
        report(error);
      });
      return;
    }
    if (pending !== undefined) {
      readBackTo(pending);
      return;
    }
    if (event.version <= readRevision) return;
    void show(shownPath()).catch(report);
  };

  const session: ChatSession<UI_MESSAGE> = {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    getSnapshot: () => snapshot,
    start(chat) {
      driver = chat;
      ended = false;
      runs += 1;
      const run = runs;
      const over = (): boolean => ended || run !== runs;
      const controller = new AbortController();
      void (async () => {
        let saved: SavedChat<UI_MESSAGE> | null | undefined;
        const named = snapshot.node;
        try {
          saved = await show(named === null ? {} : { node: named });
          // A node the chat does not have (an old link): the newest path.
          if (saved === null && named !== null) {
            saved = await show({}, { node: () => null });
          }
        } catch (error) {
          report(error);
        }
        if (over()) return;
        update({ loaded: true, isNew: saved === null });
        if (saved !== undefined && saved !== null) {
          try {
            await chat.resumeStream();
          } catch (error) {
            report(error);
          }
        }
        if (over()) return;
        follower = client.followEvents(chatId, {
          signal: controller.signal,
          ...(options.retry === undefined ? {} : { retry: options.retry }),
          onEvent(event) {
            latest = event;
            catchUp();
          },
        });
      })();
      return () => {
        controller.abort();
        if (run !== runs) return;
        ended = true;
        driver = undefined;
      };
    },
    driverChanged() {
      if (driver === undefined) return;
      const status = driver.status();
      const last = driver.messages().at(-1);
      if (status === 'streaming' && last?.role === 'assistant') followed.add(last.id);
      const wasBusy = streaming;
      streaming = busy(status);
      if (streaming) return;
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
      if (status === 'error' && last?.role === 'assistant') followed.delete(last.id);
      if (stopping || !snapshot.loaded) return;
      // A turn ended when the chat shows a last reply the saved path does not end with: read
      // the path to it (the new messages' nodes and versions). Told of the change or not while
      // it streamed (a binding may hear only the end), the session reads it back once. Only a
      // reply: a question the chat just pushed is about to be sent (the chat is still `ready`
      // for a moment), and a read would put the saved path over it.
      if (
        last?.role === 'assistant' &&
        snapshot.saved.messages.at(-1)?.id !== last.id &&
        readBack !== last.id
      ) {
        readBack = last.id;
        readBackTo(last.id);
        return;
      }
      // What the events said while the chat streamed.
      if (wasBusy) catchUp();
    },
    beginTurn() {
      generation += 1;
      pending = undefined;
    },
    versionsOf: (messageId) => snapshot.saved.versions[messageId],
    async selectVersion(messageId, index) {
      const versions = snapshot.saved.versions[messageId];
      const target = versions?.nodes[index];
      if (versions === undefined || target === undefined) {
        throw new RangeError(
          `Message ${JSON.stringify(messageId)} has no version ${index} (it has ${versions?.nodes.length ?? 1}).`,
        );
      }
      // The user's choice wins over a turn's read-back still under way.
      pending = undefined;
      const saved = await show({ node: target.leafNodeId }, { node: () => target.leafNodeId });
      if (saved === null) {
        throw new Error(
          `Version ${index + 1} of message ${JSON.stringify(messageId)} is gone from chat ${JSON.stringify(chatId)}.`,
        );
      }
    },
    async stop() {
      if (driver === undefined || stopping) return;
      const chat = driver;
      const last = chat.messages().at(-1);
      const reply = busy(chat.status()) && last?.role === 'assistant' ? last.id : undefined;
      stopping = true;
      update({ stopping: true });
      try {
        const stopped = await client.stop(chatId, reply);
        // The reply is saved: what of its stream is still on the way adds nothing.
        await chat.stop();
        if (busy(chat.status())) {
          await new Promise<void>((resolve) => idleWaiters.push(resolve));
        }
        const leaf = stopped ?? reply;
        const saved = await show(leaf === undefined ? shownPath() : { leaf }, { force: true });
        if (saved === null && leaf !== undefined) await show(shownPath(), { force: true });
      } catch (error) {
        report(error);
      } finally {
        stopping = false;
        if (!ended) update({ stopping: false });
      }
    },
    readContext: () => client.readContext(chatId),
    transportOptions() {
      return {
        api: client.routes.turn,
        fetch: client.fetch as typeof globalThis.fetch,
        prepareSendMessagesRequest: prepareLastMessageRequest<UI_MESSAGE>(
          (messageId) => snapshot.saved.nodeIds[messageId],
        ),
        prepareReconnectToStreamRequest: ({ id }) => ({ api: client.routes.stream(id) }),
      };
    },
  };
  return session;
}
