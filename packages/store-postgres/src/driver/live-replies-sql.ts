import {
  type AppendReplyChunksResult,
  ChatNotFoundError,
  type JsonObject,
  type LiveChatState,
  LiveReplyConflictError,
  LiveReplyLostError,
  LiveReplyOffsetError,
  type LiveReplyRead,
  type LiveReplyRecord,
} from '@ctxgraph/fragments-core';
import {
  chunksFrom,
  type PreparedAppendReplyChunks,
  type PreparedEndReply,
  type PreparedReadReply,
  type PreparedStartReply,
  type PreparedStopReply,
  type PreparedTakeOverReply,
  type StoredChunkBatch,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { PostgresConnection, Queryable } from './connection';
import { integer, isUniqueViolationOf, optionalText, type Row, text } from './rows';

// The live replies of `PostgresContextStore` (capabilities.liveReplies): each method ONE
// statement (so one round trip and its own transaction), like a commit. Writes take the reply's
// row lock before anything else (a locking read, or the UPDATE itself), so under READ COMMITTED a
// writer that waited sees the row as the other writer committed it: the owner, offset and lease
// checks are compare-and-sets. A write that changes what a watcher sees sends a NOTIFY on the
// store's channel in the same statement (delivered at commit, dropped on rollback): `['c', chat]`
// for a start, stop, takeover or end, `['k', chat, reply, chunkCount]` for appended chunks. An end
// marks the record (`ended_at`) and keeps its chunks, readable for the store's grace period; an
// end also deletes a batch of the replies (any chat's) whose grace is over, skipping rows another
// end is deleting, and a start of an ended reply's id replaces it.

/** How many replies whose grace period is over one end deletes at most. */
const PURGE_BATCH = 100;

/** The columns of a live reply, in the order {@link replyFrom} reads them. */
const REPLY_COLUMNS =
  'r.chat_id, r.reply_id, r.branch, r.after_node_id, r.owner, r.lease_expires_at, r.stop_requested_at, r.chunk_count, r.started_at, r.ended_at, r.data::text';
const REPLY_WIDTH = 11;

function replyFrom(row: Row, offset = 0): LiveReplyRecord {
  return {
    chatId: text(row[offset]),
    replyId: text(row[offset + 1]),
    branch: optionalText(row[offset + 2]),
    afterNodeId: optionalText(row[offset + 3]),
    owner: text(row[offset + 4]),
    leaseExpiresAt: integer(row[offset + 5]),
    stopRequestedAt: row[offset + 6] === null ? null : integer(row[offset + 6]),
    chunkCount: integer(row[offset + 7]),
    startedAt: integer(row[offset + 8]),
    endedAt: row[offset + 9] === null ? null : integer(row[offset + 9]),
    data: JSON.parse(text(row[offset + 10])) as JsonObject,
  };
}

/** The chunk batches of rows that carry `seq, count, chunks` at `offset` (null when none). */
function batchesFrom(rows: readonly Row[], offset: number): StoredChunkBatch[] {
  const batches: StoredChunkBatch[] = [];
  for (const row of rows) {
    if (row[offset] === null) continue;
    batches.push({
      seq: integer(row[offset]),
      count: integer(row[offset + 1]),
      json: text(row[offset + 2]),
    });
  }
  return batches;
}

/** The NOTIFY payload of a change to the chat `$1`, as SQL. */
export const CHAT_NOTICE = "json_build_array('c', $1::text)::text";

/** The insert of a chat's revision bump, from the rows of CTE `source`. */
function bumpSql(names: TableNames, source: string): string {
  return `INSERT INTO ${names.liveRevisions} AS v (chat_id, revision)
    SELECT $1::text, 1 FROM ${source} LIMIT 1
    ON CONFLICT (chat_id) DO UPDATE SET revision = v.revision + 1
    RETURNING 1`;
}

/**
 * The live record's insert, for `startReply` and a commit's `startReply` (`$1` is the chat). A
 * commit's insert fails on any record of the id (the caller clears an ended one and runs again);
 * `replacesEnded` (for `startReply`) replaces an ended record of the id in the same statement
 * and returns no row when a live one holds it.
 */
export function insertReplySql(
  names: TableNames,
  source: string,
  replacesEnded: boolean,
  values: {
    readonly replyId: string;
    readonly branch: string;
    readonly afterNodeId: string;
    readonly owner: string;
    readonly leaseExpiresAt: string;
    readonly now: string;
    readonly data: string;
  },
): string {
  const replace = replacesEnded
    ? `
    ON CONFLICT (chat_id, reply_id) DO UPDATE SET branch = excluded.branch,
      after_node_id = excluded.after_node_id, owner = excluded.owner,
      lease_expires_at = excluded.lease_expires_at, stop_requested_at = NULL, chunk_count = 0,
      started_at = excluded.started_at, start_order = excluded.start_order, ended_at = NULL,
      data = excluded.data
    WHERE ${names.liveReplies}.ended_at IS NOT NULL`
    : '';
  return `INSERT INTO ${names.liveReplies} (chat_id, reply_id, branch, after_node_id, owner,
      lease_expires_at, stop_requested_at, chunk_count, started_at, start_order, ended_at, data)
    SELECT $1::text, ${values.replyId}, ${values.branch}, ${values.afterNodeId}, ${values.owner},
      ${values.leaseExpiresAt}, NULL, 0, ${values.now},
      coalesce((SELECT max(x.start_order) FROM ${names.liveReplies} x
        WHERE x.chat_id = $1::text AND x.ended_at IS NULL), 0) + 1,
      NULL, ${values.data}
    FROM ${source}${replace}
    RETURNING ${REPLY_COLUMNS.replaceAll('r.', '')}`;
}

/**
 * The delete of a batch of replies whose grace period is over (ended at or before `cutoff`),
 * their chunks by cascade, when `when` (a condition) holds. Rows another end is deleting are
 * skipped, so concurrent ends never wait for each other here.
 */
export function purgeSql(names: TableNames, cutoff: string, when: string): string {
  return `DELETE FROM ${names.liveReplies} p
  WHERE ${when} AND (p.chat_id, p.reply_id) IN (
    SELECT x.chat_id, x.reply_id FROM ${names.liveReplies} x
    WHERE x.ended_at IS NOT NULL AND x.ended_at <= ${cutoff}
    ORDER BY x.ended_at LIMIT ${PURGE_BATCH}
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1`;
}

/**
 * Deletes the ended record of a reply (its chunks by cascade) so a commit can start the reply
 * again; false when the reply is live (or gone). One statement.
 */
export async function clearEndedReply(
  db: PostgresConnection,
  sql: Queryable,
  chatId: string,
  replyId: string,
): Promise<boolean> {
  const rows = await db.query(
    sql,
    `DELETE FROM ${db.names.liveReplies} WHERE chat_id = $1 AND reply_id = $2 AND ended_at IS NOT NULL RETURNING 1`,
    [chatId, replyId],
  );
  return rows.length > 0;
}

/** A unique violation of the live record's primary key: the reply is live already. */
export function isLiveReplyTaken(names: TableNames, error: unknown): boolean {
  return isUniqueViolationOf(error, `${names.tablePrefix}live_replies_pkey`);
}

/**
 * `startReply`: the record (in place of an ended one of the id, whose chunks go) and the chat's
 * revision, in one statement.
 */
export function startReply(
  db: PostgresConnection,
  input: PreparedStartReply,
  now: number,
): Promise<LiveReplyRecord> {
  const names = db.names;
  // The record first, then the revision: every live-reply write takes the reply's row before the
  // chat's revision row, so none waits for the other in the opposite order.
  const statement = `WITH chat AS (
  SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1::text
), cleared AS (
  DELETE FROM ${names.liveChunks} k
  WHERE k.chat_id = $1::text AND k.reply_id = $2::text AND EXISTS (
    SELECT 1 FROM ${names.liveReplies} e
    WHERE e.chat_id = $1::text AND e.reply_id = $2::text AND e.ended_at IS NOT NULL
  )
  RETURNING 1
), started AS (
  ${insertReplySql(names, 'chat', true, {
    replyId: '$2::text',
    branch: '$3::text',
    afterNodeId: '$4::text',
    owner: '$5::text',
    leaseExpiresAt: '$6::bigint',
    now: '$7::bigint',
    data: '$8::text::json',
  })}
), bumped AS (
  ${bumpSql(names, 'started')}
)
SELECT s.*, CASE WHEN EXISTS (SELECT 1 FROM bumped) THEN pg_notify($9::text, ${CHAT_NOTICE}) END,
  EXISTS (SELECT 1 FROM chat), (SELECT count(*) FROM cleared)
FROM (SELECT 1) AS one LEFT JOIN started s ON true`;
  return db.run(async (sql) => {
    let rows: Row[];
    try {
      rows = await db.query(sql, statement, [
        input.chatId,
        input.replyId,
        input.branch,
        input.afterNodeId,
        input.owner,
        now + input.leaseMs,
        now,
        input.dataJson,
        names.changeChannel,
      ]);
    } catch (error) {
      if (isLiveReplyTaken(names, error))
        throw new LiveReplyConflictError({ chatId: input.chatId, replyId: input.replyId });
      throw error;
    }
    const row = rows[0] as Row;
    if (row[REPLY_WIDTH + 1] !== true) throw new ChatNotFoundError(input.chatId);
    // No row: a live reply holds the id (the upsert replaces only an ended one), and the chunks
    // the statement saw were that live reply's only if it was ended in its snapshot: a
    // concurrent start replaced it first, and its own chunks came after this snapshot.
    if (row[0] === null)
      throw new LiveReplyConflictError({ chatId: input.chatId, replyId: input.replyId });
    return replyFrom(row);
  });
}

/**
 * `appendReplyChunks`: the count and the lease moved only where the owner and the offset are the
 * ones given, and the batch stored off that update, in one statement. When nothing moved, a
 * second read says why (the owner, the offset, or the chat).
 *
 * The statement commits without waiting for its WAL flush (`synchronous_commit` off for its own
 * transaction only, set by the statement itself): an append is the hot path of a live reply
 * (every batch of every reply), the flush wait cost it 5 ms of a 0.3 ms write here, and what a
 * database crash could lose is the last moments of a reply's transient chunks, count and chunks
 * together (the writer's next append then reports the offset), never a saved message: starts,
 * stops, takeovers, ends and saves wait for their flush as every other write does.
 */
export function appendReplyChunks(
  db: PostgresConnection,
  input: PreparedAppendReplyChunks,
  now: number,
): Promise<AppendReplyChunksResult> {
  const names = db.names;
  const { chatId, replyId } = input;
  const statement = `WITH moved AS (
  UPDATE ${names.liveReplies} r SET chunk_count = r.chunk_count + $5::bigint, lease_expires_at = $6::bigint
  WHERE r.chat_id = $1::text AND r.reply_id = $2::text AND r.owner = $3::text AND r.chunk_count = $4::bigint
    AND r.ended_at IS NULL
  RETURNING r.chunk_count, r.lease_expires_at, r.stop_requested_at
), stored AS (
  INSERT INTO ${names.liveChunks} (chat_id, reply_id, seq, count, chunks)
  SELECT $1::text, $2::text, $4::bigint, $5::integer, $7::text FROM moved WHERE $5::integer > 0
  RETURNING 1
)
SELECT m.chunk_count, m.lease_expires_at, m.stop_requested_at, (SELECT count(*) FROM stored),
  CASE WHEN $5::integer > 0
    THEN pg_notify($8::text, json_build_array('k', $1::text, $2::text, m.chunk_count)::text) END,
  set_config('synchronous_commit', 'off', true)
FROM moved m`;
  return db.run(async (sql) => {
    const rows = await db.query(sql, statement, [
      chatId,
      replyId,
      input.owner,
      input.from,
      input.count,
      now + input.leaseMs,
      input.chunksJson,
      names.changeChannel,
    ]);
    const row = rows[0];
    if (row !== undefined) {
      return {
        chunkCount: integer(row[0]),
        leaseExpiresAt: integer(row[1]),
        stopRequested: row[2] !== null,
      };
    }
    const found = await db.query(
      sql,
      `SELECT r.owner, r.chunk_count, EXISTS (SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1)
       FROM (SELECT 1) AS one
       LEFT JOIN ${names.liveReplies} r ON r.chat_id = $1 AND r.reply_id = $2 AND r.ended_at IS NULL`,
      [chatId, replyId],
    );
    const state = found[0] as Row;
    if (state[2] !== true) throw new ChatNotFoundError(chatId);
    const currentOwner = optionalText(state[0]);
    if (currentOwner !== input.owner)
      throw new LiveReplyLostError({ chatId, replyId, owner: input.owner, currentOwner });
    throw new LiveReplyOffsetError({
      chatId,
      replyId,
      from: input.from,
      chunkCount: integer(state[1]),
    });
  });
}

/**
 * `readReply`: the record and its batches from `from` (to `from + limit` when given: a page reads
 * only its batches), in one statement (one snapshot): a live reply, or one that ended after
 * `cutoff` (now minus the grace period).
 */
export function readReply(
  db: PostgresConnection,
  input: PreparedReadReply,
  cutoff: number,
): Promise<LiveReplyRead | null> {
  const names = db.names;
  const { chatId, replyId, from, limit } = input;
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT ${REPLY_COLUMNS}, k.seq, k.count, k.chunks,
         EXISTS (SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1::text)
       FROM (SELECT 1) AS one
       LEFT JOIN ${names.liveReplies} r ON r.chat_id = $1::text AND r.reply_id = $2::text
         AND (r.ended_at IS NULL OR r.ended_at > $4::bigint)
       LEFT JOIN ${names.liveChunks} k
         ON k.chat_id = r.chat_id AND k.reply_id = r.reply_id AND k.seq + k.count > $3::bigint
           AND k.seq < $5::bigint
       ORDER BY k.seq`,
      [chatId, replyId, from, cutoff, limit === undefined ? Number.MAX_SAFE_INTEGER : from + limit],
    );
    const first = rows[0] as Row;
    if (first[REPLY_WIDTH + 3] !== true) throw new ChatNotFoundError(chatId);
    if (first[0] === null) return null;
    return {
      record: replyFrom(first),
      chunks: chunksFrom(batchesFrom(rows, REPLY_WIDTH), from, limit),
    };
  });
}

/** `getLiveState`: the change revision and the live replies, in one statement. */
export function getLiveState(db: PostgresConnection, chatId: string): Promise<LiveChatState> {
  const names = db.names;
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.version + coalesce(v.revision, 0), ${REPLY_COLUMNS}
       FROM ${names.chats} c
       LEFT JOIN ${names.liveRevisions} v ON v.chat_id = c.chat_id
       LEFT JOIN ${names.liveReplies} r ON r.chat_id = c.chat_id AND r.ended_at IS NULL
       WHERE c.chat_id = $1::text
       ORDER BY r.start_order, r.reply_id COLLATE "C"`,
      [chatId],
    );
    const first = rows[0];
    if (first === undefined) throw new ChatNotFoundError(chatId);
    return {
      chatId,
      changeRevision: integer(first[0]),
      replies: rows.filter((row) => row[1] !== null).map((row) => replyFrom(row, 1)),
    };
  });
}

