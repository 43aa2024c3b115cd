import { SchemaVersionError, ValidationError } from '@ctxgraph/fragments-core';
import type Database from 'better-sqlite3';
import { type TableNames, tableNames } from '../schema/table-names';

/** One step of the schema. Its position in {@link MIGRATIONS} (from 1) is its version. */
export interface Migration {
  /** A short name, recorded in the `<prefix>migrations` table. */
  readonly name: string;
  /** The DDL of the step for one set of table names. */
  readonly sql: (tables: TableNames) => string;
}

// Never edit a step that has shipped: add a new one at the end. A step's version is its position.
/** Every schema step, oldest first. The schema version is the number of steps applied. */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: 'initial',
    sql: (t) => `
CREATE TABLE ${t.chats} (
  id TEXT NOT NULL PRIMARY KEY,
  user_id TEXT NOT NULL,
  title TEXT,
  metadata TEXT NOT NULL,
  active_branch TEXT NOT NULL,
  version INTEGER NOT NULL,
  rewritten_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX ${t.chats}_by_user_recency ON ${t.chats} (user_id, updated_at DESC, id);

CREATE TABLE ${t.messages} (
  chat_id TEXT NOT NULL REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  parent_id TEXT,
  sequence INTEGER NOT NULL,
  role TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, id),
  UNIQUE (chat_id, sequence)
) STRICT;

CREATE TABLE ${t.branches} (
  chat_id TEXT NOT NULL REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  head_message_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, name),
  FOREIGN KEY (chat_id, head_message_id) REFERENCES ${t.messages} (chat_id, id)
) STRICT;

CREATE TABLE ${t.checkpoints} (
  chat_id TEXT NOT NULL REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  message_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, name),
  FOREIGN KEY (chat_id, message_id) REFERENCES ${t.messages} (chat_id, id)
) STRICT;
`,
  },
  {
    // The context lane of each chat (see ContextStore.getContext): the JSON text of its
    // fragments, byte for byte as saved, and a revision that goes up by one per save.
    name: 'context lanes',
    sql: (t) => `
CREATE TABLE ${t.contextLanes} (
  chat_id TEXT NOT NULL PRIMARY KEY REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  fragments TEXT NOT NULL,
  revision INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
`,
  },
  {
    // Full-text search: a contentless FTS5 index (it stores the index, not a second copy of the
    // text) whose rowid is the message row's, kept in step by triggers, so every insert, replace
    // and delete of a message (a commit, a prune, a chat deleted with its messages) updates it in
    // the same transaction. The text is that of the message's `text` and `reasoning` parts, one
    // per line, as the store kit's `messageSearchText` picks it; unicode61 folds case across
    // scripts and keeps diacritics (so "cafe" is not "café", as in the other stores). Existing
    // messages are indexed by this step.
    //
    // A second column, `scope`, holds two tokens per message: `c` + the hex of its chat id and
    // `u` + the hex of its owner's id. A search ANDs its words with one of them, so FTS5 walks the
    // chat's (or the user's) short doclist and skips through the words' long ones, instead of
    // scoring every message of every chat that holds a common word (5 to 100 times faster on
    // 100,000 messages); BM25 gives the column no weight.
    name: 'message search',
    sql: (t) => `
CREATE VIRTUAL TABLE ${t.messageSearch} USING fts5(
  body, scope, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TRIGGER ${t.messageSearch}_insert AFTER INSERT ON ${t.messages} BEGIN
  INSERT INTO ${t.messageSearch} (rowid, body, scope)
  VALUES (new.rowid, ${searchTextSql('new.payload')}, ${scopeSql(t, 'new.chat_id')});
END;
CREATE TRIGGER ${t.messageSearch}_update AFTER UPDATE OF payload ON ${t.messages} BEGIN
  DELETE FROM ${t.messageSearch} WHERE rowid = old.rowid;
  INSERT INTO ${t.messageSearch} (rowid, body, scope)
  VALUES (new.rowid, ${searchTextSql('new.payload')}, ${scopeSql(t, 'new.chat_id')});
END;
CREATE TRIGGER ${t.messageSearch}_delete AFTER DELETE ON ${t.messages} BEGIN
  DELETE FROM ${t.messageSearch} WHERE rowid = old.rowid;
END;
INSERT INTO ${t.messageSearch} (rowid, body, scope)
  SELECT rowid, ${searchTextSql('payload')}, ${scopeSql(t, 'chat_id')} FROM ${t.messages};
`,
  },
  {
    // The engine's record of each node (required of every store): its own JSON, beside the
    // message and never inside it, null when the node has none. Existing rows get null; the
    // engine reads the records an earlier version kept in a message's metadata.ctxgraph itself.
    name: 'engine records',
    sql: (t) => `
ALTER TABLE ${t.messages} ADD COLUMN engine_record TEXT;
`,
  },
  {
    // Search costs nothing until used (issue #23). The triggers above indexed every message in
    // the save's own transaction, tripling the cost of a save for apps that never search, and
    // unicode61 split words its own way. This step drops them and the index; the index is now
    // built by the store on the first search of a chat and kept up to date lazily (see
    // `driver/search-index.ts`):
    //
    // - `message_search` holds each message's words under the store kit's rule (`searchTokens`),
    //   computed in JavaScript, written as ` w1  w2 ` (each word between spaces, so a search can
    //   count a word's occurrences with replace()) and indexed with FTS5's `ascii` tokenizer,
    //   which splits at the spaces only (every non-ASCII character is a word character to it),
    //   so FTS5 never decides what a word is. `scope` holds the chat and owner tokens (as
    //   before), `words` the number of words (for the score). Its rowid is the message row's.
    // - `search_state` says, per chat, up to which chat revision and sequence its messages are
    //   indexed. A message inserted since has a higher sequence; one replaced in place since has
    //   a `rewritten_at` (the chat revision of the write that replaced it, set by the write)
    //   above the indexed version. Prune and deleteChat remove the index rows of what they
    //   delete in their own transaction.
    name: 'lazy search index',
    sql: (t) => `
DROP TRIGGER IF EXISTS ${t.messageSearch}_insert;
DROP TRIGGER IF EXISTS ${t.messageSearch}_update;
DROP TRIGGER IF EXISTS ${t.messageSearch}_delete;
DROP TABLE IF EXISTS ${t.messageSearch};
ALTER TABLE ${t.messages} ADD COLUMN rewritten_at INTEGER;
CREATE INDEX ${t.messages}_rewritten ON ${t.messages} (chat_id, rewritten_at) WHERE rewritten_at IS NOT NULL;
CREATE VIRTUAL TABLE ${t.messageSearch} USING fts5(body, scope, words UNINDEXED, tokenize = 'ascii');
CREATE TABLE ${t.searchState} (
  chat_id TEXT NOT NULL PRIMARY KEY REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  indexed_version INTEGER NOT NULL,
  indexed_sequence INTEGER NOT NULL
) STRICT;
`,
  },
  {
    // Message versions (required of every store; issue #26): a node's id may differ from
    // the id of the message it holds, and `findMessageNodes` looks nodes up by the message id.
    // An expression index over the id inside the stored JSON (json_extract is deterministic), so
    // nothing is added to the row and existing rows are indexed by this step; `sequence` in the
    // key gives the newest-first order without a sort. The lookup must spell the expression the
    // same way (`driver/chain-sql.ts`).
    name: 'message versions',
    sql: (t) => `
CREATE INDEX ${t.messages}_by_message_id ON ${t.messages} (chat_id, json_extract(payload, '$.id'), sequence);
`,
  },
  {
    // Only versions in the index by message id (issue #34): a node holds a message under the
    // message's own id except when it is a version of it, so the index keeps just the nodes whose
    // message id differs from their id, and a save of ordinary messages writes no entry to it
    // (each entry of a random id dirtied a page of its own, a third of a turn's write cost).
    // `findMessageNodes` reads the node under the message's own id through the primary key and
    // the versions through this index; its WHERE must spell the index's condition
    // (`driver/chain-sql.ts`).
    name: 'message versions: only versions indexed',
    sql: (t) => `
DROP INDEX IF EXISTS ${t.messages}_by_message_id;
CREATE INDEX ${t.messages}_versions ON ${t.messages} (chat_id, json_extract(payload, '$.id'), sequence) WHERE json_extract(payload, '$.id') <> id;
`,
  },
  {
    // Live replies (capabilities.liveReplies, issue #36): a reply being generated, its chunks
    // (one row per appended batch, a JSON array), and per chat a count of the live-reply writes
    // that were not commits, so `version + revision` is a change revision that only grows. New
    // tables only: the existing ones (and a save's statements) are not touched. `start_order`
    // numbers a chat's live replies in the order they started.
    name: 'live replies',
    sql: (t) => `
CREATE TABLE ${t.liveReplies} (
  chat_id TEXT NOT NULL REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  reply_id TEXT NOT NULL,
  branch TEXT,
  after_node_id TEXT,
  owner TEXT NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  stop_requested_at INTEGER,
  chunk_count INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  start_order INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (chat_id, reply_id)
) STRICT;
CREATE TABLE ${t.liveChunks} (
  chat_id TEXT NOT NULL,
  reply_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  chunks TEXT NOT NULL,
  PRIMARY KEY (chat_id, reply_id, seq),
  FOREIGN KEY (chat_id, reply_id) REFERENCES ${t.liveReplies} (chat_id, reply_id) ON DELETE CASCADE
) STRICT;
CREATE TABLE ${t.liveRevisions} (
  chat_id TEXT NOT NULL PRIMARY KEY REFERENCES ${t.chats} (id) ON DELETE CASCADE,
  revision INTEGER NOT NULL
) STRICT;
`,
  },
  {
    // An ended live reply stays readable for the store's grace period (issue #36): `ended_at`
    // marks it (null while live). One partial index finds those whose grace is over (an end
    // deletes a batch of them) without holding a live one; the other holds only the live ones,
    // by chat and start order, so a start's next `start_order` and `getLiveState` read the live
    // replies, never the ended ones kept beside them. A step of its own rather than a change to
    // the one before, so files already at that version gain the column too. Adding a nullable
    // column rewrites no row.
    name: 'live replies: ended replies kept',
    sql: (t) => `
ALTER TABLE ${t.liveReplies} ADD COLUMN ended_at INTEGER;
CREATE INDEX ${t.liveReplies}_ended ON ${t.liveReplies} (ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX ${t.liveReplies}_live ON ${t.liveReplies} (chat_id, start_order) WHERE ended_at IS NULL;
`,
  },
];

