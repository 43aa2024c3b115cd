import {
  type AppendInput,
  type AppendResult,
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  type ChainPage,
  type ChatGraph,
  ChatNotFoundError,
  type ChatPointerInput,
  type ChatRecord,
  CheckpointExistsError,
  type CheckpointRecord,
  type CommitInput,
  type CommitResult,
  type ContextStore,
  type ContextStoreCapabilities,
  type CreateBranchInput,
  type CreateCheckpointInput,
  type ForkBranchInput,
  type GetChainInput,
  type GetHeadInput,
  type GetMessageInput,
  HeadConflictError,
  type HeadState,
  type JsonObject,
  type ListChatsInput,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  type OpenChatInput,
  type OpenChatResult,
  OwnershipError,
  type Page,
  SchemaVersionError,
  type StoredMessage,
  StoreError,
  type UpdateChatInput,
  ValidationError,
} from '@ctxgraph/fragments-core';
import {
  assertChainLimit,
  assertForkBranchInput,
  assertIdentifier,
  assertJsonObject,
  assertTitle,
  chatCursor,
  forkBranchName,
  mergeMetadata,
  type PreparedCommitMessage,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  toJsonText,
} from '@ctxgraph/fragments-core/store-kit';
import Database from 'better-sqlite3';
import {
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SQLITE_SCHEMA_VERSION,
  type SqliteMigrationResult,
} from './migrations/sqlite-migrations';
import { DEFAULT_TABLE_PREFIX, type TableNames, tableNames } from './schema/table-names';
import { toStoreError } from './sqlite-errors';

/**
 * SQLite's `synchronous` setting for a file the store opens. In WAL mode, `'NORMAL'` keeps every
 * committed write through an application crash and loses at most the last transactions on a power
 * loss or OS crash; `'FULL'` also survives power loss, at an fsync per commit; `'EXTRA'` adds an
 * fsync of the directory.
 */
export type SqliteSynchronous = 'NORMAL' | 'FULL' | 'EXTRA';

/** Options shared by both ways of opening a {@link SqliteContextStore}. */
export interface SqliteStoreCommonOptions {
  /**
   * Prefix of every table and index, so several apps can share one file. Letters, digits and
   * underscores, not starting with a digit.
   * @default 'ctxgraph_'
   */
  readonly tablePrefix?: string;
  /**
   * Create or upgrade the tables when the store is constructed. Pass `false` when the schema is
   * managed elsewhere (`store.migrate()`, `migrateSqliteDatabase()` or the SQL of
   * `sqliteMigrationSql()`); the store then checks the version on first use.
   * @default true
   */
  readonly migrate?: boolean;
  /**
   * The largest message (or chat metadata) the store accepts, in bytes of UTF-8 JSON. Larger ones
   * are refused with `ValidationError` before anything is written.
   * @default 16777216 (16 MiB)
   */
  readonly maxMessageBytes?: number;
}

/** Open (and own) the SQLite file at `path`. */
export interface SqliteStorePathOptions extends SqliteStoreCommonOptions {
  /** The database file (created when missing, unless `readonly`), or `':memory:'`. */
  readonly path: string;
  /**
   * Open the file read-only: reads work, every write fails with `StoreError`. The file must exist
   * and already hold the current schema.
   * @default false
   */
  readonly readonly?: boolean;
  /**
   * SQLite `synchronous` setting (see {@link SqliteSynchronous}).
   * @default 'NORMAL'
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * How long a write waits for another connection's lock before failing, in milliseconds.
   * @default 5000
   */
  readonly busyTimeout?: number;
}

/**
 * Use a better-sqlite3 `Database` you opened. The store never closes it and never changes its
 * settings: set WAL, `busy_timeout` and `synchronous` yourself (see the README).
 */
export interface SqliteStoreDatabaseOptions extends SqliteStoreCommonOptions {
  /** An open better-sqlite3 database. */
  readonly database: Database.Database;
}

/** Options of {@link SqliteContextStore}: a path to open, or a database you already opened. */
export type SqliteContextStoreOptions = SqliteStorePathOptions | SqliteStoreDatabaseOptions;

/** The default of {@link SqliteStoreCommonOptions.maxMessageBytes}. */
export const DEFAULT_MAX_MESSAGE_BYTES: number = 16 * 1024 * 1024;

const SYNCHRONOUS_VALUES: readonly SqliteSynchronous[] = ['NORMAL', 'FULL', 'EXTRA'];
const MAIN_BRANCH = 'main';
const UNLIMITED = Number.MAX_SAFE_INTEGER;

interface ChatRow {
  id: string;
  user_id: string;
  title: string | null;
  metadata: string;
  active_branch: string;
  version: number;
  rewritten_at: number;
  created_at: number;
  updated_at: number;
}

interface BranchRow {
  chat_id: string;
  name: string;
  head_message_id: string | null;
  created_at: number;
  updated_at: number;
}

interface CheckpointRow {
  chat_id: string;
  name: string;
  message_id: string;
  created_at: number;
}

interface MessageRow {
  id: string;
  parent_id: string | null;
  sequence: number;
  payload: string;
  created_at: number;
  updated_at: number;
}

interface CommitStateRow {
  version: number;
  rewritten_at: number;
  branch_name: string | null;
  head: string | null;
  max_sequence: number | null;
}

