import {
  type AppendInput,
  type AppendResult,
  assertChainLimit,
  assertForkBranchInput,
  assertIdentifier,
  assertInputObject,
  assertJsonObject,
  assertOptionalBoolean,
  assertTitle,
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
  chatCursor,
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
  mergeMetadata,
  nextBranchName,
  type OpenChatInput,
  type OpenChatResult,
  OwnershipError,
  type Page,
  type PreparedCommitMessage,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  type StoredMessage,
  StoreError,
  toJsonText,
  type UpdateChatInput,
  ValidationError,
} from '@ctxgraph/fragments-core';
import postgres from 'postgres';
import { assertSchemaCurrent, runMigrations } from './migrations/migrations';
import { toStoreError } from './postgres-store-error';
import { resolveTableNames, type TableNameOptions, type TableNames } from './schema/table-names';

/** A postgres.js client (`postgres(...)`), as the app created it. */
export type PostgresClient = postgres.Sql<Record<string, unknown>>;

/** postgres.js connection options, for the client the store creates itself. */
export type PostgresConnectionOptions = postgres.Options<Record<string, postgres.PostgresType>>;

/** Options of {@link PostgresContextStore}. Give exactly one of `sql`, `connectionString` or `connection`. */
export interface PostgresContextStoreOptions extends TableNameOptions {
  /**
   * A ready postgres.js client, shared with the app. The store uses its pool and never closes
   * it. Its `prepare` setting is respected (turn it off behind PgBouncer in transaction mode).
   */
  readonly sql?: PostgresClient;
  /** A connection URL (`postgres://user:password@host:5432/database`); the store opens its own pool. */
  readonly connectionString?: string;
  /**
   * postgres.js options for the pool the store opens (with `connectionString`, or alone with
   * `host`, `database`, …). The store's defaults, which these override: `max: 3`,
   * `idle_timeout: 30`, `connect_timeout: 10`, and notices not printed.
   */
  readonly connection?: PostgresConnectionOptions;
  /**
   * Bring the schema up to date on first use (under an advisory lock; safe when many servers
   * start at once). With `false`, the store only checks the schema version on first use and
   * refuses a missing, older or newer one with `SchemaVersionError`: run {@link PostgresContextStore.migrate}
   * or the SQL of `getMigrationSql()` in your deploy instead.
   * @default true
   */
  readonly migrate?: boolean;
}

/** The pool settings the store uses for a pool it opens: small, because an app often runs many servers. */
export const DEFAULT_POOL_OPTIONS: Readonly<PostgresConnectionOptions> = Object.freeze({
  max: 3,
  idle_timeout: 30,
  connect_timeout: 10,
});

type Queryable = Pick<postgres.Sql, 'unsafe'>;
type Parameter = string | number | boolean | null | readonly string[];
type Row = readonly unknown[];

const CHAT_COLUMNS =
  'c.chat_id, c.user_id, c.title, c.metadata::text, c.active_branch, c.version, c.rewritten_at, c.created_at, c.updated_at';
const BRANCH_COLUMNS = 'b.chat_id, b.name, b.head_message_id, b.created_at, b.updated_at';
const MESSAGE_COLUMNS =
  'm.chat_id, m.message_id, m.parent_id, m.sequence, m.message::text, m.created_at, m.updated_at';
const CHECKPOINT_COLUMNS = 'k.chat_id, k.name, k.message_id, k.created_at';
const CHAT_WIDTH = 9;

/** How often a call retries on its own after a race it can settle by itself (see `commit`). */
const MAX_ATTEMPTS = 4;

function text(value: unknown): string {
  return String(value);
}

function optionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function integer(value: unknown): number {
  return Number(value);
}

function chatFrom(row: Row, offset = 0): ChatRecord {
  return {
    id: text(row[offset]),
    userId: text(row[offset + 1]),
    title: optionalText(row[offset + 2]),
    metadata: JSON.parse(text(row[offset + 3])) as JsonObject,
    activeBranch: text(row[offset + 4]),
    version: integer(row[offset + 5]),
    rewrittenAt: integer(row[offset + 6]),
    createdAt: integer(row[offset + 7]),
    updatedAt: integer(row[offset + 8]),
  };
}

function branchFrom(row: Row, offset = 0): BranchRecord {
  return {
    chatId: text(row[offset]),
    name: text(row[offset + 1]),
    headMessageId: optionalText(row[offset + 2]),
    createdAt: integer(row[offset + 3]),
    updatedAt: integer(row[offset + 4]),
  };
}

function messageFrom(row: Row, offset = 0): MessageNodeRecord {
  return {
    chatId: text(row[offset]),
    id: text(row[offset + 1]),
    parentId: optionalText(row[offset + 2]),
    sequence: integer(row[offset + 3]),
    message: JSON.parse(text(row[offset + 4])) as StoredMessage,
    createdAt: integer(row[offset + 5]),
    updatedAt: integer(row[offset + 6]),
  };
}

function checkpointFrom(row: Row, offset = 0): CheckpointRecord {
  return {
    chatId: text(row[offset]),
    name: text(row[offset + 1]),
    messageId: text(row[offset + 2]),
    createdAt: integer(row[offset + 3]),
  };
}

/** The result of a write statement that wrote: its rows carry the head, version and nodes. */
function writeResult(
  chatId: string,
  prepared: readonly PreparedCommitMessage[],
  rows: readonly Row[],
): AppendResult {
  const first = rows[0] as Row;
  const stored = new Map<string, Row>();
  for (const row of rows) if (row[3] !== null) stored.set(text(row[3]), row);
  const nodes = prepared.map((message): MessageNodeRecord => {
    const row = stored.get(message.id);
    if (row === undefined)
      throw new StoreError(`commit: PostgreSQL did not report message "${message.id}" as stored.`);
    return {
      chatId,
      id: message.id,
      parentId: optionalText(row[4]),
      sequence: integer(row[5]),
      message: JSON.parse(message.json) as StoredMessage,
      createdAt: integer(row[6]),
      updatedAt: integer(row[7]),
    };
  });
  return {
    headMessageId: optionalText(first[2]),
    version: integer(first[0]),
    rewrittenAt: integer(first[1]),
    nodes,
    previousHeadId: optionalText(first[9]),
  };
}

function isUniqueViolationOf(error: unknown, constraint: string): boolean {
  const shape = error as { code?: unknown; constraint_name?: unknown } | null;
  return (
    typeof shape === 'object' &&
    shape !== null &&
    shape.code === '23505' &&
    shape.constraint_name === constraint
  );
}

function isRetryableRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * A `ContextStore` on PostgreSQL through postgres.js: the store for apps that run more than one
 * server. Every write is one transaction (a commit is a single statement that checks and moves
 * the branch head, inserts the nodes and bumps the chat's version), chains are read with one
 * recursive query, and every key starts with the chat id.
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
export class PostgresContextStore implements ContextStore {
  /** The contract version this store implements. */
  readonly specificationVersion: 'v1' = 'v1';
  /** Data lives in the database; any number of processes may share it. */
  readonly capabilities: ContextStoreCapabilities = Object.freeze({
    persistent: true,
    multiProcess: true,
    append: true,
    forkBranch: true,
  });
  /** The schema the tables live in. */
  readonly schema: string;
  /** The prefix of every table name. */
  readonly tablePrefix: string;

  readonly #sql: PostgresClient;
  readonly #ownsClient: boolean;
  readonly #migrate: boolean;
  readonly #names: TableNames;
  #ready: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /**
   * @param options A connection URL, or {@link PostgresContextStoreOptions}.
   */
  constructor(options: string | PostgresContextStoreOptions) {
    const method = 'new PostgresContextStore(options)';
    const resolved: PostgresContextStoreOptions =
      typeof options === 'string' ? { connectionString: options } : options;
    if (typeof resolved !== 'object' || resolved === null) {
      throw new ValidationError(`${method}: options must be a connection string or an object.`, {
        issues: [{ path: 'options', message: 'expected a string or an object' }],
      });
    }
    this.#names = resolveTableNames(method, resolved);
    this.schema = this.#names.schema;
    this.tablePrefix = this.#names.tablePrefix;
    assertOptionalBoolean(method, 'migrate', resolved.migrate);
    this.#migrate = resolved.migrate ?? true;
    const given = [resolved.sql, resolved.connectionString].filter(
      (value) => value !== undefined,
    ).length;
    if (given > 1) {
      throw new ValidationError(
        `${method}: give either sql (a client you own) or connectionString, not both.`,
        {
          issues: [{ path: 'sql', message: 'sql and connectionString are exclusive' }],
        },
      );
    }
    if (resolved.sql !== undefined) {
      if (
        typeof resolved.sql !== 'function' ||
        typeof (resolved.sql as { unsafe?: unknown }).unsafe !== 'function'
      ) {
        throw new ValidationError(
          `${method}: sql must be a postgres.js client (the function postgres() returns).`,
          {
            issues: [{ path: 'sql', message: 'expected a postgres.js Sql instance' }],
          },
        );
      }
      if (resolved.connection !== undefined) {
        throw new ValidationError(
          `${method}: connection options apply to a pool the store opens; they cannot change the client given as sql.`,
          {
            issues: [{ path: 'connection', message: 'not allowed together with sql' }],
          },
        );
      }
      this.#sql = resolved.sql;
      this.#ownsClient = false;
      return;
    }
    if (
      resolved.connectionString !== undefined &&
      (typeof resolved.connectionString !== 'string' || resolved.connectionString === '')
    ) {
      throw new ValidationError(`${method}: connectionString must be a non-empty string.`, {
        issues: [{ path: 'connectionString', message: 'expected a non-empty string' }],
      });
    }
    if (resolved.connectionString === undefined && resolved.connection === undefined) {
      throw new ValidationError(
        `${method}: give sql (a postgres.js client), connectionString, or connection options.`,
        {
          issues: [{ path: 'options', message: 'no way to reach the database' }],
        },
      );
    }
    const poolOptions: PostgresConnectionOptions = {
      ...DEFAULT_POOL_OPTIONS,
      onnotice: () => {},
      ...resolved.connection,
    };
    this.#sql = (resolved.connectionString === undefined
      ? postgres(poolOptions)
      : postgres(resolved.connectionString, poolOptions)) as unknown as PostgresClient;
    this.#ownsClient = true;
  }

  /**
   * Brings the schema to the version this code needs, now (instead of on first use). Safe to
   * call from many servers at once. Returns the version before and after.
   */
  async migrate(): Promise<{ readonly from: number; readonly to: number }> {
    this.#assertOpen('migrate');
    try {
      const result = await runMigrations(this.#sql as unknown as postgres.Sql, this.#names);
      this.#ready = Promise.resolve();
      return result;
    } catch (error) {
      throw toStoreError('migrate', error, true);
    }
  }

  /** Creates the chat with an empty active `main` branch, or loads it (ownership checked first). */
  async openChat(input: OpenChatInput): Promise<OpenChatResult> {
    const method = 'openChat(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'userId', input.userId);
    assertTitle(method, input.title, false);
    let metadataText: string | undefined;
    if (input.metadata !== undefined) {
      assertJsonObject(method, 'metadata', input.metadata);
      metadataText = toJsonText(method, 'metadata', input.metadata);
    }
    const { chatId, userId } = input;
    return this.#run('openChat', true, async (sql) => {
      const names = this.#names;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        // The branch is joined only for the owner, so another user's call reads nothing of it.
        const existing = await this.#query(
          sql,
          `SELECT ${CHAT_COLUMNS}, ${BRANCH_COLUMNS} FROM ${names.chats} c
           LEFT JOIN ${names.branches} b ON b.chat_id = c.chat_id AND b.name = c.active_branch AND c.user_id = $2
           WHERE c.chat_id = $1`,
          [chatId, userId],
        );
        const row = existing[0];
        if (row !== undefined) {
          if (text(row[1]) !== userId) throw new OwnershipError(chatId, userId);
          let chat = chatFrom(row);
          if (input.metadata !== undefined)
            chat = await this.#mergeChat(chatId, { metadata: input.metadata });
          if (row[CHAT_WIDTH] === null) {
            throw new StoreError(
              `openChat: chat "${chatId}" has no row for its active branch "${chat.activeBranch}"; the data was changed outside this store.`,
            );
          }
          return { chat, branch: branchFrom(row, CHAT_WIDTH), created: false };
        }
        const now = Date.now();
        // ON CONFLICT DO NOTHING lets concurrent first opens race safely: the losers insert
        // nothing, and the next loop's read (a new statement, so a new snapshot) finds the winner's chat.
        const inserted = await this.#query(
          sql,
          `WITH c AS (
             INSERT INTO ${names.chats} (chat_id, user_id, title, metadata, active_branch, created_at, updated_at)
             VALUES ($1, $2, $3, $4::text::json, 'main', $5, $5)
             ON CONFLICT (chat_id) DO NOTHING
             RETURNING *
           ), b AS (
             INSERT INTO ${names.branches} (chat_id, name, head_message_id, created_at, updated_at)
             SELECT chat_id, 'main', NULL, $5, $5 FROM c
             RETURNING *
           )
           SELECT ${CHAT_COLUMNS}, ${BRANCH_COLUMNS} FROM c CROSS JOIN b`,
          [chatId, userId, input.title ?? null, metadataText ?? '{}', now],
        );
        const created = inserted[0];
        if (created !== undefined)
          return {
            chat: chatFrom(created),
            branch: branchFrom(created, CHAT_WIDTH),
            created: true,
          };
      }
      throw new StoreError(
        `openChat: chat "${chatId}" kept appearing and disappearing (created and deleted by other writers); try again.`,
      );
    });
  }

  /** The chat, or null. */
  async getChat(chatId: string): Promise<ChatRecord | null> {
    assertIdentifier('getChat(chatId)', 'chatId', chatId);
    return this.#run('getChat', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT ${CHAT_COLUMNS} FROM ${this.#names.chats} c WHERE c.chat_id = $1`,
        [chatId],
      );
      return rows[0] === undefined ? null : chatFrom(rows[0]);
    });
  }

  /** Sets the title and shallow-merges metadata; returns the chat as stored. */
  async updateChat(input: UpdateChatInput): Promise<ChatRecord> {
    const method = 'updateChat(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertTitle(method, input.title, true);
    if (input.metadata !== undefined) {
      assertJsonObject(method, 'metadata', input.metadata);
      toJsonText(method, 'metadata', input.metadata);
    }
    return this.#run('updateChat', true, () =>
      this.#mergeChat(input.chatId, {
        ...(input.title === undefined ? {} : { title: input.title }),
        ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      }),
    );
  }

  /** A user's chats, most recently updated first (ties by id, in code point order), by cursor. */
  async listChats(input: ListChatsInput): Promise<Page<ChatRecord>> {
    assertInputObject('listChats(input)', input);
    const query = prepareChatList(input);
    return this.#run('listChats', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT ${CHAT_COLUMNS} FROM ${this.#names.chats} c
         WHERE c.user_id = $1
           AND ($2::bigint IS NULL OR c.updated_at < $2::bigint OR (c.updated_at = $2::bigint AND c.chat_id COLLATE "C" > $3::text COLLATE "C"))
         ORDER BY c.updated_at DESC, c.chat_id COLLATE "C"
         LIMIT $4`,
        [query.userId, query.after?.updatedAt ?? null, query.after?.id ?? null, query.limit + 1],
      );
      const items = rows.slice(0, query.limit).map((row) => chatFrom(row));
      const last = items[items.length - 1];
      return {
        items,
        nextCursor: rows.length > query.limit && last !== undefined ? chatCursor(last) : null,
      };
    });
  }

  /** Deletes the chat with its nodes, branches and checkpoints. False when there was no such chat. */
  async deleteChat(chatId: string): Promise<boolean> {
    assertIdentifier('deleteChat(chatId)', 'chatId', chatId);
    return this.#run('deleteChat', true, () =>
      this.#transaction(async (sql) => {
        // Branch rows first: commit locks the branch row before the chat row, and taking them in
        // the same order here means a delete racing a commit never deadlocks.
        await this.#query(sql, `DELETE FROM ${this.#names.branches} WHERE chat_id = $1`, [chatId]);
        const rows = await this.#query(
          sql,
          `DELETE FROM ${this.#names.chats} WHERE chat_id = $1 RETURNING 1`,
          [chatId],
        );
        return rows.length > 0;
      }),
    );
  }

  /** The chat's version and rewrittenAt with one branch's head, in one query. */
  async getHead(input: GetHeadInput): Promise<HeadState> {
    const method = 'getHead(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'branch', input.branch);
    return this.#run('getHead', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT c.version, c.rewritten_at, b.name, b.head_message_id FROM ${this.#names.chats} c
         LEFT JOIN ${this.#names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
         WHERE c.chat_id = $1`,
        [input.chatId, input.branch],
      );
      const row = rows[0];
      if (row === undefined) throw new ChatNotFoundError(input.chatId);
      if (row[2] === null) throw new BranchNotFoundError(input.chatId, input.branch);
      return {
        version: integer(row[0]),
        rewrittenAt: integer(row[1]),
        headMessageId: optionalText(row[3]),
      };
    });
  }

  /**
   * Writes the messages and moves the head in ONE statement (so one transaction and one round
   * trip): the branch row is updated only where its head is still `expectedHeadId`, and every
   * other change in the statement hangs off that update, so a lost race writes nothing. Under
   * READ COMMITTED a writer that waited for the branch row re-checks the head against the
   * committed row, which makes the update a compare-and-set.
   */
  async commit(input: CommitInput): Promise<CommitResult> {
    const prepared = prepareCommit(input);
    const { chatId, branch, expectedHeadId } = input;
    return this.#run('commit', true, async (sql) => {
      const outcome = await this.#write(sql, 'commit', chatId, branch, expectedHeadId, prepared);
      const { previousHeadId: _previous, ...result } = outcome;
      return result;
    });
  }

  /**
   * The write of `commit`, attached at whatever the branch head is when PostgreSQL takes the
   * branch row lock, in ONE statement: appenders to a branch queue on that lock instead of
   * racing, so this never reports a conflict. Same validation, same replace-in-place rule
   * (against the head it finds), same +1 version.
   */
  async append(input: AppendInput): Promise<AppendResult> {
    const prepared = prepareAppend(input);
    const { chatId, branch } = input;
    return this.#run('append', true, (sql) =>
      this.#write(sql, 'append', chatId, branch, null, prepared),
    );
  }

  async #write(
    sql: Queryable,
    mode: 'commit' | 'append',
    chatId: string,
    branch: string,
    expectedHeadId: string | null,
    prepared: readonly PreparedCommitMessage[],
  ): Promise<AppendResult> {
    const names = this.#names;
    const statement = this.#writeSql(mode);
    const parameters: Parameter[] = [
      chatId,
      branch,
      prepared.map((message) => message.id),
      prepared.map((message) => message.role),
      prepared.map((message) => message.json),
      Date.now(),
    ];
    if (mode === 'commit') parameters.push(expectedHeadId);
    // Taking the branch lock in a statement of its own first gives the write statement a
    // snapshot that already holds everything committed before the lock was granted.
    let lockFirst = false;
    for (let attempt = 1; ; attempt += 1) {
      let rows: Row[];
      try {
        rows = lockFirst
          ? await this.#transaction(async (transaction) => {
              await this.#query(
                transaction,
                `SELECT 1 FROM ${names.branches} WHERE chat_id = $1 AND name = $2 FOR NO KEY UPDATE`,
                [chatId, branch],
              );
              return this.#query(transaction, statement, parameters);
            })
          : await this.#query(sql, statement, parameters);
      } catch (error) {
        // The existing-id check reads the snapshot the statement started with; another writer
        // may insert the same id meanwhile. Running again sees it and replaces it, or refuses it.
        const raced =
          isUniqueViolationOf(error, `${names.tablePrefix}messages_pkey`) || isRetryableRace(error);
        if (raced && attempt < MAX_ATTEMPTS) continue;
        throw error;
      }
      const first = rows[0] as Row;
      if (first[0] !== null) return writeResult(chatId, prepared, rows);
      // Nothing was written. The locked branch row says which head won.
      if (first[8] !== null) {
        const currentHeadId = optionalText(first[9]);
        if (mode === 'commit' && currentHeadId !== expectedHeadId) {
          throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId });
        }
        if (first[11] === true) {
          // The head was committed after the statement's snapshot was taken, so the walk that
          // places the ids being replaced could not see it: run again, lock first.
          if (attempt >= MAX_ATTEMPTS)
            throw new StoreError(
              `${mode}: the head of branch "${branch}" in chat "${chatId}" kept moving while replacing messages; nothing was written, try again.`,
            );
          lockFirst = mode === 'append';
          continue;
        }
        if (first[10] !== null) {
          throw new MessageIdConflictError({ chatId, branch, messageId: text(first[10]) });
        }
        throw new StoreError(
          `${mode}: PostgreSQL wrote nothing to branch "${branch}" of chat "${chatId}" and did not say why; nothing was written.`,
        );
      }
      // No branch row: a new statement tells a missing chat from a missing branch.
      const state = await this.#query(
        sql,
        `SELECT b.name, b.head_message_id FROM ${names.chats} c
         LEFT JOIN ${names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
         WHERE c.chat_id = $1`,
        [chatId, branch],
      );
      const row = state[0];
      if (row === undefined) throw new ChatNotFoundError(chatId);
      if (row[0] === null) throw new BranchNotFoundError(chatId, branch);
      const currentHeadId = optionalText(row[1]);
      if (attempt >= MAX_ATTEMPTS || (mode === 'commit' && currentHeadId !== expectedHeadId)) {
        if (mode === 'commit')
          throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId });
        throw new StoreError(
          `append: branch "${branch}" of chat "${chatId}" kept disappearing and reappearing; nothing was written, try again.`,
        );
      }
      // The branch is there again (the chat was recreated meanwhile): try again.
    }
  }

  readonly #writeStatements = new Map<'commit' | 'append', string>();

  #writeSql(mode: 'commit' | 'append'): string {
    const cached = this.#writeStatements.get(mode);
    if (cached !== undefined) return cached;
    const names = this.#names;
    const headMatches =
      mode === 'commit' ? 'AND l.head_message_id IS NOT DISTINCT FROM $7::text' : '';
    // $1 chat, $2 branch, $3 ids, $4 roles, $5 message JSON, $6 now (ms), $7 the expected head
    // (commit only). Data-modifying CTEs all run against one snapshot and see each other only
    // through RETURNING, so the chain of dependencies (gate → chat → inserted/replaced) is what
    // makes them all-or-nothing: with no gate row, no other CTE has a row to act on.
    //
    // `locked` takes the branch row lock first: under READ COMMITTED a locking read that had to
    // wait for another writer returns the row as that writer committed it, so the head compared
    // (commit), attached to (append) and reported back is the current one, not the snapshot's.
    // The chat row is updated the same way, so version, sequence numbers and the newest node
    // are current too.
    //
    // `spans` places the ids that already exist, walking up from the head one run at a time (see
    // the `chain runs` migration): a node is on the branch when its sequence falls in one of the
    // spans. The walk stops once a span starts at or below the smallest sequence among those ids
    // (a parent's sequence is always below its child's), so correcting the last reply reads one
    // span. An existing id in no span is on another branch: `problem.off_branch` names it and
    // nothing is written. When the head itself is newer than the snapshot (another writer
    // committed it while this one waited for the lock), the walk cannot see it: `problem.stale`
    // asks the caller to run again. Each lookup is a LATERAL probe with LIMIT 1, so it is an index
    // probe whatever the planner knows about the table.
    //
    // The new nodes continue the run of the head they attach to when that head is the newest
    // node of the chat (`last_message_id`, still at `last_sequence`); otherwise they start one.
    const statement = `WITH RECURSIVE input AS (
  SELECT t.id, t.role, t.body, t.ordinal
  FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t(id, role, body, ordinal)
), locked AS (
  SELECT b.head_message_id FROM ${names.branches} b
  WHERE b.chat_id = $1::text AND b.name = $2::text
  FOR NO KEY UPDATE
), existing AS (
  SELECT m.message_id, m.sequence FROM ${names.messages} m
  WHERE m.chat_id = $1::text AND m.message_id = ANY ($3::text[])
), spans AS (
  SELECT h.message_id, h.parent_id, h.sequence, coalesce(h.run_start, h.sequence) AS low
  FROM locked l CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = $1::text AND m.message_id = l.head_message_id LIMIT 1
  ) h
  WHERE EXISTS (SELECT 1 FROM existing)
  UNION ALL
  SELECT q.message_id, q.parent_id, q.sequence, coalesce(q.run_start, q.sequence)
  FROM spans s
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.low = s.sequence THEN s.parent_id ELSE (
      SELECT f.parent_id FROM ${names.messages} f WHERE f.chat_id = $1::text AND f.sequence = s.low
    ) END AS id
  ) first_parent
  CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = $1::text AND m.message_id = first_parent.id LIMIT 1
  ) q
  WHERE s.low > (SELECT min(e.sequence) FROM existing e)
), problem AS (
  SELECT
    (SELECT i.id FROM input i JOIN existing e ON e.message_id = i.id
     WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE e.sequence BETWEEN s.low AND s.sequence)
     ORDER BY i.ordinal LIMIT 1) AS off_branch,
    (EXISTS (SELECT 1 FROM existing) AND l.head_message_id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.message_id = l.head_message_id)) AS stale
  FROM locked l
), fresh AS (
  SELECT i.id, i.role, i.body,
    row_number() OVER (ORDER BY i.ordinal) AS rank,
    lag(i.id) OVER (ORDER BY i.ordinal) AS previous_id
  FROM input i
  WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.message_id = i.id)
), fresh_summary AS (
  SELECT count(*)::bigint AS n, (SELECT f.id FROM fresh f ORDER BY f.rank DESC LIMIT 1) AS last_id FROM fresh
), gate AS (
  UPDATE ${names.branches} b SET
    head_message_id = coalesce(s.last_id, b.head_message_id),
    updated_at = CASE WHEN s.n > 0 THEN greatest(b.updated_at, $6::bigint) ELSE b.updated_at END
  FROM fresh_summary s, locked l, problem p
  WHERE b.chat_id = $1::text AND b.name = $2::text ${headMatches}
    AND p.off_branch IS NULL AND NOT p.stale
  RETURNING b.head_message_id, s.n, l.head_message_id AS previous_head
), chat AS (
  UPDATE ${names.chats} c SET
    version = c.version + 1,
    rewritten_at = CASE WHEN EXISTS (SELECT 1 FROM existing) THEN c.version + 1 ELSE c.rewritten_at END,
    last_sequence = c.last_sequence + g.n,
    last_run_start = CASE
      WHEN g.n = 0 THEN c.last_run_start
      WHEN g.previous_head = c.last_message_id AND c.last_message_sequence = c.last_sequence THEN c.last_run_start
      ELSE c.last_sequence + 1 END,
    last_message_id = CASE WHEN g.n = 0 THEN c.last_message_id ELSE g.head_message_id END,
    last_message_sequence = CASE WHEN g.n = 0 THEN c.last_message_sequence ELSE c.last_sequence + g.n END,
    updated_at = greatest(c.updated_at, $6::bigint)
  FROM gate g
  WHERE c.chat_id = $1::text
  RETURNING c.version, c.rewritten_at, c.last_sequence, c.last_run_start, g.n, g.head_message_id, g.previous_head
), inserted AS (
  INSERT INTO ${names.messages} (chat_id, message_id, parent_id, sequence, run_start, role, message, created_at, updated_at)
  SELECT $1::text, f.id, CASE WHEN f.rank = 1 THEN ch.previous_head ELSE f.previous_id END,
    ch.last_sequence - ch.n + f.rank, ch.last_run_start, f.role, f.body::json, $6::bigint, $6::bigint
  FROM fresh f CROSS JOIN chat ch
  RETURNING message_id, parent_id, sequence, created_at, updated_at
), replaced AS (
  UPDATE ${names.messages} m SET role = i.role, message = i.body::json, updated_at = greatest(m.updated_at, $6::bigint)
  FROM input i CROSS JOIN chat ch
  WHERE m.chat_id = $1::text AND m.message_id = i.id AND EXISTS (SELECT 1 FROM existing e WHERE e.message_id = i.id)
  RETURNING m.message_id, m.parent_id, m.sequence, m.created_at, m.updated_at
)
SELECT ch.version, ch.rewritten_at, ch.head_message_id, r.message_id, r.parent_id, r.sequence, r.created_at, r.updated_at,
  l.found, coalesce(ch.previous_head, l.head_message_id), p.off_branch, p.stale
