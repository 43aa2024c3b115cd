import {
  type CommitResult,
  type JsonObject,
  LiveReplyConflictError,
  LiveReplyLostError,
  LiveReplyOffsetError,
  type LiveReplyRead,
  type LiveReplyRecord,
} from '@ctxgraph/fragments-core';
import {
  chunksFrom,
  type LiveReplyDriver,
  type PreparedCommit,
  type PreparedCommitStartReply,
  type StoredChunkBatch,
} from '@ctxgraph/fragments-core/store-kit';
import type { Lookups } from './lookups';
import { rowsAs } from './rows';

// The live replies of `DurableObjectContextStore` (capabilities.liveReplies), over the tables of
// the schema's second step. Like every other operation, each method runs synchronously from its
// first read to its last write on the object's one thread, and each write is one
// `transactionSync`. An end marks the record (`ended_at`) and keeps its chunks: readable for the
// grace period, then deleted by a later end (any chat's, a bounded batch through the partial
// index on `ended_at`). The change feed is the driver's (`change-feed.ts`): these only write.

/** A row of `ctxgraph_live_replies`. */
interface ReplyRow {
  readonly chat_id: string;
  readonly reply_id: string;
  readonly branch: string | null;
  readonly after_node_id: string | null;
  readonly owner: string;
  readonly lease_expires_at: number;
  readonly stop_requested_at: number | null;
  readonly chunk_count: number;
  readonly started_at: number;
  readonly ended_at: number | null;
  readonly data: string;
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

/** What a reply to start holds, wherever it comes from (`startReply` or a commit's). */
type ReplyToStart = PreparedCommitStartReply & {
  readonly branch: string | null;
  readonly afterNodeId: string | null;
};

/** The live-reply operations of the driver, and what `commit` and `deleteChat` take from them. */
export interface LiveReplyOperations {
  /** The methods of `capabilities.liveReplies` but `watchChat` (the driver's change feed). */
  readonly methods: Required<Omit<LiveReplyDriver, 'watchChat'>>;
  /**
   * A commit's live reply, run inside the commit's `transactionSync`: `before` checks the owner
   * of the reply it ends (so that refusal comes before any other); `after` starts or ends the
   * reply once the messages are written (a start that finds the reply live throws, and the
   * transaction rolls the messages back).
   */
  readonly commitLive: {
    readonly before: (input: PreparedCommit) => void;
    readonly after: (input: PreparedCommit, written: CommitResult, branch: string) => void;
  };
  /** Deletes a chat's live replies, chunks and revision: part of `deleteChat`'s transaction. */
  readonly forget: (chatId: string) => void;
}

/**
 * Live replies over the object's tables, stamped with `clock`; an ended reply stays readable for
 * `graceMs` of it.
 */
export function liveReplyOperations(
  db: Lookups,
  clock: () => number,
  graceMs: number,
): LiveReplyOperations {
  const { storage, sql, rows, requireChat } = db;

  function replyRow(chatId: string, replyId: string): ReplyRow | undefined {
    return rows<ReplyRow>(
      'SELECT * FROM ctxgraph_live_replies WHERE chat_id = ? AND reply_id = ?',
      chatId,
      replyId,
    )[0];
  }

  /** The chat's live replies, oldest start first. */
  function liveRows(chatId: string): ReplyRow[] {
    return rows<ReplyRow>(
      'SELECT * FROM ctxgraph_live_replies WHERE chat_id = ? AND ended_at IS NULL ORDER BY rowid',
      chatId,
    );
  }

  /**
   * The record's row when `owner` holds it (live: an ended reply is held by no one);
   * `ChatNotFoundError` or `LiveReplyLostError` otherwise.
   */
  function held(chatId: string, replyId: string, owner: string): ReplyRow {
    const found = replyRow(chatId, replyId);
    if (found === undefined) requireChat(chatId);
    const row = found?.ended_at === null ? found : undefined;
    if (row === undefined || row.owner !== owner)
      throw new LiveReplyLostError({ chatId, replyId, owner, currentOwner: row?.owner ?? null });
    return row;
  }

  /** `LiveReplyConflictError` when the chat has a live reply of that id. */
  function assertFree(chatId: string, replyId: string): void {
    const found = replyRow(chatId, replyId);
    if (found !== undefined && found.ended_at === null)
      throw new LiveReplyConflictError({ chatId, replyId });
  }

  function remove(chatId: string, replyId: string): void {
    sql.exec(
      'DELETE FROM ctxgraph_live_chunks WHERE chat_id = ? AND reply_id = ?',
      chatId,
      replyId,
    );
    sql.exec(
      'DELETE FROM ctxgraph_live_replies WHERE chat_id = ? AND reply_id = ?',
      chatId,
      replyId,
    );
  }

  /**
   * Inserts a record after `assertFree`: an ended reply of that id (a continuation of a saved
   * reply) gives way, its chunks dropped. Call in a write.
   */
  function insert(chatId: string, reply: ReplyToStart, now: number): ReplyRow {
    remove(chatId, reply.replyId);
    const row: ReplyRow = {
      chat_id: chatId,
      reply_id: reply.replyId,
      branch: reply.branch,
      after_node_id: reply.afterNodeId,
      owner: reply.owner,
      lease_expires_at: now + reply.leaseMs,
      stop_requested_at: null,
      chunk_count: 0,
      started_at: now,
      ended_at: null,
      data: reply.dataJson,
    };
    sql.exec(
      `INSERT INTO ctxgraph_live_replies (chat_id, reply_id, branch, after_node_id, owner,
         lease_expires_at, stop_requested_at, chunk_count, started_at, ended_at, data)
       VALUES (?, ?, ?, ?, ?, ?, NULL, 0, ?, NULL, ?)`,
      row.chat_id,
      row.reply_id,
      row.branch,
      row.after_node_id,
      row.owner,
      row.lease_expires_at,
      row.started_at,
      row.data,
    );
    return row;
  }

  /**
   * Marks the reply ended at `now` (its chunks kept), then deletes a batch of the replies, of any
   * chat, that ended `graceMs` or more before. Call in a write, after `held`.
   */
  function end(chatId: string, replyId: string, now: number): void {
    sql.exec(
      'UPDATE ctxgraph_live_replies SET ended_at = ? WHERE chat_id = ? AND reply_id = ?',
      now,
      chatId,
      replyId,
    );
    const expired = rows<{ chat_id: string; reply_id: string }>(
      `SELECT chat_id, reply_id FROM ctxgraph_live_replies
        WHERE ended_at IS NOT NULL AND ended_at <= ? ORDER BY ended_at LIMIT ${PURGE_BATCH}`,
      now - graceMs,
    );
    for (const key of expired) remove(key.chat_id, key.reply_id);
  }

  /** Raises the chat's change revision: a live-reply write that is not a commit. */
  function bump(chatId: string): void {
    sql.exec(
      `INSERT INTO ctxgraph_live_revisions (chat_id, revision) VALUES (?, 1)
       ON CONFLICT (chat_id) DO UPDATE SET revision = revision + 1`,
      chatId,
    );
  }

  /** The batches holding the chunks from `from` (to `from + limit` when given), in offset order. */
  function batchesFrom(
    chatId: string,
    replyId: string,
    from: number,
    limit?: number,
  ): StoredChunkBatch[] {
    // The batch holding `from` starts at the largest seq not above it: a key range from there
    // to the first batch at or past the page's end.
    return rowsAs<StoredChunkBatch>(
      sql
        .exec(
          `SELECT seq, count, chunks AS json FROM ctxgraph_live_chunks
            WHERE chat_id = ?1 AND reply_id = ?2
              AND seq >= coalesce((SELECT max(seq) FROM ctxgraph_live_chunks
                                    WHERE chat_id = ?1 AND reply_id = ?2 AND seq <= ?3), 0)
              AND seq < ?4
            ORDER BY seq`,
          chatId,
          replyId,
          from,
          limit === undefined ? Number.MAX_SAFE_INTEGER : from + limit,
        )
        .toArray(),
    );
  }

  function readFrom(row: ReplyRow, from: number, limit?: number): LiveReplyRead {
    return {
      record: record(row),
      chunks: chunksFrom(batchesFrom(row.chat_id, row.reply_id, from, limit), from, limit),
    };
  }

  const methods: LiveReplyOperations['methods'] = {
    startReply(input) {
      return storage.transactionSync(() => {
        requireChat(input.chatId);
        assertFree(input.chatId, input.replyId);
        const row = insert(input.chatId, input, clock());
        bump(input.chatId);
        return record(row);
      });
    },

    // The hot path of a live reply: one update that moves the count and the lease only where the
    // owner and the offset are the ones given and returns what the caller needs, then the batch;
    // only when nothing moved does a read say why (the chat, the owner, or the offset).
    appendReplyChunks(input) {
      const { chatId, replyId, owner, from, count } = input;
      return storage.transactionSync(() => {
        const leaseExpiresAt = clock() + input.leaseMs;
        const moved = rows<{ chunk_count: number; stop_requested_at: number | null }>(
          `UPDATE ctxgraph_live_replies SET chunk_count = chunk_count + ?, lease_expires_at = ?
            WHERE chat_id = ? AND reply_id = ? AND owner = ? AND chunk_count = ? AND ended_at IS NULL
            RETURNING chunk_count, stop_requested_at`,
          count,
          leaseExpiresAt,
          chatId,
          replyId,
          owner,
          from,
        )[0];
        if (moved === undefined) {
          const row = held(chatId, replyId, owner);
          throw new LiveReplyOffsetError({ chatId, replyId, from, chunkCount: row.chunk_count });
        }
        if (count > 0) {
          sql.exec(
            'INSERT INTO ctxgraph_live_chunks (chat_id, reply_id, seq, count, chunks) VALUES (?, ?, ?, ?, ?)',
            chatId,
            replyId,
            from,
            count,
            input.chunksJson,
          );
        }
        return {
          chunkCount: moved.chunk_count,
          leaseExpiresAt,
          stopRequested: moved.stop_requested_at !== null,
        };
      });
    },

    readReply(input) {
      const row = replyRow(input.chatId, input.replyId);
      if (row === undefined) {
        requireChat(input.chatId);
        return null;
      }
      if (row.ended_at !== null && row.ended_at + graceMs <= clock()) return null;
      return readFrom(row, input.from, input.limit);
    },

    getLiveState(chatId) {
      const chat = requireChat(chatId);
      const revision = rows<{ revision: number }>(
        'SELECT revision FROM ctxgraph_live_revisions WHERE chat_id = ?',
        chatId,
      )[0]?.revision;
      return {
        chatId,
        changeRevision: chat.revision + (revision ?? 0),
        replies: liveRows(chatId).map(record),
      };
    },

    stopReply(input) {
      const { chatId, replyId } = input;
      return storage.transactionSync(() => {
        requireChat(chatId);
        const now = clock();
        const asked =
          replyId === undefined
            ? liveRows(chatId)
            : liveRows(chatId).filter((row) => row.reply_id === replyId);
        let marked = false;
        const records = asked.map((row) => {
          if (row.stop_requested_at !== null) return record(row);
          sql.exec(
            'UPDATE ctxgraph_live_replies SET stop_requested_at = ? WHERE chat_id = ? AND reply_id = ?',
            now,
            chatId,
            row.reply_id,
          );
          marked = true;
          return record({ ...row, stop_requested_at: now });
        });
        if (marked) bump(chatId);
        return records;
      });
    },

    takeOverReply(input) {
      const { chatId, replyId } = input;
      return storage.transactionSync(() => {
        requireChat(chatId);
        const row = replyRow(chatId, replyId);
        const now = clock();
        if (row === undefined || row.ended_at !== null || row.lease_expires_at > now) return null;
        const taken: ReplyRow = {
          ...row,
          owner: input.owner,
          lease_expires_at: now + input.leaseMs,
        };
        sql.exec(
          'UPDATE ctxgraph_live_replies SET owner = ?, lease_expires_at = ? WHERE chat_id = ? AND reply_id = ?',
          taken.owner,
          taken.lease_expires_at,
          chatId,
          replyId,
        );
        bump(chatId);
        return readFrom(taken, 0);
      });
    },

    endReply(input) {
      const { chatId, replyId } = input;
      storage.transactionSync(() => {
        held(chatId, replyId, input.owner);
        end(chatId, replyId, clock());
        bump(chatId);
      });
    },
  };

  const commitLive: LiveReplyOperations['commitLive'] = {
    before(input) {
      const { endReply } = input;
      if (endReply !== undefined) held(input.chatId, endReply.replyId, endReply.owner);
    },
    after(input, written, branch) {
      const { startReply, endReply } = input;
      const now = clock();
      if (startReply !== undefined) {
        assertFree(input.chatId, startReply.replyId);
        insert(input.chatId, { ...startReply, branch, afterNodeId: written.headMessageId }, now);
      }
      if (endReply !== undefined) end(input.chatId, endReply.replyId, now);
    },
  };

  function forget(chatId: string): void {
    for (const table of [
      'ctxgraph_live_chunks',
      'ctxgraph_live_replies',
      'ctxgraph_live_revisions',
    ] as const)
      sql.exec(`DELETE FROM ${table} WHERE chat_id = ?`, chatId);
  }

  return { methods, commitLive, forget };
}