/**
 * The scope tokens of a message of chat `chatId` (SQL): `c<hex of the chat id> u<hex of the
 * owner's id>` (see `scopeTokens` in the driver, which builds the same in JavaScript).
 */
function scopeSql(t: TableNames, chatId: string): string {
  return `'c' || hex(${chatId}) || ' u' || hex((SELECT user_id FROM ${t.chats} WHERE id = ${chatId}))`;
}

/** The searchable text of a message's JSON (`payload`): its text and reasoning parts, one per line. */
function searchTextSql(payload: string): string {
  return `(SELECT group_concat(json_extract(part.value, '$.text'), char(10)) FROM json_each(${payload}, '$.parts') AS part
    WHERE json_extract(part.value, '$.type') IN ('text', 'reasoning') AND json_type(part.value, '$.text') = 'text')`;
}

/** The schema version this code writes and understands: the number of {@link MIGRATIONS}. */
export const SCHEMA_VERSION: number = MIGRATIONS.length;

/** Options of {@link migrateSqliteDatabase}, {@link readSqliteSchemaVersion} and {@link getMigrationSql}. */
export interface SqliteMigrationOptions {
  /** The prefix of every table. @default 'ctxgraph_' */
  readonly tablePrefix?: string;
}

/** Options of {@link getMigrationSql}. */
export interface MigrationSqlOptions extends SqliteMigrationOptions {
  /** Emit only the steps after this version (the version the database has now). @default 0 */
  readonly fromVersion?: number;
}