/**
 * `stopReply`: locks the replies asked, marks those not marked yet, bumps the revision when one
 * was, and returns them as they are after the mark, oldest start first.
 */
export function stopReply(
  db: PostgresConnection,
  input: PreparedStopReply,
  now: number,
): Promise<LiveReplyRecord[]> {
  const names = db.names;
  const { chatId, replyId } = input;
  const statement = `WITH target AS (
  SELECT ${REPLY_COLUMNS}, r.start_order FROM ${names.liveReplies} r
  WHERE r.chat_id = $1::text AND ($2::text IS NULL OR r.reply_id = $2::text) AND r.ended_at IS NULL
  FOR UPDATE
), marked AS (
  UPDATE ${names.liveReplies} r SET stop_requested_at = $3::bigint
  FROM target t
  WHERE r.chat_id = t.chat_id AND r.reply_id = t.reply_id AND t.stop_requested_at IS NULL
  RETURNING r.reply_id
), bumped AS (
  ${bumpSql(names, 'marked')}
)
SELECT t.chat_id, t.reply_id, t.branch, t.after_node_id, t.owner, t.lease_expires_at,
  CASE WHEN m.reply_id IS NULL THEN t.stop_requested_at ELSE $3::bigint END,
  t.chunk_count, t.started_at, t.ended_at, t.data,
  EXISTS (SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1::text),
  CASE WHEN EXISTS (SELECT 1 FROM bumped) THEN pg_notify($4::text, ${CHAT_NOTICE}) END
FROM (SELECT 1) AS one
LEFT JOIN target t ON true
LEFT JOIN marked m ON m.reply_id = t.reply_id
ORDER BY t.start_order, t.reply_id COLLATE "C"`;
  return db.run(async (sql) => {
    const rows = await db.query(sql, statement, [
      chatId,
      replyId ?? null,
      now,
      names.changeChannel,
    ]);
    const first = rows[0] as Row;
    if (first[REPLY_WIDTH] !== true) throw new ChatNotFoundError(chatId);
    return rows.filter((row) => row[0] !== null).map((row) => replyFrom(row));
  });
}

