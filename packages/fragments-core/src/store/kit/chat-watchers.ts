import type { ChatChange, ChatChangeListener } from '../live-replies';
import type { Awaitable } from './context-store-driver';

// The in-process half of a store's change feed (`ContextStore.watchChat`): who watches which
// chat, fanned out from one source per store (a poll, a database listener), and a poll that
// turns "what the watched chats look like now" into notices. No timer of its own: a store gives
// the poll its timer functions, so the kit stays free of any runtime's API.

/** What delivers a store's notices: started with the first watcher, stopped with the last. */
export interface ChatWatchersSource {
  /** The first watcher of the store subscribed: start polling, listening, … */
  start(): void;
  /** The last watcher left, or the store closes: clear every timer, close every connection. */
  stop(): void;
  /** A chat got its first watcher (after `start()` for the first chat). */
  added?(chatId: string): void;
  /** A chat lost its last watcher (before `stop()` for the last chat). */
  removed?(chatId: string): void;
}

interface Subscription {
  readonly listener: ChatChangeListener;
}

/**
 * Rethrows an error a listener threw outside the feed, so the other listeners still get the
 * notice: as an unhandled rejection, which the runtime reports like any other (Node prints it
 * and, by default, exits), as it would an event handler's throw.
 */
function rethrowLater(error: unknown): void {
  void Promise.reject(error);
}

/** Options of {@link ChatWatchers}. */
export interface ChatWatchersOptions {
  /**
   * Called with an error a listener threw (the other listeners still get the notice).
   * @default rethrown asynchronously, as an unhandled rejection
   */
  readonly onListenerError?: (error: unknown) => void;
}

/**
 * The watchers of one store, by chat, and the source that feeds them. `watch` returns the
 * unsubscribe function; the source starts with the first watcher and stops with the last (and
 * with `close()`), so a store that nobody watches runs no timer and holds no connection.
 *
 * @example
 * ```ts
 * const watchers = new ChatWatchers({ start: () => poller.start(), stop: () => poller.stop() });
 * const unsubscribe = watchers.watch('chat-1', (change) => console.log(change));
 * watchers.emit({ type: 'chat', chatId: 'chat-1' });
 * ```
 */
export class ChatWatchers {
  readonly #byChat = new Map<string, Set<Subscription>>();
  readonly #source: ChatWatchersSource | undefined;
  readonly #onListenerError: (error: unknown) => void;
  #running = false;
  #closed = false;

  /** Watchers fed by `source` (or only by `emit`, without one). */
  constructor(source?: ChatWatchersSource, options: ChatWatchersOptions = {}) {
    this.#source = source;
    this.#onListenerError = options.onListenerError ?? rethrowLater;
  }

  /** True while at least one chat is watched. */
  get active(): boolean {
    return this.#byChat.size > 0;
  }

  /**
   * Subscribes `listener` to `chatId`'s notices; returns the function that unsubscribes it (safe
   * to call twice). After `close()` it subscribes nothing.
   */
  watch(chatId: string, listener: ChatChangeListener): () => void {
    if (this.#closed) return () => {};
    const subscription: Subscription = { listener };
    let subscriptions = this.#byChat.get(chatId);
    const first = subscriptions === undefined;
    if (subscriptions === undefined) {
      subscriptions = new Set();
      this.#byChat.set(chatId, subscriptions);
    }
    subscriptions.add(subscription);
    if (!this.#running) {
      this.#running = true;
      this.#source?.start();
    }
    if (first) this.#source?.added?.(chatId);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#unsubscribe(chatId, subscription);
    };
  }

