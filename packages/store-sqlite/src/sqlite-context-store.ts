import type {
  AppendInput,
  AppendReplyChunksInput,
  AppendReplyChunksResult,
  AppendResult,
  BranchRecord,
  ChatChangeListener,
  ContextLaneRecord,
  EndReplyInput,
  FindMessageNodesInput,
  ForkBranchInput,
  LiveChatState,
  LiveReplyRead,
  LiveReplyRecord,
  MessageNodeRecord,
  Page,
  PruneInput,
  PruneResult,
  ReadReplyInput,
  RenameBranchInput,
  SaveContextInput,
  SearchHit,
  SearchMessagesInput,
  StartReplyInput,
  StopReplyInput,
  TakeOverReplyInput,
} from '@ctxgraph/fragments-core';
import { CheckedContextStore } from '@ctxgraph/fragments-core/store-kit';
import { SqliteDriver } from './driver/sqlite-driver';
import type { SqliteMigrationResult } from './migrations/migrations';
import { resolveStoreOptions, type SqliteContextStoreOptions } from './options';

export {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  type SqliteContextStoreOptions,
  type SqliteStoreCommonOptions,
  type SqliteStoreDatabaseOptions,
  type SqliteStorePathOptions,
  type SqliteSynchronous,
} from './options';

/**
 * A `ContextStore` in a SQLite file, on better-sqlite3: the embedded default of ctxgraph.
 *
 * Every write is one `BEGIN IMMEDIATE` transaction, so several processes may share the file and
 * `commit` still moves a branch head only from the head its caller saw: a concurrent writer gets a
 * `HeadConflictError` and nothing is lost. Reads of a chain are one recursive query.
 *
 * Built on the store kit (`@ctxgraph/fragments-core/store-kit`): the kit checks every input,
 * refuses calls after `close()` and keeps the error rules; the driver (`src/driver/`) holds only
 * the storage.
 *
 * Serves the whole contract: its required part (`append` and `forkBranch` of its own, the
 * context lane, engine records, message versions) and every optional capability: search (with
 * prefixes), retention, and live replies with a change feed that reaches every process sharing
 * the file.
 *
 * @example
 * ```ts
 * import { SqliteContextStore } from '@ctxgraph/store-sqlite';
 *
 * await using store = new SqliteContextStore('./context.db');
 * const { branch } = await store.openChat({ chatId: 'chat-1', userId: 'ada' });
 * await store.commit({
 *   chatId: 'chat-1',
 *   branch: branch.name,
 *   expectedHeadId: branch.headMessageId,
 *   messages: [{ id: 'm1', message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }],
 * });
 * ```
 */