/** What {@link migrateSqliteDatabase} did. */
export interface SqliteMigrationResult {
  /** The schema version before. */
  readonly fromVersion: number;
  /** The schema version after (always {@link SCHEMA_VERSION}). */
  readonly toVersion: number;
  /** Names of the steps applied by this call (empty when the schema was already current). */
  readonly applied: readonly string[];
}

function migrationsTableSql(tables: TableNames): string {
  return `CREATE TABLE IF NOT EXISTS ${tables.migrations} (
  version INTEGER NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT;`;
}

function newerSchemaError(
  location: string,
  tables: TableNames,
  version: number,
): SchemaVersionError {
  return new SchemaVersionError(
    `SqliteContextStore at "${location}": the "${tables.prefix}" tables are at schema version ${version}, newer than this @ctxgraph/store-sqlite understands (${SCHEMA_VERSION}). Upgrade @ctxgraph/store-sqlite; nothing was changed.`,
  );
}

/**
 * SQLite compares table names ignoring ASCII case, so two prefixes that differ only by case would
 * address the same tables while each kept its own migration record. The tables of a prefix are
 * opened only under the spelling that created them: returns the refusal for any other spelling.
 */
function prefixCaseError(
  location: string,
  tables: TableNames,
  existingMigrationsTable: string,
): ValidationError {
  const existing = existingMigrationsTable.slice(0, tables.prefix.length);
  return new ValidationError(
    `SqliteContextStore: tablePrefix "${tables.prefix}" differs only by case from the prefix "${existing}" whose tables are already in "${location}". SQLite table names ignore case, so both would use the same tables. Use "${existing}" to open those tables, or a prefix that differs in more than case for separate ones; nothing was changed.`,
    {
      issues: [
        {
          path: 'tablePrefix',
          message: `differs only by case from the existing prefix "${existing}"`,
        },
      ],
    },
  );
}