function chatRecord(row: ChatRow): ChatRecord {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    metadata: JSON.parse(row.metadata) as JsonObject,
    activeBranch: row.active_branch,
    version: row.version,
    rewrittenAt: row.rewritten_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function branchRecord(row: BranchRow): BranchRecord {
  return {
    chatId: row.chat_id,
    name: row.name,
    headMessageId: row.head_message_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function checkpointRecord(row: CheckpointRow): CheckpointRecord {
  return {
    chatId: row.chat_id,
    name: row.name,
    messageId: row.message_id,
    createdAt: row.created_at,
  };
}

function messageRecord(chatId: string, row: MessageRow): MessageNodeRecord {
  return {
    chatId,
    id: row.id,
    parentId: row.parent_id,
    sequence: row.sequence,
    message: JSON.parse(row.payload) as StoredMessage,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * A node just written, as a later read returns it. Its `message` is the written JSON, parsed the
 * first time it is read: callers such as the engine keep their own copy of what they saved, so a
 * batch of 10,000 messages does not pay 10,000 parses nobody looks at. Each read returns the same
 * object.
 */
function writtenNode(
  chatId: string,
  id: string,
  parentId: string | null,
  sequence: number,
  json: string,
  createdAt: number,
  updatedAt: number,
): MessageNodeRecord {
  let parsed: StoredMessage | undefined;
  return {
    chatId,
    id,
    parentId,
    sequence,
    get message(): StoredMessage {
      if (parsed === undefined) parsed = JSON.parse(json) as StoredMessage;
      return parsed;
    },
    createdAt,
    updatedAt,
  };
}

function optionsProblem(message: string, path: string): ValidationError {
  return new ValidationError(`SqliteContextStore: ${message}`, { issues: [{ path, message }] });
}

function checkOptions(options: SqliteContextStoreOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw optionsProblem(
      'expected a path or an options object ({ path } or { database }).',
      'options',
    );
  }
  const hasPath = 'path' in options && options.path !== undefined;
  const hasDatabase = 'database' in options && options.database !== undefined;
  if (hasPath === hasDatabase) {
    throw optionsProblem(
      'pass exactly one of `path` (a file to open) or `database` (a better-sqlite3 Database).',
      'options',
    );
  }
  if (hasPath) {
    const pathOptions = options as SqliteStorePathOptions;
    if (typeof pathOptions.path !== 'string' || pathOptions.path === '') {
      throw optionsProblem('path must be a non-empty string (a file path or ":memory:").', 'path');
    }
    if (pathOptions.path.includes('\u0000'))
      throw optionsProblem('path must not contain the NUL character.', 'path');
    const { synchronous, busyTimeout } = pathOptions;
    if (synchronous !== undefined && !SYNCHRONOUS_VALUES.includes(synchronous)) {
      throw optionsProblem(
        `synchronous must be one of ${SYNCHRONOUS_VALUES.join(', ')}, received ${String(synchronous)}.`,
        'synchronous',
      );
    }
    if (busyTimeout !== undefined && (!Number.isInteger(busyTimeout) || busyTimeout < 0)) {
      throw optionsProblem(
        `busyTimeout must be a non-negative integer of milliseconds, received ${String(busyTimeout)}.`,
        'busyTimeout',
      );
    }
  } else {
    const { database } = options as SqliteStoreDatabaseOptions;
    if (
      typeof database !== 'object' ||
      database === null ||
      typeof database.prepare !== 'function'
    ) {
      throw optionsProblem('database must be an open better-sqlite3 Database.', 'database');
    }
    if (!database.open) throw optionsProblem('database is closed.', 'database');
  }
  const { maxMessageBytes } = options;
  if (
    maxMessageBytes !== undefined &&
    (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1)
  ) {
    throw optionsProblem(
      `maxMessageBytes must be a positive integer, received ${String(maxMessageBytes)}.`,
      'maxMessageBytes',
    );
  }
}

/**
 * A `ContextStore` in a SQLite file, on better-sqlite3: the embedded default of ctxgraph.
 *
 * Every write is one `BEGIN IMMEDIATE` transaction, so several processes may share the file and
 * `commit` still moves a branch head only from the head its caller saw: a concurrent writer gets a
 * `HeadConflictError` and nothing is lost. Reads of a chain are one recursive query.
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
export class SqliteContextStore implements ContextStore {
  /** The contract version this store implements. */
  readonly specificationVersion: 'v1' = 'v1';
  /** A file is persistent and shared safely between processes; `:memory:` is neither. */
  readonly capabilities: ContextStoreCapabilities;
  /** The database file (better-sqlite3's `name`: the path, or `:memory:`). */
  readonly path: string;
  /** The prefix of every table. */
  readonly tablePrefix: string;

  // Private fields (not properties), so the client never shows up in logs or JSON.
  readonly #database: Database.Database;
  readonly #ownsDatabase: boolean;
  readonly #tables: TableNames;
  readonly #maxMessageBytes: number;
  readonly #statements = new Map<string, Database.Statement>();
  // One transaction wrapper for the store's life, running whatever body it is given: building a
  // wrapper per call costs more than the statements of a small commit.
  readonly #transaction: Database.Transaction<(body: () => unknown) => unknown>;
  #schemaChecked = false;
  #closed = false;

  /**
   * Opens the store. Throws `ValidationError` for bad options, `StoreError` when the file cannot
   * be opened or is not a usable database, `SchemaVersionError` when its tables are newer than this
   * code.
   */
  constructor(options: string | SqliteContextStoreOptions) {
    const resolved: SqliteContextStoreOptions =
      typeof options === 'string' ? { path: options } : options;
    checkOptions(resolved);
    this.#tables = tableNames(resolved.tablePrefix ?? DEFAULT_TABLE_PREFIX);
    this.tablePrefix = this.#tables.prefix;
    this.#maxMessageBytes = resolved.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if ('database' in resolved && resolved.database !== undefined) {
      this.#database = resolved.database;
      this.#ownsDatabase = false;
      this.path = resolved.database.name;
    } else {
      const pathOptions = resolved as SqliteStorePathOptions;
      this.path = pathOptions.path;
      this.#database = SqliteContextStore.#open(pathOptions);
      this.#ownsDatabase = true;
    }
    this.#transaction = this.#database.transaction((body: () => unknown) => body());
    const memory = this.#database.memory;
    // append and forkBranch are served on any connection: their write transaction serializes them.
    this.capabilities = {
      persistent: !memory,
      multiProcess: !memory,
      append: true,
      forkBranch: true,
    };
    if (resolved.migrate !== false) {
      try {
        // A read-only database cannot be migrated: check its version instead, so the error says
        // what is missing rather than that a write failed.
        if (this.#database.readonly) this.#checkSchema();
        else migrateSqliteDatabase(this.#database, { tablePrefix: this.tablePrefix });
        this.#schemaChecked = true;
      } catch (error) {
        if (this.#ownsDatabase) this.#database.close();
        throw toStoreError(error, this.path, 'creating the schema');
      }
    }
  }

  static #open(options: SqliteStorePathOptions): Database.Database {
    const readonly = options.readonly === true;
    let database: Database.Database;
    try {
      database = new Database(options.path, { readonly, fileMustExist: readonly });
    } catch (error) {
      throw toStoreError(error, options.path, 'opening the database');
    }
    try {
      const busyTimeout = options.busyTimeout ?? 5000;
      database.pragma(`busy_timeout = ${busyTimeout}`);
      if (!readonly && !database.memory) {
        const mode = SqliteContextStore.#switchToWal(database, busyTimeout);
        if (mode !== 'wal')
          throw new StoreError(
            `SqliteContextStore at "${options.path}": could not switch to WAL mode (journal_mode is ${String(mode)}).`,
          );
      } else {
        // Reading the schema here surfaces "not a database" / corruption at open time.
        database.pragma('schema_version', { simple: true });
      }
      database.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
      database.pragma('foreign_keys = ON');
      return database;
    } catch (error) {
      database.close();
      throw toStoreError(error, options.path, 'opening the database');
    }
  }

  // Switching a new file to WAL needs an exclusive lock. When two processes open the same new
  // file at once, both hold a shared lock and want it: SQLite answers SQLITE_BUSY at once instead
  // of calling the busy handler (waiting could not help either of them), or reports the old mode
  // unchanged. Once the other one has switched, the switch is a no-op, so retrying for up to
  // busyTimeout resolves the race. Returns the journal mode in effect at the end.
  static #switchToWal(database: Database.Database, busyTimeout: number): unknown {
    const deadline = Date.now() + busyTimeout;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let attempt = 1; ; attempt += 1) {
      let mode: unknown;
      try {
        mode = database.pragma('journal_mode = WAL', { simple: true });
        if (mode === 'wal') return mode;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY')) throw error;
        if (Date.now() >= deadline) throw error;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return mode;
      // The constructor is synchronous: block this thread briefly, a little longer each time.
      Atomics.wait(pause, 0, 0, Math.min(remaining, attempt * 5));
    }
  }

  /**
   * Creates or upgrades the tables now (for a store built with `migrate: false`, or to run ahead
   * of a deploy). Idempotent; safe while other processes do the same.
   */
  async migrate(): Promise<SqliteMigrationResult> {
    this.#assertOpen('migrate');
    try {
      const result = migrateSqliteDatabase(this.#database, { tablePrefix: this.tablePrefix });
      this.#schemaChecked = true;
      return result;
    } catch (error) {
      throw toStoreError(error, this.path, 'migrate()');
    }
  }

  async openChat(input: OpenChatInput): Promise<OpenChatResult> {
    const method = 'openChat(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'userId', input.userId);
    assertTitle(method, input.title, false);
    if (typeof input.title === 'string') this.#checkSize(method, 'title', input.title);
    let metadataText: string | undefined;
    if (input.metadata !== undefined) {
      assertJsonObject(method, 'metadata', input.metadata);
      metadataText = this.#checkSize(
        method,
        'metadata',
        toJsonText(method, 'metadata', input.metadata),
      );
    }
    const { chatId, userId } = input;
    return this.#run(method, () => {
      // Loading an existing chat without metadata is the common case: a read, no write lock.
      if (metadataText === undefined) {
        const loaded = this.#read(() => {
          const chat = this.#chatRow(chatId);
          if (chat === undefined) return undefined;
          if (chat.user_id !== userId) throw new OwnershipError(chatId, userId);
          return { chat: chatRecord(chat), branch: this.#activeBranch(chat), created: false };
        });
        if (loaded !== undefined) return loaded;
      }
      return this.#write(() => {
        const existing = this.#chatRow(chatId);
        const now = Date.now();
        if (existing !== undefined) {
          if (existing.user_id !== userId) throw new OwnershipError(chatId, userId);
          let chat = existing;
          if (input.metadata !== undefined) {
            const merged = mergeMetadata(
              JSON.parse(existing.metadata) as JsonObject,
              input.metadata,
            );
            chat = this.#statement(
              `UPDATE ${this.#tables.chats} SET metadata = ?, updated_at = MAX(updated_at, ?) WHERE id = ? RETURNING *`,
            ).get(JSON.stringify(merged), now, chatId) as ChatRow;
          }
          return { chat: chatRecord(chat), branch: this.#activeBranch(chat), created: false };
        }
        const chat = this.#statement(
          `INSERT INTO ${this.#tables.chats} (id, user_id, title, metadata, active_branch, version, rewritten_at, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?) RETURNING *`,
        ).get(
          chatId,
          userId,
          input.title ?? null,
          metadataText ?? '{}',
          MAIN_BRANCH,
          now,
          now,
        ) as ChatRow;
        const branch = this.#statement(
          `INSERT INTO ${this.#tables.branches} (chat_id, name, head_message_id, created_at, updated_at)
           VALUES (?, ?, NULL, ?, ?) RETURNING *`,
        ).get(chatId, MAIN_BRANCH, now, now) as BranchRow;
        return { chat: chatRecord(chat), branch: branchRecord(branch), created: true };
      });
    });
  }

  async getChat(chatId: string): Promise<ChatRecord | null> {
    assertIdentifier('getChat(chatId)', 'chatId', chatId);
    return this.#run('getChat', () => {
      const row = this.#chatRow(chatId);
      return row === undefined ? null : chatRecord(row);
    });
  }

  async updateChat(input: UpdateChatInput): Promise<ChatRecord> {
    const method = 'updateChat(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertTitle(method, input.title, true);
    if (typeof input.title === 'string') this.#checkSize(method, 'title', input.title);
    if (input.metadata !== undefined) {
      assertJsonObject(method, 'metadata', input.metadata);
      this.#checkSize(method, 'metadata', toJsonText(method, 'metadata', input.metadata));
    }
    return this.#run(method, () =>
      this.#write(() => {
        const existing = this.#requireChat(input.chatId);
        const title = input.title === undefined ? existing.title : input.title;
        const metadata = mergeMetadata(JSON.parse(existing.metadata) as JsonObject, input.metadata);
        const metadataText = this.#checkSize(method, 'metadata', JSON.stringify(metadata));
        const row = this.#statement(
          `UPDATE ${this.#tables.chats} SET title = ?, metadata = ?, updated_at = MAX(updated_at, ?) WHERE id = ? RETURNING *`,
        ).get(title, metadataText, Date.now(), input.chatId) as ChatRow;
        return chatRecord(row);
      }),
    );
  }

  async listChats(input: ListChatsInput): Promise<Page<ChatRecord>> {
    const query = prepareChatList(input);
    return this.#run('listChats(input)', () => {
      const chats = this.#tables.chats;
      // One row more than the page tells whether another page follows.
      const rows = (
        query.after === null
          ? this.#statement(
              `SELECT * FROM ${chats} WHERE user_id = ? ORDER BY updated_at DESC, id ASC LIMIT ?`,
            ).all(query.userId, query.limit + 1)
          : this.#statement(
              // `updated_at <= ?` lets the index seek straight to the cursor; the OR then drops
              // the chats of the same millisecond that the previous page already listed.
              `SELECT * FROM ${chats} WHERE user_id = ? AND updated_at <= ? AND (updated_at < ? OR id > ?)
               ORDER BY updated_at DESC, id ASC LIMIT ?`,
            ).all(
              query.userId,
              query.after.updatedAt,
              query.after.updatedAt,
              query.after.id,
              query.limit + 1,
            )
      ) as ChatRow[];
      const items = rows.slice(0, query.limit).map(chatRecord);
      const last = items[items.length - 1];
      return {
        items,
        nextCursor: rows.length > query.limit && last !== undefined ? chatCursor(last) : null,
      };
    });
  }

  async deleteChat(chatId: string): Promise<boolean> {
    assertIdentifier('deleteChat(chatId)', 'chatId', chatId);
    return this.#run('deleteChat', () =>
      this.#write(() => {
        const t = this.#tables;
        // Pointers first, then nodes, then the chat, so foreign keys hold after each statement.
        this.#statement(`DELETE FROM ${t.checkpoints} WHERE chat_id = ?`).run(chatId);
        this.#statement(`DELETE FROM ${t.branches} WHERE chat_id = ?`).run(chatId);
        this.#statement(`DELETE FROM ${t.messages} WHERE chat_id = ?`).run(chatId);
        return this.#statement(`DELETE FROM ${t.chats} WHERE id = ?`).run(chatId).changes > 0;
      }),
    );
  }

  async getHead(input: GetHeadInput): Promise<HeadState> {
    const method = 'getHead(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'branch', input.branch);
    return this.#run(method, () => {
      const state = this.#headState(input.chatId, input.branch);
      return { version: state.version, headMessageId: state.head, rewrittenAt: state.rewritten_at };
    });
  }

  /**
   * Inserts / replaces the nodes and moves the head in one `BEGIN IMMEDIATE` transaction, or
   * throws having written nothing: `HeadConflictError` when the head is not `expectedHeadId`,
   * `MessageIdConflictError` when an id exists in the chat but not on the branch.
   */
  async commit(input: CommitInput): Promise<CommitResult> {
    const method = 'commit(input)';
    const prepared = prepareCommit(input);
    this.#checkMessageSizes(method, prepared);
    const { chatId, branch, expectedHeadId } = input;
    return this.#run(method, () =>
      this.#write(() => {
        const { previousHeadId: _previous, ...result } = this.#writeMessages(
          chatId,
          branch,
          prepared,
          expectedHeadId,
        );
        return result;
      }),
    );
  }

  /**
   * The write of `commit`, attached at the branch head found once the write lock is held: the
   * `BEGIN IMMEDIATE` transaction serializes appenders, in this process and in others, so no
   * appender fails because another one moved the head. Same checks, same replace-in-place rule
   * (against the head it finds), same +1 version; `previousHeadId` is the head it attached to.
   */
  async append(input: AppendInput): Promise<AppendResult> {
    const method = 'append(input)';
    const prepared = prepareAppend(input);
    this.#checkMessageSizes(method, prepared);
    const { chatId, branch } = input;
    return this.#run(method, () =>
      this.#write(() => this.#writeMessages(chatId, branch, prepared, undefined)),
    );
  }

  #checkMessageSizes(method: string, prepared: readonly PreparedCommitMessage[]): void {
    for (let index = 0; index < prepared.length; index += 1) {
      this.#checkSize(
        method,
        `messages[${index}].message`,
        (prepared[index] as PreparedCommitMessage).json,
      );
    }
  }

  // The body of commit (with an expected head) and append (without), inside the write
  // transaction. A throw after the first insert rolls the whole transaction back.
  #writeMessages(
    chatId: string,
    branch: string,
    prepared: readonly PreparedCommitMessage[],
    expectedHeadId: string | null | undefined,
  ): AppendResult {
    const state = this.#headState(chatId, branch);
    if (expectedHeadId !== undefined && state.head !== expectedHeadId) {
      throw new HeadConflictError({
        chatId,
        branch,
        expectedHeadId,
        currentHeadId: state.head,
      });
    }
    const now = Date.now();
    // A plain insert for the usual case (an id new to the chat: nothing to return, the row is what
    // was passed); only when the id is taken does a second statement replace the content in place
    // and return what it kept (parent, sequence, creation time).
    const insert = this.#statement(
      `INSERT INTO ${this.#tables.messages} (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id, id) DO NOTHING`,
    );
    let head = state.head;
    let nextSequence = (state.max_sequence ?? 0) + 1;
    // Replaced ids and the lowest sequence among them, for the on-branch check below.
    const replacedIds: string[] = [];
    let oldestReplaced = Number.MAX_SAFE_INTEGER;
    const nodes: MessageNodeRecord[] = [];
    for (const message of prepared) {
      const inserted =
        insert.run(chatId, message.id, head, nextSequence, message.role, message.json, now, now)
          .changes > 0;
      if (inserted) {
        nodes.push(writtenNode(chatId, message.id, head, nextSequence, message.json, now, now));
        head = message.id;
        nextSequence += 1;
        continue;
      }
      const kept = this.#statement(
        `UPDATE ${this.#tables.messages} SET role = ?, payload = ?, updated_at = ? WHERE chat_id = ? AND id = ?
         RETURNING parent_id, sequence, created_at`,
      ).get(message.role, message.json, now, chatId, message.id) as Pick<
        MessageRow,
        'parent_id' | 'sequence' | 'created_at'
      >;
      replacedIds.push(message.id);
      if (kept.sequence < oldestReplaced) oldestReplaced = kept.sequence;
      nodes.push(
        writtenNode(
          chatId,
          message.id,
          kept.parent_id,
          kept.sequence,
          message.json,
          kept.created_at,
          now,
        ),
      );
    }
    // Checked after the upserts, so a batch of new ids (the usual save) costs no extra statement;
    // a refusal throws, and the transaction rolls every row of the batch back.
    if (replacedIds.length > 0)
      this.#assertOnBranch(chatId, branch, state.head, replacedIds, oldestReplaced);
    if (head !== state.head) {
      this.#statement(
        `UPDATE ${this.#tables.branches} SET head_message_id = ?, updated_at = MAX(updated_at, ?) WHERE chat_id = ? AND name = ?`,
      ).run(head, now, chatId, branch);
    }
    // The right-hand sides see the row as it was, so `version + 1` is the new version.
    const after = this.#statement(
      `UPDATE ${this.#tables.chats}
          SET version = version + 1, rewritten_at = CASE WHEN ? THEN version + 1 ELSE rewritten_at END,
              updated_at = MAX(updated_at, ?)
        WHERE id = ? RETURNING version, rewritten_at`,
    ).get(replacedIds.length > 0 ? 1 : 0, now, chatId) as {
      version: number;
      rewritten_at: number;
    };
    return {
      headMessageId: head,
      previousHeadId: state.head,
      version: after.version,
      rewrittenAt: after.rewritten_at,
      nodes,
    };
  }

  /**
   * Throws `MessageIdConflictError` for the first of `ids` (existing nodes the batch replaced)
   * that is not `head` or one of its ancestors. A parent always has a lower sequence than its
   * child, so the walk from the head stops below the oldest replaced node: it reads only the part
   * of the chain that could hold them.
   */
  #assertOnBranch(
    chatId: string,
    branch: string,
    head: string | null,
    ids: readonly string[],
    oldest: number,
  ): void {
    const m = this.#tables.messages;
    const found = new Set(
      this.#statement(
        `WITH RECURSIVE walk (id, parent_id) AS (
           SELECT id, parent_id FROM ${m} WHERE chat_id = @chatId AND id = @head AND sequence >= @oldest
           UNION ALL
           SELECT node.id, node.parent_id
             FROM walk JOIN ${m} AS node ON node.chat_id = @chatId AND node.id = walk.parent_id
            WHERE node.sequence >= @oldest
         )
         SELECT id FROM walk WHERE id IN (SELECT value FROM json_each(@ids))`,
      )
        .pluck()
        .all({ chatId, head, oldest, ids: JSON.stringify(ids) }) as string[],
    );
    const offBranch = ids.find((id) => !found.has(id));
    if (offBranch !== undefined)
      throw new MessageIdConflictError({ chatId, branch, messageId: offBranch });
  }

  async getChain(input: GetChainInput): Promise<ChainPage> {
    const method = 'getChain(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'headMessageId', input.headMessageId);
    if (input.until !== undefined) assertIdentifier(method, 'until', input.until);
    assertChainLimit(input.limit);
    const { chatId, headMessageId } = input;
    const until = input.until ?? null;
    const limit = input.limit ?? UNLIMITED;
    return this.#run(method, () => {
      const m = this.#tables.messages;
      // The whole walk is one statement: a recursive CTE that follows parent_id through the
      // primary key, stops before `until` and after `limit` nodes.
      const rows = this.#statement(
        `WITH RECURSIVE chain (id, parent_id, sequence, payload, created_at, updated_at, depth) AS (
           SELECT id, parent_id, sequence, payload, created_at, updated_at, 1
             FROM ${m} WHERE chat_id = @chatId AND id = @head AND id IS NOT @until
           UNION ALL
           SELECT node.id, node.parent_id, node.sequence, node.payload, node.created_at, node.updated_at, chain.depth + 1
             FROM chain JOIN ${m} AS node ON node.chat_id = @chatId AND node.id = chain.parent_id
            WHERE chain.depth < @limit AND node.id IS NOT @until
         )
         SELECT id, parent_id, sequence, payload, created_at, updated_at FROM chain ORDER BY depth DESC`,
      ).all({ chatId, head: headMessageId, until, limit }) as MessageRow[];
      const oldest = rows[0];
      if (oldest === undefined) {
        this.#requireChat(chatId);
        if (headMessageId === until) return { nodes: [], nextCursor: null, reachedUntil: true };
        throw new MessageNotFoundError(chatId, headMessageId);
      }
      const reachedUntil = until !== null && oldest.parent_id === until;
      const nextCursor =
        !reachedUntil && rows.length === limit && oldest.parent_id !== null
          ? oldest.parent_id
          : null;
      return { nodes: rows.map((row) => messageRecord(chatId, row)), nextCursor, reachedUntil };
    });
  }

  async getMessage(input: GetMessageInput): Promise<MessageNodeRecord | null> {
    const method = 'getMessage(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'messageId', input.messageId);
    return this.#run(method, () => {
      const row = this.#messageRow(input.chatId, input.messageId);
      if (row !== undefined) return messageRecord(input.chatId, row);
      this.#requireChat(input.chatId);
      return null;
    });
  }

  async createBranch(input: CreateBranchInput): Promise<BranchRecord> {
    const method = 'createBranch(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'name', input.name);
    if (input.headMessageId !== null)
      assertIdentifier(method, 'headMessageId', input.headMessageId);
    if (input.activate !== undefined && typeof input.activate !== 'boolean') {
      throw new ValidationError(`${method}: activate must be a boolean.`, {
        issues: [{ path: 'activate', message: 'expected a boolean' }],
      });
    }
    const { chatId, name, headMessageId } = input;
    return this.#run(method, () =>
      this.#write(() => {
        this.#requireChat(chatId);
        if (this.#branchRow(chatId, name) !== undefined) throw new BranchExistsError(chatId, name);
        if (headMessageId !== null && this.#messageRow(chatId, headMessageId) === undefined) {
          throw new MessageNotFoundError(chatId, headMessageId);
        }
        const now = Date.now();
        const row = this.#statement(
          `INSERT INTO ${this.#tables.branches} (chat_id, name, head_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *`,
        ).get(chatId, name, headMessageId, now, now) as BranchRow;
        this.#touchChat(chatId, now, input.activate === true ? name : undefined);
        return branchRecord(row);
      }),
    );
  }

  /**
   * Creates a branch named `nextBranchName(from, every branch name of the chat)`, reading the
   * names and inserting the branch in one `BEGIN IMMEDIATE` transaction, so concurrent forks (in
   * any process) each get their own name and none fails. `MessageNotFoundError` when
   * `headMessageId` is not a node of the chat.
   */
  async forkBranch(input: ForkBranchInput): Promise<BranchRecord> {
    const method = 'forkBranch(input)';
    assertForkBranchInput(input);
    const { chatId, from, headMessageId } = input;
    return this.#run(method, () =>
      this.#write(() => {
        this.#requireChat(chatId);
        if (headMessageId !== null && this.#messageRow(chatId, headMessageId) === undefined) {
          throw new MessageNotFoundError(chatId, headMessageId);
        }
        const names = this.#statement(`SELECT name FROM ${this.#tables.branches} WHERE chat_id = ?`)
          .pluck()
          .all(chatId) as string[];
        // ValidationError when `from` leaves no room for its `-vN` suffix.
        const name = forkBranchName(from, names);
        const now = Date.now();
        const row = this.#statement(
          `INSERT INTO ${this.#tables.branches} (chat_id, name, head_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *`,
        ).get(chatId, name, headMessageId, now, now) as BranchRow;
        this.#touchChat(chatId, now, input.activate === true ? name : undefined);
        return branchRecord(row);
      }),
    );
  }

  async getBranch(input: ChatPointerInput): Promise<BranchRecord | null> {
    const method = 'getBranch(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run(method, () => {
      const row = this.#branchRow(input.chatId, input.name);
      if (row !== undefined) return branchRecord(row);
      this.#requireChat(input.chatId);
      return null;
    });
  }

  async listBranches(chatId: string): Promise<BranchRecord[]> {
    assertIdentifier('listBranches(chatId)', 'chatId', chatId);
    return this.#run('listBranches', () =>
      this.#read(() => {
        this.#requireChat(chatId);
        const rows = this.#statement(
          `SELECT * FROM ${this.#tables.branches} WHERE chat_id = ? ORDER BY created_at, rowid`,
        ).all(chatId) as BranchRow[];
        return rows.map(branchRecord);
      }),
    );
  }

  async setActiveBranch(input: ChatPointerInput): Promise<BranchRecord> {
    const method = 'setActiveBranch(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run(method, () =>
      this.#write(() => {
        this.#requireChat(input.chatId);
        const row = this.#branchRow(input.chatId, input.name);
        if (row === undefined) throw new BranchNotFoundError(input.chatId, input.name);
        this.#touchChat(input.chatId, Date.now(), input.name);
        return branchRecord(row);
      }),
    );
  }

  async createCheckpoint(input: CreateCheckpointInput): Promise<CheckpointRecord> {
    const method = 'createCheckpoint(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'name', input.name);
    assertIdentifier(method, 'messageId', input.messageId);
    if (input.replace !== undefined && typeof input.replace !== 'boolean') {
      throw new ValidationError(`${method}: replace must be a boolean.`, {
        issues: [{ path: 'replace', message: 'expected a boolean' }],
      });
    }
    const { chatId, name, messageId } = input;
    return this.#run(method, () =>
      this.#write(() => {
        this.#requireChat(chatId);
        if (this.#messageRow(chatId, messageId) === undefined)
          throw new MessageNotFoundError(chatId, messageId);
        const taken = this.#checkpointRow(chatId, name) !== undefined;
        if (taken && input.replace !== true) throw new CheckpointExistsError(chatId, name);
        const now = Date.now();
        // Replacing keeps the row (and so its place in the listing) and records when it moved.
        const row = this.#statement(
          `INSERT INTO ${this.#tables.checkpoints} (chat_id, name, message_id, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (chat_id, name) DO UPDATE SET message_id = excluded.message_id, created_at = excluded.created_at
           RETURNING *`,
        ).get(chatId, name, messageId, now) as CheckpointRow;
        this.#touchChat(chatId, now);
        return checkpointRecord(row);
      }),
    );
  }

  async getCheckpoint(input: ChatPointerInput): Promise<CheckpointRecord | null> {
    const method = 'getCheckpoint(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run(method, () => {
      const row = this.#checkpointRow(input.chatId, input.name);
      if (row !== undefined) return checkpointRecord(row);
      this.#requireChat(input.chatId);
      return null;
    });
  }

  async listCheckpoints(chatId: string): Promise<CheckpointRecord[]> {
    assertIdentifier('listCheckpoints(chatId)', 'chatId', chatId);
    return this.#run('listCheckpoints', () =>
      this.#read(() => {
        this.#requireChat(chatId);
        return this.#checkpointRows(chatId).map(checkpointRecord);
      }),
    );
  }

  async deleteCheckpoint(input: ChatPointerInput): Promise<boolean> {
    const method = 'deleteCheckpoint(input)';
    assertIdentifier(method, 'chatId', input?.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run(method, () =>
      this.#write(() => {
        this.#requireChat(input.chatId);
        const deleted =
          this.#statement(
            `DELETE FROM ${this.#tables.checkpoints} WHERE chat_id = ? AND name = ?`,
          ).run(input.chatId, input.name).changes > 0;
        if (deleted) this.#touchChat(input.chatId, Date.now());
        return deleted;
      }),
    );
  }

  async getGraph(chatId: string): Promise<ChatGraph> {
    assertIdentifier('getGraph(chatId)', 'chatId', chatId);
    return this.#run('getGraph', () =>
      this.#read(() => {
        const chat = this.#requireChat(chatId);
        const nodes = this.#statement(
          `SELECT id, parent_id, sequence, payload, created_at, updated_at FROM ${this.#tables.messages} WHERE chat_id = ? ORDER BY sequence`,
        ).all(chatId) as MessageRow[];
        const branches = this.#statement(
          `SELECT * FROM ${this.#tables.branches} WHERE chat_id = ? ORDER BY created_at, rowid`,
        ).all(chatId) as BranchRow[];
        return {
          chat: chatRecord(chat),
          nodes: nodes.map((row) => messageRecord(chatId, row)),
          branches: branches.map(branchRecord),
          checkpoints: this.#checkpointRows(chatId).map(checkpointRecord),
        };
      }),
    );
  }

  /** Closes the database when the store opened it (never one it was given). Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    if (this.#ownsDatabase && this.#database.open) this.#database.close();
  }

  /** Same as {@link SqliteContextStore.close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** A description for logs: never the client. */
  toJSON(): {
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
      ownsDatabase: this.#ownsDatabase,
      closed: this.#closed,
    };
  }

  #assertOpen(action: string): void {
    if (this.#closed) {
      throw new StoreError(`SqliteContextStore at "${this.path}": ${action} called after close().`);
    }
    if (!this.#database.open) {
      throw new StoreError(
        `SqliteContextStore at "${this.path}": ${action} called after the database was closed by its owner.`,
      );
    }
  }

  // With `migrate: false` (or a read-only database) the schema is checked once, with a clear message.
  #checkSchema(): void {
    if (this.#schemaChecked) return;
    const version = readSqliteSchemaVersion(this.#database, { tablePrefix: this.tablePrefix });
    if (version !== SQLITE_SCHEMA_VERSION) {
      const state =
        version === 0
          ? `has no "${this.tablePrefix}" tables`
          : version > SQLITE_SCHEMA_VERSION
            ? `has "${this.tablePrefix}" tables at schema version ${version}, newer than this @ctxgraph/store-sqlite understands (${SQLITE_SCHEMA_VERSION}); upgrade it`
            : `has "${this.tablePrefix}" tables at schema version ${version}, older than ${SQLITE_SCHEMA_VERSION}`;
      const advice =
        version > SQLITE_SCHEMA_VERSION
          ? ''
          : this.#database.readonly
            ? 'It is open read-only, so the store cannot migrate it: open it writable once, or migrate it elsewhere. '
            : 'Run store.migrate() or migrateSqliteDatabase(), apply sqliteMigrationSql(), or construct the store without migrate: false. ';
      throw new SchemaVersionError(
        `SqliteContextStore at "${this.path}" ${state}. ${advice}Nothing was changed.`,
      );
    }
    this.#schemaChecked = true;
  }

  #run<T>(action: string, body: () => T): T {
    this.#assertOpen(action);
    try {
      this.#checkSchema();
      return body();
    } catch (error) {
      throw toStoreError(error, this.path, action);
    }
  }

  // better-sqlite3 transactions: `immediate` takes the write lock before the first read, so what a
  // write decides from its reads (the head it compares, the next sequence) cannot go stale.
  #write<T>(body: () => T): T {
    return this.#transaction.immediate(body) as T;
  }

  // A deferred transaction: several reads see one snapshot, without taking the write lock.
  #read<T>(body: () => T): T {
    return this.#transaction.deferred(body) as T;
  }

  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#database.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #checkSize(method: string, field: string, json: string): string {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit: only long texts need counting.
    if (json.length * 3 > this.#maxMessageBytes) {
      const bytes = Buffer.byteLength(json, 'utf8');
      if (bytes > this.#maxMessageBytes) {
        const problem = `is ${bytes} bytes of JSON, more than maxMessageBytes (${this.#maxMessageBytes})`;
        throw new ValidationError(`${method}: ${field} ${problem}. Nothing was written.`, {
          issues: [{ path: field, message: problem }],
        });
      }
    }
    return json;
  }

  #chatRow(chatId: string): ChatRow | undefined {
    return this.#statement(`SELECT * FROM ${this.#tables.chats} WHERE id = ?`).get(chatId) as
      | ChatRow
      | undefined;
  }

  #requireChat(chatId: string): ChatRow {
    const row = this.#chatRow(chatId);
    if (row === undefined) throw new ChatNotFoundError(chatId);
    return row;
  }

  #branchRow(chatId: string, name: string): BranchRow | undefined {
    return this.#statement(
      `SELECT * FROM ${this.#tables.branches} WHERE chat_id = ? AND name = ?`,
    ).get(chatId, name) as BranchRow | undefined;
  }

  #checkpointRow(chatId: string, name: string): CheckpointRow | undefined {
    return this.#statement(
      `SELECT * FROM ${this.#tables.checkpoints} WHERE chat_id = ? AND name = ?`,
    ).get(chatId, name) as CheckpointRow | undefined;
  }

  #checkpointRows(chatId: string): CheckpointRow[] {
    return this.#statement(
      `SELECT * FROM ${this.#tables.checkpoints} WHERE chat_id = ? ORDER BY created_at, rowid`,
    ).all(chatId) as CheckpointRow[];
  }

  #messageRow(chatId: string, id: string): MessageRow | undefined {
    return this.#statement(
      `SELECT id, parent_id, sequence, payload, created_at, updated_at FROM ${this.#tables.messages} WHERE chat_id = ? AND id = ?`,
    ).get(chatId, id) as MessageRow | undefined;
  }

  #activeBranch(chat: ChatRow): BranchRecord {
    const row = this.#branchRow(chat.id, chat.active_branch);
    if (row === undefined) {
      throw new StoreError(
        `SqliteContextStore at "${this.path}": chat "${chat.id}" names active branch "${chat.active_branch}", which does not exist.`,
      );
    }
    return branchRecord(row);
  }

  // The chat's version, one branch's head and the chat's highest sequence, in one lookup.
  #headState(chatId: string, branch: string): CommitStateRow & { head: string | null } {
    const t = this.#tables;
    const state = this.#statement(
      `SELECT chat.version AS version, chat.rewritten_at AS rewritten_at, branch.name AS branch_name, branch.head_message_id AS head,
              (SELECT MAX(sequence) FROM ${t.messages} WHERE chat_id = chat.id) AS max_sequence
         FROM ${t.chats} AS chat LEFT JOIN ${t.branches} AS branch ON branch.chat_id = chat.id AND branch.name = ?
        WHERE chat.id = ?`,
    ).get(branch, chatId) as CommitStateRow | undefined;
    if (state === undefined) throw new ChatNotFoundError(chatId);
    if (state.branch_name === null) throw new BranchNotFoundError(chatId, branch);
    return state;
  }

  #touchChat(chatId: string, now: number, activeBranch?: string): void {
    if (activeBranch === undefined) {
      this.#statement(
        `UPDATE ${this.#tables.chats} SET updated_at = MAX(updated_at, ?) WHERE id = ?`,
      ).run(now, chatId);
    } else {
      this.#statement(
        `UPDATE ${this.#tables.chats} SET active_branch = ?, updated_at = MAX(updated_at, ?) WHERE id = ?`,
      ).run(activeBranch, now, chatId);
    }
  }
}
