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
import { PostgresDriver } from './driver/postgres-driver';
import { type PostgresContextStoreOptions, resolveStoreOptions } from './options';

export {
  type ChangeFeedOptions,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_POOL_OPTIONS,
  type PostgresClient,
  type PostgresConnectionOptions,
  type PostgresContextStoreOptions,
} from './options';

/**
 * A `ContextStore` on PostgreSQL through postgres.js: the store for apps that run more than one
 * server. Every write is one transaction (a commit is a single statement that checks and moves
 * the branch head, inserts the nodes and bumps the chat's revision), chains are read with one
 * recursive query, and every key starts with the chat id.
 *
 * Built on the store kit (`@ctxgraph/fragments-core/store-kit`): the kit checks every input,
 * refuses calls after `close()` and keeps the error rules; the driver (`src/driver/`) holds only
 * the storage.
 *
 * Serves the whole contract: its required part (`append` and `forkBranch` of its own, the
 * context lane, engine records, message versions) and every optional capability: `search` (the
 * store kit's words behind a GIN index, indexed on the first search of a chat, prefixes
 * included), `retention` (`prune`), and live replies with a change feed (`LISTEN` / `NOTIFY`,
 * and a poll for the writes that notify nobody).
 *
 * @example
 * ```ts
 * import { PostgresContextStore } from '@ctxgraph/store-postgres';
 *
 * const store = new PostgresContextStore({ connectionString: process.env.DATABASE_URL, schema: 'app' });
 * const { chat, branch } = await store.openChat({ chatId: 'chat-1', userId: 'user-1' });
 * await store.commit({
 *   chatId: chat.id,
 *   branch: branch.name,
 *   expectedHeadId: branch.headMessageId,
 *   messages: [{ id: 'm1', message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }],
 * });
 * await store.close();
 * ```
 */
export class PostgresContextStore extends CheckedContextStore {
  /**
   * The write of `commit`, attached at whatever the branch head is when PostgreSQL takes the
   * branch row lock, in ONE statement: appenders to a branch queue on that lock instead of
   * racing, so this never reports a conflict. Returns `previousHeadId`.
   */
  declare readonly append: (input: AppendInput) => Promise<AppendResult>;
  /**
   * Creates a fork named `nextBranchName(from, every branch name of the chat)` in one
   * transaction holding the chat row lock: concurrent forks queue and each gets its own name.
   */
  declare readonly forkBranch: (input: ForkBranchInput) => Promise<BranchRecord>;
  /**
   * Gives a branch a new name in one transaction that locks the branch row, then the chat row (the order of every write): its head and place kept, the chat's
   * active branch following (see `ContextStore.renameBranch`).
   */
  declare readonly renameBranch: (input: RenameBranchInput) => Promise<BranchRecord>;
  /** The chat's context lane: revision 0 and no fragments until the first save. */
  declare readonly getContext: (chatId: string) => Promise<ContextLaneRecord>;
  /**
   * Replaces the chat's context lane (stored as `json`, byte for byte) in one transaction under
   * the chat row lock: revision + 1, or `ContextConflictError` when `expectedRevision` is stale.
   * Moves the chat's `updatedAt`, never its `revision`.
   */
  declare readonly saveContext: (input: SaveContextInput) => Promise<ContextLaneRecord>;
  /**
   * Full-text search under the contract's one rule and score: the store kit's words of each
   * message in `search_words` (GIN-indexed, brought up to date by the search itself, never by a
   * save), scoped to the user's chats, a chat, or a branch's chain, paged by keyset cursor.
   */
  declare readonly searchMessages: (input: SearchMessagesInput) => Promise<Page<SearchHit>>;
  /**
   * Deletes branches and the nodes no branch head or checkpoint reaches, in one transaction that
   * locks the branches it deletes and the chat row (the order writers lock them), or reports them
   * with `dryRun`.
   */
  declare readonly prune: (input: PruneInput) => Promise<PruneResult>;
  /**
   * The nodes holding a message id (versions of an edited message on sibling branches), newest
   * first, through an index on the id inside the stored message (see `ContextStore.findMessageNodes`).
   */
  declare readonly findMessageNodes: (
    input: FindMessageNodesInput,
  ) => Promise<readonly MessageNodeRecord[]>;
  /** Starts a live reply without a message write, in one statement. */
  declare readonly startReply: (input: StartReplyInput) => Promise<LiveReplyRecord>;
  /**
   * Appends a batch of chunks (one row) and renews the lease in one statement, checking the
   * owner and the offset under the reply's row lock; says whether a stop was asked for.
   */
  declare readonly appendReplyChunks: (
    input: AppendReplyChunksInput,
  ) => Promise<AppendReplyChunksResult>;
  /** A live reply and its chunks from an offset, in one statement, or null. */
  declare readonly readReply: (input: ReadReplyInput) => Promise<LiveReplyRead | null>;
  /** The chat's live replies and change revision, in one statement. */
  declare readonly getLiveState: (chatId: string) => Promise<LiveChatState>;
  /** Asks live replies to stop, wherever they are generated. */
  declare readonly stopReply: (input: StopReplyInput) => Promise<readonly LiveReplyRecord[]>;
  /** Hands a reply whose lease ran out (by the `clock` option) to a new owner; one taker wins. */
  declare readonly takeOverReply: (input: TakeOverReplyInput) => Promise<LiveReplyRead | null>;
  /** Ends a live reply without a save. */
  declare readonly endReply: (input: EndReplyInput) => Promise<void>;
  /**
   * The chat's change feed: `LISTEN` (the live-reply writes `NOTIFY` in their own statement) and
   * a poll of the watched chats every `changeFeed.pollIntervalMs`, on a connection of its own
   * that exists only while something watches.
   */
  declare readonly watchChat: (chatId: string, listener: ChatChangeListener) => () => void;
  /** The schema the tables live in. */
  readonly schema: string;
  /** The prefix of every table name. */
  readonly tablePrefix: string;

  readonly #driver: PostgresDriver;

  /**
   * @param options A connection URL, or {@link PostgresContextStoreOptions}.
   */
  constructor(options: string | PostgresContextStoreOptions) {
    const resolved = resolveStoreOptions(options);
    const driver = new PostgresDriver(resolved);
    super(driver);
    this.#driver = driver;
    this.schema = resolved.names.schema;
    this.tablePrefix = resolved.names.tablePrefix;
  }

  /**
   * Brings the schema to the version this code needs, now (instead of on first use). Safe to
   * call from many servers at once. Returns the version before and after.
   */
  migrate(): Promise<{ readonly from: number; readonly to: number }> {
    const driver = this.#driver;
    return this.guard('migrate()', () => driver.migrate(), { writes: true });
  }

  /** `await using store = new PostgresContextStore(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** What the store is, for logs: never the client, its options or a password. */
  override toJSON(): {
    readonly store: 'PostgresContextStore';
    readonly schema: string;
    readonly tablePrefix: string;
    readonly ownsClient: boolean;
    readonly closed: boolean;
  } {
    return {
      store: 'PostgresContextStore',
      schema: this.schema,
      tablePrefix: this.tablePrefix,
      ownsClient: this.#driver.ownsClient,
      closed: this.closed,
    };
  }
}