/**
 * The schema version of one table prefix in a database: 0 when its tables do not exist yet. A
 * read only; never writes. Throws `ValidationError` when the database holds the tables of a
 * prefix that differs from this one only by case (see the README: table prefixes and case).
 */
export function readSqliteSchemaVersion(
  database: Database.Database,
  options: SqliteMigrationOptions = {},
): number {
  const tables = tableNames(options.tablePrefix);
  // Matched ignoring case, as SQLite resolves names; the stored name keeps its spelling.
  const existing = database
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE")
    .pluck()
    .get(tables.migrations) as string | undefined;
  if (existing === undefined) return 0;
  if (existing !== tables.migrations) throw prefixCaseError(database.name, tables, existing);
  const version = database.prepare(`SELECT MAX(version) FROM ${tables.migrations}`).pluck().get();
  return typeof version === 'number' ? version : 0;
}

/**
 * Brings the tables of one prefix to {@link SCHEMA_VERSION}. Safe to call from several
 * processes at once and any number of times: the current version is read first (no lock when
 * nothing is to do), and pending steps run in one `BEGIN IMMEDIATE` transaction that re-reads the
 * version, so exactly one process applies each step and the others wait and find nothing to do.
 *
 * The version lives in a `<prefix>migrations` table rather than `PRAGMA user_version`: that
 * pragma is one number per file, and several apps may share a file under different prefixes.
 *
 * Throws `SchemaVersionError` when the tables are newer than this code knows, `ValidationError`
 * when the database holds the tables of a prefix that differs from this one only by case.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * const database = new Database('./context.db');
 * migrateSqliteDatabase(database, { tablePrefix: 'support_' });
 * ```
 */
export function migrateSqliteDatabase(
  database: Database.Database,
  options: SqliteMigrationOptions = {},
): SqliteMigrationResult {
  const tables = tableNames(options.tablePrefix);
  const before = readSqliteSchemaVersion(database, options);
  if (before > SCHEMA_VERSION) throw newerSchemaError(database.name, tables, before);
  if (before === SCHEMA_VERSION) return { fromVersion: before, toVersion: before, applied: [] };
  const apply = database.transaction((): SqliteMigrationResult => {
    // Another process may have migrated between the read above and the write lock (under this
    // prefix, or under one that differs only by case: then this read throws).
    const current = readSqliteSchemaVersion(database, options);
    if (current > SCHEMA_VERSION) throw newerSchemaError(database.name, tables, current);
    database.exec(migrationsTableSql(tables));
    const record = database.prepare(
      `INSERT INTO ${tables.migrations} (version, name, applied_at) VALUES (?, ?, ?)`,
    );
    const applied: string[] = [];
    MIGRATIONS.slice(current).forEach((step, index) => {
      database.exec(step.sql(tables));
      record.run(current + index + 1, step.name, Date.now());
      applied.push(step.name);
    });
    return { fromVersion: current, toVersion: SCHEMA_VERSION, applied };
  });
  return apply.immediate();
}

/**
 * The SQL of the schema, for teams that apply DDL in their own deploy step (then open the store
 * with `migrate: false`). One `BEGIN IMMEDIATE` … `COMMIT` script that creates the tables and
 * records each step in `<prefix>migrations`, so the store recognizes the version.
 *
 * @example
 * ```ts
 * writeFileSync('ctxgraph.sql', getMigrationSql({ tablePrefix: 'support_' }));
 * // sqlite3 app.db < ctxgraph.sql
 * ```
 */
export function getMigrationSql(options: MigrationSqlOptions = {}): string {
  const tables = tableNames(options.tablePrefix);
  const fromVersion = options.fromVersion ?? 0;
  if (!Number.isInteger(fromVersion) || fromVersion < 0 || fromVersion > SCHEMA_VERSION) {
    throw new ValidationError(
      `getMigrationSql(options): fromVersion must be an integer from 0 to ${SCHEMA_VERSION}, received ${String(fromVersion)}.`,
      {
        issues: [
          {
            path: 'fromVersion',
            message: `expected an integer from 0 to ${SCHEMA_VERSION}`,
          },
        ],
      },
    );
  }
  const parts = ['BEGIN IMMEDIATE;', migrationsTableSql(tables)];
  MIGRATIONS.slice(fromVersion).forEach((step, index) => {
    const version = fromVersion + index + 1;
    parts.push(`-- ${tables.prefix} schema step ${version}: ${step.name}`, step.sql(tables).trim());
    // julianday() rather than unixepoch(): it works on every sqlite3 shell a team might use.
    parts.push(
      `INSERT INTO ${tables.migrations} (version, name, applied_at) VALUES (${version}, '${step.name}', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));`,
    );
  });
  parts.push('COMMIT;');
  return `${parts.join('\n')}\n`;
}