  /** The chats watched now. */
  chats(): string[] {
    return [...this.#byChat.keys()];
  }

  /** True when `chatId` has a watcher. */
  watches(chatId: string): boolean {
    return this.#byChat.has(chatId);
  }

  /**
   * Delivers a notice to its chat's watchers, in subscription order. A listener that throws does
   * not keep the others from the notice; its error is rethrown asynchronously.
   */
  emit(change: ChatChange): void {
    const subscriptions = this.#byChat.get(change.chatId);
    if (subscriptions === undefined) return;
    for (const subscription of [...subscriptions]) {
      // A listener unsubscribed by an earlier one in this round gets nothing more.
      if (!subscriptions.has(subscription)) continue;
      try {
        subscription.listener(change);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** Stops the source and forgets every watcher; later `watch` calls subscribe nothing. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#byChat.clear();
    if (this.#running) {
      this.#running = false;
      this.#source?.stop();
    }
  }

  #unsubscribe(chatId: string, subscription: Subscription): void {
    const subscriptions = this.#byChat.get(chatId);
    if (subscriptions === undefined || !subscriptions.delete(subscription)) return;
    if (subscriptions.size > 0) return;
    this.#byChat.delete(chatId);
    this.#source?.removed?.(chatId);
    if (this.#byChat.size === 0 && this.#running) {
      this.#running = false;
      this.#source?.stop();
    }
  }
}

/** What a poll reads of one watched chat. */
export interface PolledChat {
  /**
   * Anything that changes whenever the chat does (its revision, its live-reply revision, its
   * `updatedAt`, joined): a different stamp is a `'chat'` notice.
   */
  readonly stamp: string;
  /** Each live reply's chunk count: a different count is a `'chunks'` notice. */
  readonly replies: readonly (readonly [replyId: string, chunkCount: number])[];
}

/** The timer functions a poll runs on (`globalThis.setTimeout` and `clearTimeout` do). */
export interface PollTimers {
  readonly setTimeout: (callback: () => void, milliseconds: number) => unknown;
  readonly clearTimeout: (handle: never) => void;
}

/** Options of {@link ChangePoller}. */
export interface ChangePollerOptions {
  /** The watchers the notices go to. */
  readonly watchers: ChatWatchers;
  /**
   * Reads the watched chats: what each looks like now, by chat id (a chat that does not exist is
   * left out). May answer undefined when it knows that nothing changed since its last read
   * (SQLite's `data_version`), unless `fresh` is true (a chat was added since).
   */
  readonly read: (
    chatIds: readonly string[],
    fresh: boolean,
  ) => Awaitable<ReadonlyMap<string, PolledChat> | undefined>;
  /** Milliseconds between the end of one read and the next. */
  readonly intervalMs: number;
  /** The timer functions (the runtime's). */
  readonly timers: PollTimers;
  /**
   * Send a `'chat'` notice on the first read of a newly watched chat (the feed's first notice),
   * as a store that learns of changes only by polling must. A store whose listener sends that
   * first notice (while it listens) says false, or gives a function asked at each first read.
   * @default true
   */
  readonly noticeFirstRead?: boolean | (() => boolean);
  /** A read failed; the poll goes on at the next interval. @default ignored */
  readonly onError?: (error: unknown) => void;
}

interface Seen {
  readonly stamp: string | null;
  readonly replies: ReadonlyMap<string, number>;
}

/**
 * A poll of the watched chats that turns differences into notices: a changed stamp (or a chat
 * that appeared or disappeared) is a `'chat'` notice, a changed chunk count a `'chunks'` notice.
 * One read at a time, the next `intervalMs` after the last ended; a newly watched chat is read
 * at once. Start and stop it as the watchers' source.
 */
export class ChangePoller {
  readonly #options: ChangePollerOptions;
  readonly #seen = new Map<string, Seen>();
  #timer: unknown;
  #running = false;
  #reading = false;
  #again = false;
  // Bumped by stop(): a read that was under way then is not compared.
  #generation = 0;

  constructor(options: ChangePollerOptions) {
    this.#options = options;
  }

  /** Starts polling: the first read at once. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(0);
  }

  /** Stops polling: clears the timer and forgets what it saw. */
  stop(): void {
    this.#running = false;
    this.#generation += 1;
    this.#clear();
    this.#seen.clear();
  }

  /** A chat got its first watcher: read soon, so its first notice is not an interval away. */
  added(_chatId: string): void {
    if (!this.#running) return;
    if (this.#reading) this.#again = true;
    else this.#schedule(0);
  }

  /**
   * True once a read of the chat has been compared (what it looked like then is the baseline of
   * its next notice). A store whose listener sends the first notices sends them only for these,
   * so no change can fall between a watcher's first read and the poll's baseline.
   */
  seen(chatId: string): boolean {
    return this.#seen.has(chatId);
  }

  /** A chat lost its last watcher: forget it. */
  removed(chatId: string): void {
    this.#seen.delete(chatId);
  }

  /**
   * Records what the store itself just wrote (a chunk count it already announced), so the next
   * read does not announce it again.
   */
  noteChunks(chatId: string, replyId: string, chunkCount: number): void {
    const seen = this.#seen.get(chatId);
    if (seen === undefined) return;
    const replies = new Map(seen.replies);
    replies.set(replyId, chunkCount);
    this.#seen.set(chatId, { stamp: seen.stamp, replies });
  }

  #clear(): void {
    if (this.#timer !== undefined) {
      this.#options.timers.clearTimeout(this.#timer as never);
      this.#timer = undefined;
    }
  }

  #schedule(milliseconds: number): void {
    this.#clear();
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#timer = undefined;
      void this.#tick();
    }, milliseconds);
  }

  async #tick(): Promise<void> {
    if (!this.#running) return;
    if (this.#reading) {
      // A read is out (one of a poll stopped and started again since, or a chat was added):
      // the next one follows it at once.
      this.#again = true;
      return;
    }
    const generation = this.#generation;
    const chatIds = this.#options.watchers.chats();
    const fresh = chatIds.some((chatId) => !this.#seen.has(chatId));
    this.#reading = true;
    this.#again = false;
    try {
      const found = chatIds.length === 0 ? new Map() : await this.#options.read(chatIds, fresh);
      if (generation === this.#generation && found !== undefined) this.#compare(chatIds, found);
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#reading = false;
    }
    if (!this.#running) return;
    // Stopped and started again while this read was out: its answer was not compared, so the
    // poll reads again at once (it used to stop here for good, and the new watchers got nothing).
    this.#schedule(this.#again || generation !== this.#generation ? 0 : this.#options.intervalMs);
  }

  #compare(chatIds: readonly string[], found: ReadonlyMap<string, PolledChat>): void {
    const { watchers } = this.#options;
    const option = this.#options.noticeFirstRead;
    const noticeFirstRead = typeof option === 'function' ? option() : option !== false;
    for (const chatId of chatIds) {
      // Unwatched while the read was under way.
      if (!watchers.watches(chatId)) continue;
      const now = found.get(chatId);
      const seen: Seen = {
        stamp: now?.stamp ?? null,
        replies: new Map(now?.replies ?? []),
      };
      const before = this.#seen.get(chatId);
      this.#seen.set(chatId, seen);
      if (before === undefined) {
        if (noticeFirstRead) watchers.emit({ type: 'chat', chatId });
        continue;
      }
      if (before.stamp !== seen.stamp) watchers.emit({ type: 'chat', chatId });
      for (const [replyId, chunkCount] of seen.replies) {
        if (before.replies.get(replyId) !== chunkCount && chunkCount > 0)
          watchers.emit({ type: 'chunks', chatId, replyId, chunkCount });
      }
    }
  }
}