/**
 * `takeOverReply`: the owner and the lease replaced only where the lease has passed `now` (the
 * UPDATE takes the row lock, so of concurrent takers one matches), the revision bumped, and all
 * the chunks read, in one statement.
 */
export function takeOverReply(
  db: PostgresConnection,
  input: PreparedTakeOverReply,
  now: number,
): Promise<LiveReplyRead | null> {
  const names = db.names;
  const { chatId, replyId } = input;
  const statement = `WITH taken AS (
  UPDATE ${names.liveReplies} r SET owner = $3::text, lease_expires_at = $4::bigint
  WHERE r.chat_id = $1::text AND r.reply_id = $2::text AND r.lease_expires_at <= $5::bigint
    AND r.ended_at IS NULL
  RETURNING ${REPLY_COLUMNS}
), bumped AS (
  ${bumpSql(names, 'taken')}
)
SELECT t.*, k.seq, k.count, k.chunks,
  EXISTS (SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1::text),
  CASE WHEN EXISTS (SELECT 1 FROM bumped) THEN pg_notify($6::text, ${CHAT_NOTICE}) END
FROM (SELECT 1) AS one
LEFT JOIN taken t ON true
LEFT JOIN ${names.liveChunks} k ON t.reply_id IS NOT NULL AND k.chat_id = $1::text AND k.reply_id = $2::text
ORDER BY k.seq`;
  return db.run(async (sql) => {
    const rows = await db.query(sql, statement, [
      chatId,
      replyId,
      input.owner,
      now + input.leaseMs,
      now,
      names.changeChannel,
    ]);
    const first = rows[0] as Row;
    if (first[REPLY_WIDTH + 3] !== true) throw new ChatNotFoundError(chatId);
    if (first[0] === null) return null;
    return { record: replyFrom(first), chunks: chunksFrom(batchesFrom(rows, REPLY_WIDTH), 0) };
  });
}

