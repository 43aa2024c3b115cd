import type { ChatChange, ChatChangeListener } from '@ctxgraph/fragments-core';
import { ChatWatchers } from '@ctxgraph/fragments-core/store-kit';
import type { DurableObjectStorageLike } from './sql-storage';

// The change feed of `DurableObjectContextStore` (`watchChat`). A Durable Object is its storage's
// one writer: every write to its SQLite database runs in the object, on its thread, through a
// store over `ctx.storage`. So the feed needs no poll and no listener: each write announces
// itself once its `transactionSync` has committed, to the watchers of every store open over the
// same storage (a store reopened in the object, as a restarted object would open it, hears the
// writes of the first one and the other way round). A store that nobody watches does nothing
// more per write than a lookup in an empty set. No timer runs, ever.

/** The feeds of the stores open over each storage, so a write reaches the watchers of all. */
const feedsByStorage = new WeakMap<DurableObjectStorageLike, Set<ChatWatchers>>();

/** A listener of every chat's writes in one object (see {@link watchObjectChats}). */
export type ObjectChatsListener = (chatId: string) => void;

/** The listeners of every chat's writes, per storage. */
const objectListeners = new WeakMap<DurableObjectStorageLike, Set<ObjectChatsListener>>();

function listenersOf(storage: DurableObjectStorageLike): Set<ObjectChatsListener> {
  let listeners = objectListeners.get(storage);
  if (listeners === undefined) {
    listeners = new Set();
    objectListeners.set(storage, listeners);
  }
  return listeners;
}

/**
 * Calls `listener` with the chat id after every committed write to any chat of the object (the
 * `'chat'` notices of every store over `storage`; chunk appends are not chat changes), in the
 * same turn as the write; returns the unsubscribe function. What keeps a user's chat list
 * current (`ChatListPublisher`) listens here.
 */
export function watchObjectChats(
  storage: DurableObjectStorageLike,
  listener: ObjectChatsListener,
): () => void {
  const listeners = listenersOf(storage);
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** The watchers of one store, and the peers (stores over the same storage) its writes reach. */
export class ObjectChangeFeed {
  readonly #watchers: ChatWatchers;
  readonly #peers: Set<ChatWatchers>;
  readonly #objectListeners: Set<ObjectChatsListener>;

  /** The feed of a store over `storage`: its writes reach every store open over it. */
  constructor(storage: DurableObjectStorageLike) {
    this.#watchers = new ChatWatchers();
    let peers = feedsByStorage.get(storage);
    if (peers === undefined) {
      peers = new Set();
      feedsByStorage.set(storage, peers);
    }
    peers.add(this.#watchers);
    this.#peers = peers;
    this.#objectListeners = listenersOf(storage);
  }

  /**
   * Subscribes `listener` to the chat's notices; returns the unsubscribe function. The first
   * notice comes in a microtask, once the caller holds the unsubscribe function (it reaches the
   * chat's other watchers of this store too: a notice may come without a change).
   */
  watch(chatId: string, listener: ChatChangeListener): () => void {
    const unsubscribe = this.#watchers.watch(chatId, listener);
    queueMicrotask(() => this.#watchers.emit({ type: 'chat', chatId }));
    return unsubscribe;
  }

  /** A write to the chat committed: a `'chat'` notice to its watchers on every store. */
  changed(chatId: string): void {
    this.#emit({ type: 'chat', chatId });
    for (const listener of this.#objectListeners) listener(chatId);
  }

  /** Chunks were appended to a live reply: a `'chunks'` notice with its count after them. */
  appended(chatId: string, replyId: string, chunkCount: number): void {
    this.#emit({ type: 'chunks', chatId, replyId, chunkCount });
  }

  /** Forgets every watcher of this store, and stops hearing the other stores' writes. */
  close(): void {
    this.#watchers.close();
    this.#peers.delete(this.#watchers);
  }

  #emit(change: ChatChange): void {
    for (const watchers of this.#peers) {
      if (watchers.watches(change.chatId)) watchers.emit(change);
    }
  }
}
