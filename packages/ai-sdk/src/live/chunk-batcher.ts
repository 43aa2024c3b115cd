import { type JsonValue, LiveReplyLostError } from '@ctxgraph/fragments-core';
import type { LiveSettings } from './live-settings';

/** The most chunks one append carries: more queued than this are written at once. */
const MAX_BATCH = 64;

/** Every runtime the cycle targets has timers; the package's types name no runtime. */
const timers = globalThis as unknown as {
  setTimeout(callback: () => void, milliseconds: number): unknown;
  clearTimeout(handle: unknown): void;
};

/**
 * A live reply's writer: the chunks its client gets, appended to the store in batches (one write
 * per flush: `flushMs` after the first chunk of a batch, at once when {@link MAX_BATCH} are
 * queued), one write at a time and in order. The lease is renewed by the same writes, and by an
 * empty append when no chunk came for a third of it or when the chat's change feed announces a
 * change (a stop asked for by another process). A write that reports a stop (`'requested'`) or
 * finds the reply taken over or ended by another (`'lost'`) calls `onStop` once: the turn aborts
 * its model call.
 */
export class ChunkBatcher {
  readonly #settings: LiveSettings;
  readonly #key: { readonly chatId: string; readonly replyId: string; readonly owner: string };
  readonly #onStop: (why: 'requested' | 'lost') => void;
  #queue: JsonValue[] = [];
  #count: number;
  #writing: Promise<void> = Promise.resolve();
  #flushTimer: unknown;
  #renewTimer: unknown;
  #stopped = false;
  #lost: unknown;
  #failure: unknown;
  #closed = false;
  /** The last flush began. */
  #last = false;
  readonly #unwatch: () => void;

  constructor(
    settings: LiveSettings,
    key: { readonly chatId: string; readonly replyId: string; readonly owner: string },
    from: number,
    onStop: (why: 'requested' | 'lost') => void,
  ) {
    this.#settings = settings;
    this.#key = key;
    this.#count = from;
    this.#onStop = onStop;
    this.#scheduleRenewal();
    // A stop asked for elsewhere shows in the chat's feed: an empty append then reads it at once.
    this.#unwatch = settings.store.watchChat(key.chatId, (change) => {
      if (change.type === 'chat' && !this.#closed && !this.#stopped) void this.#write(true);
    });
  }

  /** Queues a chunk (the client gets it at the same time). */
  push(chunk: JsonValue): void {
    if (this.#closed) return;
    this.#queue.push(chunk);
    if (this.#queue.length >= MAX_BATCH) {
      void this.#write();
      return;
    }
    if (this.#flushTimer === undefined) {
      this.#flushTimer = timers.setTimeout(() => {
        this.#flushTimer = undefined;
        void this.#write();
      }, this.#settings.flushMs);
    }
  }

  /**
   * The reply's last write: everything queued, after the writes under way; no renewal is written
   * after it (the save that follows ends the record). Rejects when the reply was lost (taken
   * over, or ended by another): the final save would be refused the same way.
   */
  async flush(): Promise<void> {
    this.#last = true;
    await this.#write();
    if (this.#lost !== undefined) throw this.#lost;
    if (this.#queue.length > 0) throw this.#failure;
  }

  /** Stops the timers (the reply was saved or dropped); queued chunks are not written. */
  close(): void {
    this.#closed = true;
    this.#unwatch();
    this.#clearTimers();
  }

  #clearTimers(): void {
    if (this.#flushTimer !== undefined) timers.clearTimeout(this.#flushTimer);
    if (this.#renewTimer !== undefined) timers.clearTimeout(this.#renewTimer);
    this.#flushTimer = undefined;
    this.#renewTimer = undefined;
  }

  #scheduleRenewal(): void {
    if (this.#closed) return;
    if (this.#renewTimer !== undefined) timers.clearTimeout(this.#renewTimer);
    this.#renewTimer = timers.setTimeout(
      () => {
        this.#renewTimer = undefined;
        void this.#write(true);
      },
      Math.max(1, Math.floor(this.#settings.leaseMs / 3)),
    );
  }

  /** One append of what is queued (or an empty one that renews the lease), after the last. */
  #write(renew = false): Promise<void> {
    const next = this.#writing.then(async () => {
      if (this.#lost !== undefined || this.#closed) return;
      const chunks = this.#queue.splice(0, this.#queue.length);
      // Once the last flush began, the reply's save ends its record: a renewal (a feed notice's,
      // a timer's) queued behind it would only race that save.
      if (chunks.length === 0 && (!renew || this.#last)) return;
      if (this.#flushTimer !== undefined && this.#queue.length === 0) {
        timers.clearTimeout(this.#flushTimer);
        this.#flushTimer = undefined;
      }
      try {
        const result = await this.#settings.store.appendReplyChunks({
          ...this.#key,
          from: this.#count,
          chunks,
          leaseMs: this.#settings.leaseMs,
        });
        this.#count = result.chunkCount;
        if (result.stopRequested) this.#stop('requested');
      } catch (error) {
        if (LiveReplyLostError.isInstance(error)) {
          this.#lost = error;
          this.#stop('lost');
        } else {
          // Written by no one: the next write (or the final flush) tries them again.
          this.#queue.unshift(...chunks);
          this.#failure = error;
        }
      } finally {
        this.#scheduleRenewal();
      }
    });
    this.#writing = next;
    return next;
  }

  #stop(why: 'requested' | 'lost'): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#onStop(why);
  }
}