/**
 * `endReply`: the record marked ended at `now` (its chunks kept) when `owner` holds it, and a
 * batch of the replies that ended at or before `cutoff` deleted, in one statement.
 */
export function endReply(
  db: PostgresConnection,
  input: PreparedEndReply,
  now: number,
  cutoff: number,
): Promise<void> {
  const names = db.names;
  const { chatId, replyId, owner } = input;
  const statement = `WITH held AS (
  SELECT r.owner FROM ${names.liveReplies} r
  WHERE r.chat_id = $1::text AND r.reply_id = $2::text AND r.ended_at IS NULL
  FOR UPDATE
), ended AS (
  UPDATE ${names.liveReplies} r SET ended_at = $5::bigint FROM held h
  WHERE r.chat_id = $1::text AND r.reply_id = $2::text AND h.owner = $3::text
  RETURNING 1
), purged AS (
  ${purgeSql(names, '$6::bigint', 'EXISTS (SELECT 1 FROM ended)')}
), bumped AS (
  ${bumpSql(names, 'ended')}
)
SELECT (SELECT h.owner FROM held h), EXISTS (SELECT 1 FROM ended),
  EXISTS (SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1::text),
  CASE WHEN EXISTS (SELECT 1 FROM bumped) THEN pg_notify($4::text, ${CHAT_NOTICE}) END,
  (SELECT count(*) FROM purged)`;
  return db.run(async (sql) => {
    const rows = await db.query(sql, statement, [
      chatId,
      replyId,
      owner,
      names.changeChannel,
      now,
      cutoff,
    ]);
    const row = rows[0] as Row;
    if (row[1] === true) return;
    if (row[2] !== true) throw new ChatNotFoundError(chatId);
    throw new LiveReplyLostError({ chatId, replyId, owner, currentOwner: optionalText(row[0]) });
  });
}