FROM (SELECT 1) AS one
LEFT JOIN (SELECT true AS found, head_message_id FROM locked) l ON true
LEFT JOIN problem p ON true
LEFT JOIN chat ch ON true
LEFT JOIN (SELECT * FROM inserted UNION ALL SELECT * FROM replaced) r ON ch.version IS NOT NULL`;
    this.#writeStatements.set(mode, statement);
    return statement;
  }

  /**
   * The chain from a node back toward the root in one recursive query that stops at `until` and
   * after `limit` nodes, oldest first.
   */
  async getChain(input: GetChainInput): Promise<ChainPage> {
    const method = 'getChain(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'headMessageId', input.headMessageId);
    if (input.until !== undefined) assertIdentifier(method, 'until', input.until);
    assertChainLimit(input.limit);
    const { chatId, headMessageId, until, limit } = input;
    return this.#run('getChain', false, async (sql) => {
      const names = this.#names;
      const rows = await this.#query(sql, this.#chainSql(), [
        chatId,
        headMessageId,
        until ?? null,
        // Any limit beyond the largest safe integer is "unlimited"; as text it always fits bigint.
        limit === undefined ? null : String(Math.min(limit, Number.MAX_SAFE_INTEGER)),
      ]);
      const nodes = rows.map((row) => messageFrom(row));
      const oldest = nodes[0];
      if (oldest === undefined) {
        const found = await this.#query(
          sql,
          `SELECT m.message_id FROM ${names.chats} c
           LEFT JOIN ${names.messages} m ON m.chat_id = c.chat_id AND m.message_id = $2
           WHERE c.chat_id = $1`,
          [chatId, headMessageId],
        );
        if (found[0] === undefined) throw new ChatNotFoundError(chatId);
        if (found[0][0] === null) throw new MessageNotFoundError(chatId, headMessageId);
        // The head is `until` itself: the caller already has everything.
        return { nodes: [], nextCursor: null, reachedUntil: true };
      }
      const reachedUntil = until !== undefined && oldest.parentId === until;
      const cut =
        limit !== undefined && nodes.length === limit && oldest.parentId !== null && !reachedUntil;
      return { nodes, nextCursor: cut ? oldest.parentId : null, reachedUntil };
    });
  }

  #chainStatement: string | undefined;

  #chainSql(): string {
    if (this.#chainStatement !== undefined) return this.#chainStatement;
    const messages = this.#names.messages;
    // $1 chat, $2 head, $3 until (or null), $4 limit (or null).
    // The walk goes from the head toward the root one run at a time (see the `chain runs`
    // migration): each `spans` row is a node q and stands for the chain from q back to the first
    // node of its run, sequences low..q.sequence. The next span starts at the parent of that
    // first node. Every lookup is a LATERAL probe with LIMIT 1 or a range of the (chat_id,
    // sequence) key, so the plan is index probes whatever the planner knows about the table: a
    // plain recursive join is hash-joined against every row of the chat at every step when
    // statistics are missing, or when one chat fills most of the table. It stops at the span
    // that holds `until` (all of a span's sequences are on the chain, so that is the test) and
    // once `limit` nodes are covered; the nodes are then read span by span with range scans.
    this.#chainStatement = `WITH RECURSIVE target AS (
  SELECT (SELECT u.sequence FROM ${messages} u WHERE u.chat_id = $1::text AND u.message_id = $3::text) AS until_sequence
), spans AS (
  SELECT h.message_id, h.parent_id, h.sequence, h.message, h.created_at, h.updated_at,
    coalesce(h.run_start, h.sequence) AS low,
    h.sequence - coalesce(h.run_start, h.sequence) + 1 AS covered
  FROM ${messages} h
  WHERE h.chat_id = $1::text AND h.message_id = $2::text
  UNION ALL
  SELECT q.message_id, q.parent_id, q.sequence, q.message, q.created_at, q.updated_at,
    coalesce(q.run_start, q.sequence),
    s.covered + q.sequence - coalesce(q.run_start, q.sequence) + 1
  FROM spans s
  CROSS JOIN target t
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.low = s.sequence THEN s.parent_id ELSE (
      SELECT f.parent_id FROM ${messages} f WHERE f.chat_id = $1::text AND f.sequence = s.low
    ) END AS id
  ) first_parent
  CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.message, m.created_at, m.updated_at, m.run_start
    FROM ${messages} m
    WHERE m.chat_id = $1::text AND m.message_id = first_parent.id
    LIMIT 1
  ) q
  WHERE (t.until_sequence IS NULL OR t.until_sequence NOT BETWEEN s.low AND s.sequence)
    AND ($4::bigint IS NULL OR s.covered < $4::bigint)
), nodes AS (
  SELECT s.message_id, s.parent_id, s.sequence, s.message, s.created_at, s.updated_at FROM spans s
  UNION ALL
  SELECT r.message_id, r.parent_id, r.sequence, r.message, r.created_at, r.updated_at
  FROM spans s CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.message, m.created_at, m.updated_at
    FROM ${messages} m
    WHERE s.low < s.sequence AND m.chat_id = $1::text AND m.sequence >= s.low AND m.sequence < s.sequence
  ) r
), wanted AS (
  SELECT n.* FROM nodes n
  WHERE n.sequence > coalesce((
    SELECT t.until_sequence FROM target t
    WHERE EXISTS (SELECT 1 FROM spans s WHERE t.until_sequence BETWEEN s.low AND s.sequence)
  ), 0)
  ORDER BY n.sequence DESC
  LIMIT $4::bigint
)
SELECT $1::text, w.message_id, w.parent_id, w.sequence, w.message::text, w.created_at, w.updated_at
FROM wanted w ORDER BY w.sequence`;
    return this.#chainStatement;
  }

  /** One node, or null. */
  async getMessage(input: GetMessageInput): Promise<MessageNodeRecord | null> {
    const method = 'getMessage(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'messageId', input.messageId);
    return this.#run('getMessage', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT c.chat_id, ${MESSAGE_COLUMNS} FROM ${this.#names.chats} c
         LEFT JOIN ${this.#names.messages} m ON m.chat_id = c.chat_id AND m.message_id = $2
         WHERE c.chat_id = $1`,
        [input.chatId, input.messageId],
      );
      const row = rows[0];
      if (row === undefined) throw new ChatNotFoundError(input.chatId);
      return row[2] === null ? null : messageFrom(row, 1);
    });
  }

  /** Creates a branch, optionally making it the active one in the same transaction. */
  async createBranch(input: CreateBranchInput): Promise<BranchRecord> {
    const method = 'createBranch(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    if (input.headMessageId !== null)
      assertIdentifier(method, 'headMessageId', input.headMessageId);
    assertOptionalBoolean(method, 'activate', input.activate);
    const { chatId, name, headMessageId } = input;
    return this.#run('createBranch', true, () =>
      this.#transaction(async (sql) => {
        const names = this.#names;
        const now = Date.now();
        await this.#lockChat(sql, chatId, now, input.activate === true ? name : null);
        if (headMessageId !== null) await this.#assertMessageExists(sql, chatId, headMessageId);
        const rows = await this.#query(
          sql,
          `INSERT INTO ${names.branches} AS b (chat_id, name, head_message_id, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $4)
           ON CONFLICT (chat_id, name) DO NOTHING
           RETURNING ${BRANCH_COLUMNS}`,
          [chatId, name, headMessageId, now],
        );
        if (rows[0] === undefined) throw new BranchExistsError(chatId, name);
        return branchFrom(rows[0]);
      }),
    );
  }

  /**
   * Creates a fork named `nextBranchName(from, every branch name of the chat)` in one
   * transaction that holds the chat row lock while it reads the names and inserts the branch,
   * so concurrent forks queue and each gets its own name. `MessageNotFoundError` when the head
   * is not in the chat.
   */
  async forkBranch(input: ForkBranchInput): Promise<BranchRecord> {
    assertForkBranchInput(input);
    const { chatId, from, headMessageId } = input;
    return this.#run('forkBranch', true, () =>
      this.#transaction(async (sql) => {
        const names = this.#names;
        const now = Date.now();
        // Every branch is created under this lock (openChat creates `main` with the chat row),
        // and the next statement's snapshot is taken after it is granted: the names are complete.
        await this.#lockChat(sql, chatId, now, null);
        const found = await this.#query(
          sql,
          `SELECT (SELECT array_agg(b.name) FROM ${names.branches} b WHERE b.chat_id = $1),
             $2::text IS NULL OR EXISTS (SELECT 1 FROM ${names.messages} m WHERE m.chat_id = $1 AND m.message_id = $2::text)`,
          [chatId, headMessageId],
        );
        const row = found[0] as Row;
        if (row[1] !== true) throw new MessageNotFoundError(chatId, headMessageId as string);
        const name = nextBranchName(from, (row[0] as string[] | null) ?? []);
        try {
          assertIdentifier('forkBranch(input)', 'from', name);
        } catch (error) {
          throw new ValidationError(
            `forkBranch(input): the next fork of "${from}" would be named "${name}", which is not a valid branch name (${(error as Error).message}). Nothing was created; fork from a shorter name or use createBranch with a name of your own.`,
            { issues: [{ path: 'from', message: 'the derived branch name is too long' }] },
          );
        }
        const rows = await this.#query(
          sql,
          `WITH created AS (
             INSERT INTO ${names.branches} AS b (chat_id, name, head_message_id, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $4)
             RETURNING ${BRANCH_COLUMNS}
           ), activated AS (
             UPDATE ${names.chats} c SET active_branch = $2
             WHERE c.chat_id = $1 AND $5 AND EXISTS (SELECT 1 FROM created)
             RETURNING 1
           )
           SELECT * FROM created`,
          [chatId, name, headMessageId, now, input.activate === true],
        );
        return branchFrom(rows[0] as Row);
      }),
    );
  }

  /** A branch, or null. */
  async getBranch(input: ChatPointerInput): Promise<BranchRecord | null> {
    const method = 'getBranch(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run('getBranch', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT c.chat_id, ${BRANCH_COLUMNS} FROM ${this.#names.chats} c
         LEFT JOIN ${this.#names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
         WHERE c.chat_id = $1`,
        [input.chatId, input.name],
      );
      const row = rows[0];
      if (row === undefined) throw new ChatNotFoundError(input.chatId);
      return row[2] === null ? null : branchFrom(row, 1);
    });
  }

  /** Every branch of the chat, oldest first. */
  async listBranches(chatId: string): Promise<BranchRecord[]> {
    assertIdentifier('listBranches(chatId)', 'chatId', chatId);
    return this.#run('listBranches', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT c.chat_id, ${BRANCH_COLUMNS} FROM ${this.#names.chats} c
         LEFT JOIN ${this.#names.branches} b ON b.chat_id = c.chat_id
         WHERE c.chat_id = $1
         ORDER BY b.created_at, b.ordinal`,
        [chatId],
      );
      if (rows.length === 0) throw new ChatNotFoundError(chatId);
      return rows.filter((row) => row[2] !== null).map((row) => branchFrom(row, 1));
    });
  }

  /** Makes an existing branch the active one. */
  async setActiveBranch(input: ChatPointerInput): Promise<BranchRecord> {
    const method = 'setActiveBranch(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run('setActiveBranch', true, async (sql) => {
      const names = this.#names;
      const rows = await this.#query(
        sql,
        `WITH target AS (
           SELECT ${BRANCH_COLUMNS} FROM ${names.branches} b WHERE b.chat_id = $1 AND b.name = $2
         ), activated AS (
           UPDATE ${names.chats} c SET active_branch = $2, updated_at = greatest(c.updated_at, $3::bigint)
           WHERE c.chat_id = $1 AND EXISTS (SELECT 1 FROM target)
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM ${names.chats} c WHERE c.chat_id = $1), target.*
         FROM (SELECT 1) AS one LEFT JOIN target ON true`,
        [input.chatId, input.name, Date.now()],
      );
      const row = rows[0] as Row;
      if (integer(row[0]) === 0) throw new ChatNotFoundError(input.chatId);
      if (row[2] === null) throw new BranchNotFoundError(input.chatId, input.name);
      return branchFrom(row, 1);
    });
  }

  /** Names a node; refuses a taken name unless `replace`. */
  async createCheckpoint(input: CreateCheckpointInput): Promise<CheckpointRecord> {
    const method = 'createCheckpoint(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    assertIdentifier(method, 'messageId', input.messageId);
    assertOptionalBoolean(method, 'replace', input.replace);
    const { chatId, name, messageId } = input;
    return this.#run('createCheckpoint', true, () =>
      this.#transaction(async (sql) => {
        const names = this.#names;
        const now = Date.now();
        await this.#lockChat(sql, chatId, now, null);
        await this.#assertMessageExists(sql, chatId, messageId);
        const onConflict =
          input.replace === true
            ? 'DO UPDATE SET message_id = excluded.message_id, created_at = excluded.created_at'
            : 'DO NOTHING';
        const rows = await this.#query(
          sql,
          `INSERT INTO ${names.checkpoints} AS k (chat_id, name, message_id, created_at)
           VALUES ($1, $2, $3, $4)
           ON CONFLICT (chat_id, name) ${onConflict}
           RETURNING ${CHECKPOINT_COLUMNS}`,
          [chatId, name, messageId, now],
        );
        if (rows[0] === undefined) throw new CheckpointExistsError(chatId, name);
        return checkpointFrom(rows[0]);
      }),
    );
  }

  /** A checkpoint, or null. */
  async getCheckpoint(input: ChatPointerInput): Promise<CheckpointRecord | null> {
    const method = 'getCheckpoint(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run('getCheckpoint', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT c.chat_id, ${CHECKPOINT_COLUMNS} FROM ${this.#names.chats} c
         LEFT JOIN ${this.#names.checkpoints} k ON k.chat_id = c.chat_id AND k.name = $2
         WHERE c.chat_id = $1`,
        [input.chatId, input.name],
      );
      const row = rows[0];
      if (row === undefined) throw new ChatNotFoundError(input.chatId);
      return row[2] === null ? null : checkpointFrom(row, 1);
    });
  }

  /** Every checkpoint of the chat, oldest first. */
  async listCheckpoints(chatId: string): Promise<CheckpointRecord[]> {
    assertIdentifier('listCheckpoints(chatId)', 'chatId', chatId);
    return this.#run('listCheckpoints', false, async (sql) => {
      const rows = await this.#query(
        sql,
        `SELECT c.chat_id, ${CHECKPOINT_COLUMNS} FROM ${this.#names.chats} c
         LEFT JOIN ${this.#names.checkpoints} k ON k.chat_id = c.chat_id
         WHERE c.chat_id = $1
         ORDER BY k.created_at, k.ordinal`,
        [chatId],
      );
      if (rows.length === 0) throw new ChatNotFoundError(chatId);
      return rows.filter((row) => row[2] !== null).map((row) => checkpointFrom(row, 1));
    });
  }

  /** Deletes a checkpoint (never the node). False when there was none. */
  async deleteCheckpoint(input: ChatPointerInput): Promise<boolean> {
    const method = 'deleteCheckpoint(input)';
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    return this.#run('deleteCheckpoint', true, async (sql) => {
      const names = this.#names;
      const rows = await this.#query(
        sql,
        `WITH removed AS (
           DELETE FROM ${names.checkpoints} WHERE chat_id = $1 AND name = $2 RETURNING 1
         )
         SELECT (SELECT count(*) FROM ${names.chats} WHERE chat_id = $1), (SELECT count(*) FROM removed)`,
        [input.chatId, input.name],
      );
      const row = rows[0] as Row;
      if (integer(row[0]) === 0) throw new ChatNotFoundError(input.chatId);
      return integer(row[1]) > 0;
    });
  }

  /** The whole graph of a chat, read from one consistent snapshot. */
  async getGraph(chatId: string): Promise<ChatGraph> {
    assertIdentifier('getGraph(chatId)', 'chatId', chatId);
    return this.#run('getGraph', false, () =>
      this.#transaction(async (sql) => {
        const names = this.#names;
        const chats = await this.#query(
          sql,
          `SELECT ${CHAT_COLUMNS} FROM ${names.chats} c WHERE c.chat_id = $1`,
          [chatId],
        );
        if (chats[0] === undefined) throw new ChatNotFoundError(chatId);
        const nodes = await this.#query(
          sql,
          `SELECT ${MESSAGE_COLUMNS} FROM ${names.messages} m WHERE m.chat_id = $1 ORDER BY m.sequence`,
          [chatId],
        );
        const branches = await this.#query(
          sql,
          `SELECT ${BRANCH_COLUMNS} FROM ${names.branches} b WHERE b.chat_id = $1 ORDER BY b.created_at, b.ordinal`,
          [chatId],
        );
        const checkpoints = await this.#query(
          sql,
          `SELECT ${CHECKPOINT_COLUMNS} FROM ${names.checkpoints} k WHERE k.chat_id = $1 ORDER BY k.created_at, k.ordinal`,
          [chatId],
        );
        return {
          chat: chatFrom(chats[0]),
          nodes: nodes.map((row) => messageFrom(row)),
          branches: branches.map((row) => branchFrom(row)),
          checkpoints: checkpoints.map((row) => checkpointFrom(row)),
        };
      }, 'isolation level repeatable read read only'),
    );
  }

  /** Closes the pool the store opened (never a client it was given). Safe to call twice. */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#closing = this.#ownsClient ? this.#sql.end({ timeout: 5 }) : Promise.resolve();
    }
    return this.#closing;
  }

  /** `await using store = new PostgresContextStore(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** What the store is, for logs: never the client, its options or a password. */
  toJSON(): {
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
      ownsClient: this.#ownsClient,
      closed: this.#closing !== undefined,
    };
  }

  #assertOpen(operation: string): void {
    if (this.#closing !== undefined) throw new StoreError(`${operation}: the store is closed.`);
  }

  #ensureReady(): Promise<void> {
    if (this.#ready === undefined) {
      const client = this.#sql as unknown as postgres.Sql;
      const pending = this.#migrate
        ? runMigrations(client, this.#names).then(() => undefined)
        : assertSchemaCurrent(client, this.#names);
      // A failure (say, the database was not up yet) is not remembered: the next call tries again.
      this.#ready = pending.catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
    }
    return this.#ready;
  }

  async #run<T>(
    operation: string,
    writes: boolean,
    body: (sql: Queryable) => Promise<T>,
  ): Promise<T> {
    this.#assertOpen(operation);
    try {
      await this.#ensureReady();
      return await body(this.#sql as unknown as Queryable);
    } catch (error) {
      throw toStoreError(operation, error, writes);
    }
  }

  async #transaction<T>(body: (sql: Queryable) => Promise<T>, mode?: string): Promise<T> {
    const client = this.#sql as unknown as postgres.Sql;
    const run = (transaction: Queryable): Promise<T> => body(transaction);
    const result = mode === undefined ? await client.begin(run) : await client.begin(mode, run);
    return result as T;
  }

  async #query(
    sql: Queryable,
    statement: string,
    parameters: readonly Parameter[] = [],
  ): Promise<Row[]> {
    // prepare: true still defers to the client's own `prepare: false` (PgBouncer transaction mode).
    const rows = await sql
      .unsafe(statement, parameters as postgres.ParameterOrJSON<never>[], { prepare: true })
      .values();
    return rows as unknown as Row[];
  }

  async #mergeChat(
    chatId: string,
    change: { readonly title?: string | null; readonly metadata?: JsonObject },
  ): Promise<ChatRecord> {
    return this.#transaction(async (sql) => {
      const names = this.#names;
      const current = await this.#query(
        sql,
        `SELECT c.metadata::text FROM ${names.chats} c WHERE c.chat_id = $1 FOR NO KEY UPDATE`,
        [chatId],
      );
      if (current[0] === undefined) throw new ChatNotFoundError(chatId);
      // Merged here rather than with jsonb `||` so metadata keeps its key order (json, not jsonb).
      const metadata = mergeMetadata(
        JSON.parse(text(current[0][0])) as JsonObject,
        change.metadata,
      );
      const rows = await this.#query(
        sql,
        `UPDATE ${names.chats} c SET
           title = CASE WHEN $2 THEN $3 ELSE c.title END,
           metadata = $4::text::json,
           updated_at = greatest(c.updated_at, $5::bigint)
         WHERE c.chat_id = $1
         RETURNING ${CHAT_COLUMNS}`,
        [
          chatId,
          change.title !== undefined,
          change.title ?? null,
          JSON.stringify(metadata),
          Date.now(),
        ],
      );
      return chatFrom(rows[0] as Row);
    });
  }

  /** Locks the chat row for the rest of the transaction (and touches it); ChatNotFoundError when missing. */
  async #lockChat(
    sql: Queryable,
    chatId: string,
    now: number,
    activate: string | null,
  ): Promise<void> {
    const rows = await this.#query(
      sql,
      `UPDATE ${this.#names.chats} c SET
         updated_at = greatest(c.updated_at, $2::bigint),
         active_branch = coalesce($3::text, c.active_branch)
       WHERE c.chat_id = $1
       RETURNING 1`,
      [chatId, now, activate],
    );
    if (rows.length === 0) throw new ChatNotFoundError(chatId);
  }

  async #assertMessageExists(sql: Queryable, chatId: string, messageId: string): Promise<void> {
    const rows = await this.#query(
      sql,
      `SELECT 1 FROM ${this.#names.messages} WHERE chat_id = $1 AND message_id = $2`,
      [chatId, messageId],
    );
    if (rows.length === 0) throw new MessageNotFoundError(chatId, messageId);
  }
}
