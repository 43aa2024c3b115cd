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
  type PreparedCommit,
  type PreparedCommitStartReply,
  type PreparedEndReply,
  type PreparedReadReply,
  type PreparedStartReply,
  type PreparedStopReply,
  type PreparedTakeOverReply,
  type StoredChunkBatch,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import { chatRow, requireChat } from './lookups';

// The live replies of `SqliteContextStore` (capabilities.liveReplies): each method one
// `BEGIN IMMEDIATE` transaction (or one deferred read), like every other use case. The chat's
// change revision is its `revision` (commits) plus its row in `live_revisions`, bumped by every
// live-reply write that is not a commit. An end marks the record (`ended_at`) and keeps its
// chunks: readable for the grace period, then deleted by a later end (any chat's, a bounded
// batch through the partial index on `ended_at`).

/** A row of `<prefix>live_replies`. */
interface ReplyRow {
  chat_id: string;
  reply_id: string;
  branch: string | null;
  after_node_id: string | null;
  owner: string;
  lease_expires_at: number;
  stop_requested_at: number | null;
  chunk_count: number;
  started_at: number;
  start_order: number;
  ended_at: number | null;
  data: string;
}

/** How many replies whose grace period is over one end deletes at most. */
const PURGE_BATCH = 100;

function record(row: ReplyRow): LiveReplyRecord {
  return {
    chatId: row.chat_id,
    replyId: row.reply_id,
    branch: row.branch,
    afterNodeId: row.after_node_id,
    owner: row.owner,
    leaseExpiresAt: row.lease_expires_at,
    stopRequestedAt: row.stop_requested_at,
    chunkCount: row.chunk_count,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    data: JSON.parse(row.data) as JsonObject,
  };
}

function replyRow(db: SqliteConnection, chatId: string, replyId: string): ReplyRow | undefined {
  return db.prepared(selectReplySql).get(chatId, replyId) as ReplyRow | undefined;
}

function selectReplySql(t: TableNames): string {
  return `SELECT * FROM ${t.liveReplies} WHERE chat_id = ? AND reply_id = ?`;
}

function insertReplySql(t: TableNames): string {
  return `INSERT INTO ${t.liveReplies} (chat_id, reply_id, branch, after_node_id, owner, lease_expires_at,
     stop_requested_at, chunk_count, started_at, start_order, ended_at, data)
   VALUES (@chatId, @replyId, @branch, @afterNodeId, @owner, @leaseExpiresAt, NULL, 0, @now,
     (SELECT coalesce(max(start_order), 0) + 1 FROM ${t.liveReplies} WHERE chat_id = @chatId AND ended_at IS NULL), NULL, @data)
   ON CONFLICT (chat_id, reply_id) DO NOTHING RETURNING *`;
}

function endReplySql(t: TableNames): string {
  return `UPDATE ${t.liveReplies} SET ended_at = ? WHERE chat_id = ? AND reply_id = ?`;
}

function expiredSql(t: TableNames): string {
  return `SELECT chat_id, reply_id FROM ${t.liveReplies}
   WHERE ended_at IS NOT NULL AND ended_at <= ? ORDER BY ended_at LIMIT ${PURGE_BATCH}`;
}

function bumpSql(t: TableNames): string {
  return `INSERT INTO ${t.liveRevisions} (chat_id, revision) VALUES (?, 1)
   ON CONFLICT (chat_id) DO UPDATE SET revision = revision + 1`;
}

function deleteChunksSql(t: TableNames): string {
  return `DELETE FROM ${t.liveChunks} WHERE chat_id = ? AND reply_id = ?`;
}

function deleteReplySql(t: TableNames): string {
  return `DELETE FROM ${t.liveReplies} WHERE chat_id = ? AND reply_id = ?`;
}

/**
 * The record's row when `owner` holds it (live: an ended reply is held by no one);
 * `ChatNotFoundError` or `LiveReplyLostError` otherwise.
 */
