import {
  type AppendInput,
  type AppendReplyChunksInput,
  type AppendReplyChunksResult,
  type AppendResult,
  type BranchRecord,
  type ChatChangeListener,
  type ContextLaneRecord,
  type EndReplyInput,
  type FindMessageNodesInput,
  type ForkBranchInput,
  type LiveChatState,
  type LiveReplyRead,
  type LiveReplyRecord,
  type MessageNodeRecord,
  type Page,
  type ReadReplyInput,
  type RenameBranchInput,
  type SaveContextInput,
  type SearchHit,
  type SearchMessagesInput,
  type StartReplyInput,
  type StopReplyInput,
  type TakeOverReplyInput,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { CheckedContextStore, endedReplyGraceOption } from '@ctxgraph/fragments-core/store-kit';
import { durableObjectDriver, STORE_NAME } from './driver/durable-object-driver';
import { type DurableObjectMigrationResult, migrate } from './driver/schema';
import type { DurableObjectStorageLike } from './driver/sql-storage';

/** Options of {@link DurableObjectContextStore}. */
export interface DurableObjectContextStoreOptions {
  /**
   * The clock live replies are stamped with and their leases compared to, in milliseconds since
   * the epoch (a test passes one it can move forward, to expire a lease without waiting). Give
   * every store over the same storage the same clock.
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * How long an ended reply stays readable (`readReply`, with `endedAt` set), in milliseconds of
   * `clock`: a reader that was behind when the reply ended still reads its last chunks. From
   * `ENDED_REPLY_GRACE.minMs` to `maxMs`.
   * @default 60000 (`ENDED_REPLY_GRACE.defaultMs`)
   */
  readonly endedReplyGraceMs?: number;
}

/**
 * A `ContextStore` over the SQLite storage of a Cloudflare Durable Object (`ctx.storage.sql`):
 * build it inside the object, one object per chat (`env.CHATS.idFromName(chatId)`), and call
 * it from the object's RPC methods.
 *
 * The object is the chat's one writer: its calls run one at a time on one thread, and every
 * driver method runs synchronously from start to end, so a `commit` reads the head and moves it
 * with no other call in between; each write is one `transactionSync` (the platform refuses
 * `BEGIN`/`COMMIT`), so a write that fails halfway leaves nothing. The tables are created or
 * upgraded synchronously by the constructor: build the store in the object's constructor inside
 * `ctx.blockConcurrencyWhile`, so no call reaches the object before its tables exist.
 *
 * Built on the store kit (`@ctxgraph/fragments-core/store-kit`): the kit checks every input,
 * refuses calls after `close()` and keeps the error rules; the driver holds only the storage.
 *
 * Serves the contract's required part (`append` and `forkBranch` of its own, the context lane,
 * engine records, message versions), declares `persistent`, and serves live replies with the
 * chat's change feed (`liveReplies`): the object is its storage's one writer, so each write
 * announces itself to the watchers as soon as it commits, with no poll and no timer. Serves
 * search (`search`, `searchPrefix`: FTS5, indexed lazily). Not retention (`prune`: not declared,
 * so the kit refuses it).
 *
 * @example
 * ```ts
 * import { DurableObject } from 'cloudflare:workers';
 * import { DurableObjectContextStore } from '@ctxgraph/store-durable-object';
 *
 * export class ChatObject extends DurableObject {
 *   store!: DurableObjectContextStore;
 *   constructor(ctx: DurableObjectState, env: Env) {
 *     super(ctx, env);
 *     ctx.blockConcurrencyWhile(async () => {
 *       this.store = new DurableObjectContextStore(ctx.storage);
 *     });
 *   }
 * }
 * ```
 */
export class DurableObjectContextStore extends CheckedContextStore {
  /** The write of `commit` at the head the branch has now (the object serializes appenders). */
  declare readonly append: (input: AppendInput) => Promise<AppendResult>;
  /** A branch named `nextBranchName(from, …)` in the same write: concurrent forks get distinct names. */
  declare readonly forkBranch: (input: ForkBranchInput) => Promise<BranchRecord>;
  /** Gives a branch a new name, its head and place kept, the active branch following. */
  declare readonly renameBranch: (input: RenameBranchInput) => Promise<BranchRecord>;
  /** The chat's context lane: revision 0 and no fragments until the first save. */
  declare readonly getContext: (chatId: string) => Promise<ContextLaneRecord>;
  /** Replaces the chat's context lane (revision + 1), or `ContextConflictError` when stale. */
  declare readonly saveContext: (input: SaveContextInput) => Promise<ContextLaneRecord>;
  /** The nodes holding a message id, newest first, through an index on the message id. */
  declare readonly findMessageNodes: (
    input: FindMessageNodesInput,
  ) => Promise<readonly MessageNodeRecord[]>;

  /**
   * Full-text search (`capabilities.search` and `searchPrefix`): FTS5 in the object's SQLite,
   * indexed lazily (a save writes nothing to the index; a search first indexes what changed in
   * the chats of its scope).
   */
  declare readonly searchMessages: (input: SearchMessagesInput) => Promise<Page<SearchHit>>;

  /** Starts a live reply without a message write (see `ContextStore.startReply`). */
  declare readonly startReply: (input: StartReplyInput) => Promise<LiveReplyRecord>;
  /** Appends a batch of chunks and renews the lease (see `ContextStore.appendReplyChunks`). */
  declare readonly appendReplyChunks: (
    input: AppendReplyChunksInput,
  ) => Promise<AppendReplyChunksResult>;
  /** A reply (live, or ended within the grace period) and its chunks from an offset, or null. */
  declare readonly readReply: (input: ReadReplyInput) => Promise<LiveReplyRead | null>;
  /** The chat's live replies and change revision. */
  declare readonly getLiveState: (chatId: string) => Promise<LiveChatState>;
  /** Asks live replies to stop. */
  declare readonly stopReply: (input: StopReplyInput) => Promise<readonly LiveReplyRecord[]>;
  /** Hands a reply whose lease ran out to a new owner, with its chunks. */
  declare readonly takeOverReply: (input: TakeOverReplyInput) => Promise<LiveReplyRead | null>;
  /** Ends a live reply without a save. */
  declare readonly endReply: (input: EndReplyInput) => Promise<void>;
  /**
   * The chat's change feed: a first notice in a microtask, then one right after every write to
   * the chat through any store over this object's storage (no poll, no timer).
   */
  declare readonly watchChat: (chatId: string, listener: ChatChangeListener) => () => void;

  /** What the constructor's migration did (`applied` is empty when the tables were current). */
  readonly migration: DurableObjectMigrationResult;

  /**
   * Opens the store over the object's storage and creates or upgrades its tables (synchronously).
   * Throws `ValidationError` when `storage` is not a SQLite-backed Durable Object's storage (a
   * class missing from `new_sqlite_classes`), `SchemaVersionError` when the tables are newer than
   * this code, and `ValidationError` for a bad option.
   *
   * @param storage The object's `ctx.storage`.
   * @param options The live replies' clock and grace period.
   */
  constructor(storage: DurableObjectStorageLike, options: DurableObjectContextStoreOptions = {}) {
    const { clock, endedReplyGraceMs } = checkOptions(options);
    assertSqlStorage(storage);
    const migration = migrate(storage);
    super(durableObjectDriver(storage, { clock, endedReplyGraceMs }));
    this.migration = migration;
  }

  /** `await using store = new DurableObjectContextStore(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** A description for logs: never the storage. */
  override toJSON(): { store: 'durable-object'; schemaVersion: number; closed: boolean } {
    return { store: 'durable-object', schemaVersion: this.migration.to, closed: this.closed };
  }
}

function checkOptions(options: DurableObjectContextStoreOptions): {
  clock: () => number;
  endedReplyGraceMs: number;
} {
  if (typeof options !== 'object' || options === null)
    throw new ValidationError(`${STORE_NAME}: options must be an object.`, {
      issues: [{ path: 'options', message: 'expected an object' }],
    });
  const { clock, endedReplyGraceMs } = options;
  if (clock !== undefined && typeof clock !== 'function')
    throw new ValidationError(`${STORE_NAME}: clock must be a function returning milliseconds.`, {
      issues: [{ path: 'clock', message: 'expected a function' }],
    });
  return {
    clock: clock ?? Date.now,
    endedReplyGraceMs: endedReplyGraceOption(STORE_NAME, endedReplyGraceMs),
  };
}

function assertSqlStorage(storage: unknown): asserts storage is DurableObjectStorageLike {
  const candidate = storage as Partial<DurableObjectStorageLike> | null;
  let usable = false;
  let cause: unknown;
  if (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.transactionSync === 'function'
  ) {
    try {
      // A class with key-value storage has `sql`, but every query throws: try one.
      candidate.sql?.exec('SELECT 1').toArray();
      usable = typeof candidate.sql?.exec === 'function';
    } catch (error) {
      cause = error;
    }
  }
  if (!usable) {
    throw new ValidationError(
      `${STORE_NAME}: storage must be a Durable Object's ctx.storage with SQLite (ctx.storage.sql and ctx.storage.transactionSync). Declare the class under "new_sqlite_classes" in the wrangler migrations.`,
      {
        issues: [{ path: 'storage', message: 'expected a SQLite-backed DurableObjectStorage' }],
        ...(cause === undefined ? {} : { cause }),
      },
    );
  }
}