export class SqliteContextStore extends CheckedContextStore {
  /**
   * The write of `commit`, attached at the branch head found once the write lock is held: the
   * `BEGIN IMMEDIATE` transaction serializes appenders, in this process and in others, so no
   * appender fails because another one moved the head. Same checks, same replace-in-place rule
   * (against the head it finds), same +1 revision; `previousHeadId` is the head it attached to.
   */
  declare readonly append: (input: AppendInput) => Promise<AppendResult>;
  /**
   * Creates a branch named `nextBranchName(from, every branch name of the chat)`, reading the
   * names and inserting the branch in one `BEGIN IMMEDIATE` transaction, so concurrent forks (in
   * any process) each get their own name and none fails. `MessageNotFoundError` when
   * `headMessageId` is not a node of the chat.
   */
  declare readonly forkBranch: (input: ForkBranchInput) => Promise<BranchRecord>;
  /**
   * Gives a branch a new name in one `BEGIN IMMEDIATE` transaction: its head and place kept, the chat's
   * active branch following (see `ContextStore.renameBranch`).
   */
  declare readonly renameBranch: (input: RenameBranchInput) => Promise<BranchRecord>;
  /** The chat's context lane: revision 0 and no fragments until the first save. */
  declare readonly getContext: (chatId: string) => Promise<ContextLaneRecord>;
  /**
   * Replaces the chat's context lane (stored as JSON text, byte for byte) in one `BEGIN
   * IMMEDIATE` transaction: revision + 1, or `ContextConflictError` when `expectedRevision` is
   * stale. Moves the chat's `updatedAt`, never its `revision`.
   */
  declare readonly saveContext: (input: SaveContextInput) => Promise<ContextLaneRecord>;
  /**
   * Full-text search under the contract's one rule and score, over an FTS5 index of the store
   * kit's words of each message (brought up to date by the search itself, and by each save to a
   * chat this store has searched),
   * scoped to the user's chats, a chat, or a branch's chain, paged by keyset cursor.
   */
  declare readonly searchMessages: (input: SearchMessagesInput) => Promise<Page<SearchHit>>;
  /**
   * Deletes branches and the nodes no branch head or checkpoint reaches, in one `BEGIN IMMEDIATE`
   * transaction serialized with every writer, or reports them with `dryRun`.
   */
  declare readonly prune: (input: PruneInput) => Promise<PruneResult>;
  /**
   * The nodes holding a message id (versions of an edited message on sibling branches), newest
   * first, through an index on the id inside the stored message (see `ContextStore.findMessageNodes`).
   */
  declare readonly findMessageNodes: (
    input: FindMessageNodesInput,
  ) => Promise<readonly MessageNodeRecord[]>;
  /** Starts a live reply without a message write, in one `BEGIN IMMEDIATE` transaction. */
  declare readonly startReply: (input: StartReplyInput) => Promise<LiveReplyRecord>;
  /** Appends a batch of chunks (one row) and renews the lease in one transaction; says whether a stop was asked for. */
  declare readonly appendReplyChunks: (
    input: AppendReplyChunksInput,
  ) => Promise<AppendReplyChunksResult>;
  /** A live reply and its chunks from an offset, read in one snapshot, or null. */
  declare readonly readReply: (input: ReadReplyInput) => Promise<LiveReplyRead | null>;
  /** The chat's live replies and change revision, read in one snapshot. */
  declare readonly getLiveState: (chatId: string) => Promise<LiveChatState>;
  /** Asks live replies to stop, wherever they are generated. */
  declare readonly stopReply: (input: StopReplyInput) => Promise<readonly LiveReplyRecord[]>;
  /** Hands a reply whose lease ran out (by the `clock` option) to a new owner. */
  declare readonly takeOverReply: (input: TakeOverReplyInput) => Promise<LiveReplyRead | null>;
  /** Ends a live reply without a save. */
  declare readonly endReply: (input: EndReplyInput) => Promise<void>;
  /**
   * The chat's change feed: while something watches, the store looks at the file every
   * `pollIntervalMs` (`PRAGMA data_version`, and the watched chats' counters only when the file
   * changed), so it sees the writes of every connection and process; its own live-reply writes
   * are announced at once.
   */
  declare readonly watchChat: (chatId: string, listener: ChatChangeListener) => () => void;
  /** The database file (better-sqlite3's `name`: the path, or `:memory:`). */
  readonly path: string;
  /** The prefix of every table. */
  readonly tablePrefix: string;

  // A private field (not a property), so the client never shows up in logs or JSON.
  readonly #driver: SqliteDriver;

  /**
   * Opens the store. Throws `ValidationError` for bad options, `StoreError` when the file cannot
   * be opened or is not a usable database, `SchemaVersionError` when its tables are newer than this
   * code.
   *
   * @param options A file path (or `':memory:'`), or {@link SqliteContextStoreOptions}.
   */
  constructor(options: string | SqliteContextStoreOptions) {
    const driver = new SqliteDriver(resolveStoreOptions(options));
    super(driver);
    this.#driver = driver;
    this.path = driver.db.path;
    this.tablePrefix = driver.db.tables.prefix;
  }

  /**
   * Creates or upgrades the tables now (for a store built with `migrate: false`, or to run ahead
   * of a deploy). Idempotent; safe while other processes do the same.
   */
  migrate(): Promise<SqliteMigrationResult> {
    const driver = this.#driver;
    return this.guard('migrate()', () => driver.migrate(), { writes: true });
  }

  /** `await using store = new SqliteContextStore(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** A description for logs: never the client. */
  override toJSON(): {
    store: 'sqlite';
    path: string;
    tablePrefix: string;
    ownsDatabase: boolean;
    closed: boolean;
  } {
    return {
      store: 'sqlite',
      path: this.path,
      tablePrefix: this.tablePrefix,
      ownsDatabase: this.#driver.db.ownsDatabase,
      closed: this.closed,
    };
  }
}