function held(db: SqliteConnection, chatId: string, replyId: string, owner: string): ReplyRow {
  const found = replyRow(db, chatId, replyId);
  if (found === undefined) requireChat(db, chatId);
  const row = found?.ended_at === null ? found : undefined;
  if (row === undefined || row.owner !== owner)
    throw new LiveReplyLostError({ chatId, replyId, owner, currentOwner: row?.owner ?? null });
  return row;
}

/**
 * Inserts a record; `LiveReplyConflictError` when the chat has a live one of that id, while an
 * ended one is replaced (deleted with its chunks first). Call in a write.
 */
function insertReply(
  db: SqliteConnection,
  chatId: string,
  reply: PreparedCommitStartReply & {
    readonly branch: string | null;
    readonly afterNodeId: string | null;
  },
  now: number,
): ReplyRow {
  const values = {
    chatId,
    replyId: reply.replyId,
    branch: reply.branch,
    afterNodeId: reply.afterNodeId,
    owner: reply.owner,
    leaseExpiresAt: now + reply.leaseMs,
    now,
    data: reply.dataJson,
  };
  let row = db.prepared(insertReplySql).get(values) as ReplyRow | undefined;
  const ended =
    row === undefined && (replyRow(db, chatId, reply.replyId)?.ended_at ?? null) !== null;
  if (ended) {
    // The id is taken by an ended reply (a continuation of a saved reply): it gives way.
    remove(db, chatId, reply.replyId);
    row = db.prepared(insertReplySql).get(values) as ReplyRow | undefined;
  }
  if (row === undefined) throw new LiveReplyConflictError({ chatId, replyId: reply.replyId });
  return row;
}

/**
 * Marks the reply ended at `now` (its chunks kept), then deletes a batch of the replies, of any
 * chat, that ended `graceMs` or more before. Call in a write, after `held`.
 */
function end(
  db: SqliteConnection,
  chatId: string,
  replyId: string,
  now: number,
  graceMs: number,
): void {
  db.prepared(endReplySql).run(now, chatId, replyId);
  const expired = db.prepared(expiredSql).all(now - graceMs) as {
    chat_id: string;
    reply_id: string;
  }[];
  for (const key of expired) remove(db, key.chat_id, key.reply_id);
}

function bump(db: SqliteConnection, chatId: string): void {
  db.prepared(bumpSql).run(chatId);
}

function remove(db: SqliteConnection, chatId: string, replyId: string): void {
  // Chunks first: the foreign key holds after each statement, whether or not it is enforced.
  db.prepared(deleteChunksSql).run(chatId, replyId);
  db.prepared(deleteReplySql).run(chatId, replyId);
}

/** The batches holding the chunks from `from` (to `from + limit` when given), in offset order. */
function batchesFrom(
  db: SqliteConnection,
  chatId: string,
  replyId: string,
  from: number,
  limit?: number,
): StoredChunkBatch[] {
  const c = db.tables.liveChunks;
  // The batch holding `from` starts at the largest seq not above it: an index range from there
  // (to the first batch at or past the page's end).
  return db
    .statement(
      `SELECT seq, count, chunks AS json FROM ${c}
        WHERE chat_id = @chatId AND reply_id = @replyId
          AND seq >= coalesce((SELECT max(seq) FROM ${c} WHERE chat_id = @chatId AND reply_id = @replyId AND seq <= @from), 0)
          AND seq < @end
        ORDER BY seq`,
    )
    .all({
      chatId,
      replyId,
      from,
      end: limit === undefined ? Number.MAX_SAFE_INTEGER : from + limit,
    }) as StoredChunkBatch[];
}

/** `startReply`: the record, in one write with the chat's revision. */
export function startReply(
  db: SqliteConnection,
  input: PreparedStartReply,
  now: number,
): LiveReplyRecord {
  return db.run('startReply(input)', () =>
    db.write(() => {
      requireChat(db, input.chatId);
      const row = insertReply(db, input.chatId, input, now);
      bump(db, input.chatId);
      return record(row);
    }),
  );
}

