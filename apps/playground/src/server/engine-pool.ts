import { ContextEngine } from '@ctxgraph/engine';
import { ChatNotFoundError, type ContextStore, OwnershipError } from '@ctxgraph/fragments-core';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { rendererFor } from './renderers';

/** Options of {@link EnginePool}. */
export interface EnginePoolOptions {
  /**
   * The conversation store every engine works on. It must serve the context lane
   * (`capabilities.contextLane`): each engine loads the chat's context from it once, when made.
   */
  readonly store: ContextStore;
  /**
   * How many chats keep a warm engine. Past it, the least recently used idle chat is dropped
   * (a chat with a request under way is never dropped, so the pool can briefly hold more).
   * @default 200
   */
  readonly capacity?: number;
}

interface PoolEntry {
  /** The engine, made for the chat's owner, with the chat's context loaded. */
  readonly ready: Promise<{ engine: ContextEngine; ownerId: string }>;
  /** The end of the chat's queue of tasks: each task starts when the one before it settled. */
  tail: Promise<unknown>;
  /** Tasks queued or running; an entry with any is never evicted for room. */
  busy: number;
  /** Set when the chat was deleted or dropped: tasks still queued on it start over. */
  evicted: boolean;
}

const START_OVER: unique symbol = Symbol('start over');

/**
 * One `ContextEngine` per open chat, kept warm between requests: the engine caches the chat's
 * branch chain and holds its context, so a request on a chat it has seen reads only what changed
 * (the branch head, and new nodes when the head moved) instead of opening the chat again.
 *
 * `use()` is the only way in. It checks on every call that the chat exists and belongs to the
 * user (a chat's owner never changes, so the owner read when the engine was made is the one to
 * compare with), and runs the task under the chat's lock: tasks on one chat run one at a time,
 * in arrival order, while tasks on other chats run freely. A task that fails drops the messages
 * it left pending (a save the store refused), so they never join a later request's save.
 *
 * @example
 * ```ts
 * const engines = new EnginePool({ store });
 * const view = await engines.use(chatId, userId, async (engine) => {
 *   engine.set(user('Hello'));
 *   await engine.save();
 *   return engine.resolve();
 * });
 * ```
 */
export class EnginePool {
  readonly #store: ContextStore;
  readonly #capacity: number;
  /** In least-recently-used order: a use moves its chat to the end. */
  readonly #entries = new Map<string, PoolEntry>();

  constructor(options: EnginePoolOptions) {
    const capacity = options.capacity ?? 200;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `EnginePool: capacity must be a positive integer, received ${String(capacity)}.`,
      );
    }
    this.#store = options.store;
    this.#capacity = capacity;
  }

  /** How many chats have an engine in the pool. */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether the chat has an engine in the pool. */
  has(chatId: string): boolean {
    return this.#entries.has(chatId);
  }

  /**
   * Runs `task` with the chat's engine, alone on that chat. Throws `ChatNotFoundError` for a chat
   * that does not exist (never creating it) and `OwnershipError` for another user's chat, before
   * the task runs.
   */
  async use<T>(
    chatId: string,
    userId: string,
    task: (engine: ContextEngine) => Promise<T>,
  ): Promise<T> {
    for (;;) {
      const entry = this.#acquire(chatId);
      try {
        const { engine, ownerId } = await entry.ready;
        if (ownerId !== userId) throw new OwnershipError(chatId, userId);
        const outcome = await this.#locked(entry, async () => {
          if (entry.evicted) return START_OVER;
          try {
            return await task(engine);
          } catch (error) {
            await engine.discardPending().catch(() => 0);
            throw error;
          }
        });
        if (outcome !== START_OVER) return outcome as T;
      } finally {
        entry.busy -= 1;
        this.#trim();
      }
    }
  }

  /**
   * Drops the chat's engine (after the chat was deleted, say). Tasks already queued on it start
   * over with a fresh look at the store; the one running finishes on the engine it has.
   */
  evict(chatId: string): void {
    const entry = this.#entries.get(chatId);
    if (entry === undefined) return;
    entry.evicted = true;
    this.#entries.delete(chatId);
  }

  /** The chat's entry, made when missing, marked busy and moved to the most recently used end. */
  #acquire(chatId: string): PoolEntry {
    let entry = this.#entries.get(chatId);
    if (entry === undefined) {
      entry = { ready: this.#load(chatId), tail: Promise.resolve(), busy: 0, evicted: false };
      const made = entry;
      // A chat that failed to load (missing, or the store failing) is not kept: the next use
      // tries again. Every use awaits `ready` itself, so this handler only tidies up.
      made.ready.catch(() => {
        if (this.#entries.get(chatId) === made) this.#entries.delete(chatId);
      });
    } else {
      this.#entries.delete(chatId);
    }
    this.#entries.set(chatId, entry);
    entry.busy += 1;
    return entry;
  }

  async #load(chatId: string): Promise<{ engine: ContextEngine; ownerId: string }> {
    // Read the chat first: the engine would create a missing chat on first use.
    const chat = await this.#store.getChat(chatId);
    if (chat === null) throw new ChatNotFoundError(chatId);
    const engine = new ContextEngine({
      store: this.#store,
      chatId,
      userId: chat.userId,
      renderer: rendererFor('xml'),
      tokenizer: o200kTokenizer,
    });
    // The chat's context lane becomes the engine's context; the engine then knows its revision.
    await engine.loadContext();
    return { engine, ownerId: chat.userId };
  }

  #locked<T>(entry: PoolEntry, task: () => Promise<T>): Promise<T> {
    const run = entry.tail.then(task, task);
    entry.tail = run.catch(() => undefined);
    return run;
  }

  /** Drops the least recently used idle chats while the pool is over capacity. */
  #trim(): void {
    if (this.#entries.size <= this.#capacity) return;
    for (const [chatId, entry] of this.#entries) {
      if (this.#entries.size <= this.#capacity) return;
      if (entry.busy === 0) this.evict(chatId);
    }
  }
}
