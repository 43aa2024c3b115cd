import { SchemaVersionError } from '@ctxgraph/fragments-core';
import type { DurableObjectStorageLike } from './sql-storage';

/** One step of the schema; its position in {@link MIGRATIONS} (from 1) is its version. */
export interface DurableObjectMigration {
  /** A short name, recorded in the `ctxgraph_migrations` table. */
  readonly name: string;
  /** The DDL of the step. */
  readonly sql: string;
}

// Never edit a step that has shipped: add a new one at the end. A step's version is its position.
// Several chats may share one object (tests, or an app that groups them), so every key starts
// with the chat id, like the other SQL stores. Listing order (branches, checkpoints) is the
// rowid: a rename is an UPDATE (the rowid stays), a moved checkpoint a new row. The context lane
// has a table of its own, so its JSON has a row to itself (the platform limits a row to 2 MB).
/** Every schema step, oldest first. */
const MIGRATIONS: readonly DurableObjectMigration[] = [
  {
    name: 'initial',
    sql: `
CREATE TABLE ctxgraph_chats (
  id TEXT NOT NULL PRIMARY KEY,
  user_id TEXT NOT NULL,
  title TEXT,
  metadata TEXT NOT NULL,
  active_branch TEXT NOT NULL,
  revision INTEGER NOT NULL,
  rewritten_at INTEGER NOT NULL,
  next_sequence INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX ctxgraph_chats_by_user_recency ON ctxgraph_chats (user_id, updated_at DESC, id);

CREATE TABLE ctxgraph_nodes (
  chat_id TEXT NOT NULL,
  id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  parent_id TEXT,
  sequence INTEGER NOT NULL,
  message TEXT NOT NULL,
  engine_record TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, id),
  UNIQUE (chat_id, sequence)
) STRICT;
CREATE INDEX ctxgraph_nodes_by_message_id ON ctxgraph_nodes (chat_id, message_id, sequence);

CREATE TABLE ctxgraph_branches (
  chat_id TEXT NOT NULL,
  name TEXT NOT NULL,
  head_message_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, name)
) STRICT;

CREATE TABLE ctxgraph_context_lanes (
  chat_id TEXT NOT NULL PRIMARY KEY,
  fragments TEXT NOT NULL,
  revision INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE ctxgraph_checkpoints (
  chat_id TEXT NOT NULL,
  name TEXT NOT NULL,
  message_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, name)
) STRICT;
`,
  },
  // Live replies (capabilities.liveReplies). A reply's record is keyed by (chat, reply id): the
  // key is also the claim on the reply. Start order is the rowid (a reply started again under an
  // ended one's id is deleted and inserted anew, so it comes last). Chunks are stored a batch per
  // row, one JSON array each, keyed by the offset of the batch's first chunk. The chat's change
  // revision is its `revision` plus its row in `ctxgraph_live_revisions`, bumped by every
  // live-reply write that is not a commit. The partial index finds the ended replies to purge
  // without reading the live ones.
  {
    name: 'live replies',
    sql: `
CREATE TABLE ctxgraph_live_replies (
  chat_id TEXT NOT NULL,
  reply_id TEXT NOT NULL,
  branch TEXT,
  after_node_id TEXT,
  owner TEXT NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  stop_requested_at INTEGER,
  chunk_count INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  data TEXT NOT NULL,
  PRIMARY KEY (chat_id, reply_id)
) STRICT;
CREATE INDEX ctxgraph_live_replies_by_end ON ctxgraph_live_replies (ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE ctxgraph_live_chunks (
  chat_id TEXT NOT NULL,
  reply_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  chunks TEXT NOT NULL,
  PRIMARY KEY (chat_id, reply_id, seq)
) STRICT;

CREATE TABLE ctxgraph_live_revisions (
  chat_id TEXT NOT NULL PRIMARY KEY,
  revision INTEGER NOT NULL
) STRICT;
`,
  },
  // Full-text search (capabilities.search), built lazily: a save writes nothing here (the commit
  // path is untouched); a search first brings the chats in its scope up to date (see
  // `search.ts`). `ctxgraph_message_search` holds each node's words under the store kit's rule
  // (`searchTokens`, computed in JavaScript), written as ` w1  w2 ` and indexed with FTS5's `ascii`
  // tokenizer, so FTS5 never decides what a word is; its rowid is the node's rowid. `words` is the
  // word count the contract's score needs. `ctxgraph_search_state` records, per chat, the revision
  // and the highest sequence indexed.
  {
    name: 'message search',
    sql: `
CREATE VIRTUAL TABLE ctxgraph_message_search USING fts5(body, words UNINDEXED, tokenize = 'ascii');
CREATE TABLE ctxgraph_search_state (
  chat_id TEXT NOT NULL PRIMARY KEY,
  indexed_revision INTEGER NOT NULL,
  indexed_sequence INTEGER NOT NULL
) STRICT;
`,
  },
];

/** The schema version this code writes: the number of steps in {@link MIGRATIONS}. */
const SCHEMA_VERSION: number = MIGRATIONS.length;

/** What {@link migrate} did. */
export interface DurableObjectMigrationResult {
  /** The version found before migrating (0 for a fresh object). */
  readonly from: number;
  /** The version after migrating. */
  readonly to: number;
  /** The names of the steps applied now, oldest first. */
  readonly applied: readonly string[];
}

/**
 * Brings the object's tables up to {@link SCHEMA_VERSION}: each missing step in its own
 * `transactionSync`, recorded in `ctxgraph_migrations`. Idempotent. A Durable Object is single
 * threaded and its constructor runs under `blockConcurrencyWhile`, so no other call of this
 * object runs in between; nothing else needs a lock. Throws `SchemaVersionError` when the tables
 * are newer than this code.
 */
export function migrate(storage: DurableObjectStorageLike): DurableObjectMigrationResult {
  storage.sql.exec(
    'CREATE TABLE IF NOT EXISTS ctxgraph_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  );
  const row = storage.sql
    .exec('SELECT coalesce(max(version), 0) AS version FROM ctxgraph_migrations')
    .toArray()[0];
  const from = Number(row?.version ?? 0);
  if (from > SCHEMA_VERSION) {
    throw new SchemaVersionError(
      `DurableObjectContextStore: the object's tables are at schema version ${from}, newer than this code's ${SCHEMA_VERSION}. Deploy the newer @ctxgraph/store-durable-object.`,
    );
  }
  const applied: string[] = [];
  for (let version = from + 1; version <= SCHEMA_VERSION; version += 1) {
    const step = MIGRATIONS[version - 1] as DurableObjectMigration;
    storage.transactionSync(() => {
      storage.sql.exec(step.sql);
      storage.sql.exec(
        'INSERT INTO ctxgraph_migrations (version, name, applied_at) VALUES (?, ?, ?)',
        version,
        step.name,
        Date.now(),
      );
    });
    applied.push(step.name);
  }
  return { from, to: SCHEMA_VERSION, applied };
}