/**
 * A commit's live reply, to run in the commit's transaction: `before` checks the owner of the
 * reply it ends (so a refusal comes before any other), `after` starts or ends the reply once the
 * messages are written (a start that finds the id taken throws, and the transaction rolls back).
 */
export const commitLive = {
  before(db: SqliteConnection, input: PreparedCommit): void {
    const { endReply } = input;
    if (endReply !== undefined) held(db, input.chatId, endReply.replyId, endReply.owner);
  },
  after(
    db: SqliteConnection,
    input: PreparedCommit,
    written: { readonly branch: string; readonly headMessageId: string | null },
    now: number,
    graceMs: number,
  ): void {
    const { startReply, endReply } = input;
    if (startReply !== undefined) {
      insertReply(
        db,
        input.chatId,
        { ...startReply, branch: written.branch, afterNodeId: written.headMessageId },
        now,
      );
    }
    if (endReply !== undefined) end(db, input.chatId, endReply.replyId, now, graceMs);
  },
};

function moveReplySql(t: TableNames): string {
  return `UPDATE ${t.liveReplies} SET chunk_count = chunk_count + ?, lease_expires_at = ?
   WHERE chat_id = ? AND reply_id = ? AND owner = ? AND chunk_count = ? AND ended_at IS NULL
   RETURNING chunk_count, stop_requested_at`;
}

function insertChunksSql(t: TableNames): string {
  return `INSERT INTO ${t.liveChunks} (chat_id, reply_id, seq, count, chunks) VALUES (?, ?, ?, ?, ?)`;
}

/**
 * `appendReplyChunks`, in one write: the count and the lease moved only where the owner and the
 * offset are the ones given (one update that returns what the caller needs, no read before it),
 * then the batch stored as one row. When nothing moved, a read says why (the chat, the owner, or
 * the offset). The hot path of a live reply: two prepared statements, found without building
 * their SQL.
 */
export function appendReplyChunks(
  db: SqliteConnection,
  input: PreparedAppendReplyChunks,
  now: number,
): AppendReplyChunksResult {
  const { chatId, replyId, owner, from, count } = input;
  return db.run('appendReplyChunks(input)', () =>
    db.write(() => {
      const leaseExpiresAt = now + input.leaseMs;
      const moved = db
        .prepared(moveReplySql)
        .get(count, leaseExpiresAt, chatId, replyId, owner, from) as
        | { chunk_count: number; stop_requested_at: number | null }
        | undefined;
      if (moved === undefined) {
        const row = held(db, chatId, replyId, owner);
        throw new LiveReplyOffsetError({ chatId, replyId, from, chunkCount: row.chunk_count });
      }
      if (count > 0)
        db.prepared(insertChunksSql).run(chatId, replyId, from, count, input.chunksJson);
      return {
        chunkCount: moved.chunk_count,
        leaseExpiresAt,
        stopRequested: moved.stop_requested_at !== null,
      };
    }),
  );
}

/**
 * `readReply`: the record and its chunks from `from`, in one snapshot; null when it was never
 * started or ended `graceMs` or more before `now`.
 */
export function readReply(
  db: SqliteConnection,
  input: PreparedReadReply,
  now: number,
  graceMs: number,
): LiveReplyRead | null {
  const { chatId, replyId } = input;
  return db.run('readReply(input)', () =>
    db.read(() => {
      const row = replyRow(db, chatId, replyId);
      if (row === undefined) {
        requireChat(db, chatId);
        return null;
      }
      if (row.ended_at !== null && row.ended_at + graceMs <= now) return null;
      return {
        record: record(row),
        chunks: chunksFrom(
          batchesFrom(db, chatId, replyId, input.from, input.limit),
          input.from,
          input.limit,
        ),
      };
    }),
  );
}

function replyRows(db: SqliteConnection, chatId: string): ReplyRow[] {
  return db
    .statement(
      `SELECT * FROM ${db.tables.liveReplies} WHERE chat_id = ? AND ended_at IS NULL ORDER BY start_order, reply_id`,
    )
    .all(chatId) as ReplyRow[];
}

/** `getLiveState`: the change revision and the live replies, in one snapshot. */
export function getLiveState(db: SqliteConnection, chatId: string): LiveChatState {
  return db.run('getLiveState(chatId)', () =>
    db.read(() => {
      const chat = chatRow(db, chatId);
      if (chat === undefined) throw new ChatNotFoundError(chatId);
      const revision = db
        .statement(`SELECT revision FROM ${db.tables.liveRevisions} WHERE chat_id = ?`)
        .pluck()
        .get(chatId) as number | undefined;
      return {
        chatId,
        changeRevision: chat.version + (revision ?? 0),
        replies: replyRows(db, chatId).map(record),
      };
    }),
  );
}

/** `stopReply`: marks the live replies not yet asked (the revision bumped when one was). */
export function stopReply(
  db: SqliteConnection,
  input: PreparedStopReply,
  now: number,
): LiveReplyRecord[] {
  const { chatId, replyId } = input;
  return db.run('stopReply(input)', () =>
    db.write(() => {
      requireChat(db, chatId);
      const t = db.tables;
      const marked =
        replyId === undefined
          ? db
              .statement(
                `UPDATE ${t.liveReplies} SET stop_requested_at = ? WHERE chat_id = ? AND stop_requested_at IS NULL AND ended_at IS NULL`,
              )
              .run(now, chatId)
          : db
              .statement(
                `UPDATE ${t.liveReplies} SET stop_requested_at = ? WHERE chat_id = ? AND reply_id = ? AND stop_requested_at IS NULL AND ended_at IS NULL`,
              )
              .run(now, chatId, replyId);
      if (marked.changes > 0) bump(db, chatId);
      if (replyId === undefined) return replyRows(db, chatId).map(record);
      const row = replyRow(db, chatId, replyId);
      return row === undefined || row.ended_at !== null ? [] : [record(row)];
    }),
  );
}

/** `takeOverReply`: hands over a reply whose lease has passed `now`, with all its chunks; else null. */
export function takeOverReply(
  db: SqliteConnection,
  input: PreparedTakeOverReply,
  now: number,
): LiveReplyRead | null {
  const { chatId, replyId } = input;
  return db.run('takeOverReply(input)', () =>
    db.write(() => {
      requireChat(db, chatId);
      const taken = db
        .statement(
          `UPDATE ${db.tables.liveReplies} SET owner = ?, lease_expires_at = ?
            WHERE chat_id = ? AND reply_id = ? AND lease_expires_at <= ? AND ended_at IS NULL RETURNING *`,
        )
        .get(input.owner, now + input.leaseMs, chatId, replyId, now) as ReplyRow | undefined;
      if (taken === undefined) return null;
      bump(db, chatId);
      return { record: record(taken), chunks: chunksFrom(batchesFrom(db, chatId, replyId, 0), 0) };
    }),
  );
}

/** `endReply`: marks the record ended (its chunks kept for the grace period) when `owner` holds it. */
export function endReply(
  db: SqliteConnection,
  input: PreparedEndReply,
  now: number,
  graceMs: number,
): void {
  const { chatId, replyId } = input;
  db.run('endReply(input)', () =>
    db.write(() => {
      held(db, chatId, replyId, input.owner);
      end(db, chatId, replyId, now, graceMs);
      bump(db, chatId);
    }),
  );
}

/** Deletes a chat's live replies and revision: part of `deleteChat`'s transaction. */
export function forgetLiveReplies(db: SqliteConnection, chatId: string): void {
  const t = db.tables;
  db.statement(`DELETE FROM ${t.liveChunks} WHERE chat_id = ?`).run(chatId);
  db.statement(`DELETE FROM ${t.liveReplies} WHERE chat_id = ?`).run(chatId);
  db.statement(`DELETE FROM ${t.liveRevisions} WHERE chat_id = ?`).run(chatId);
}
