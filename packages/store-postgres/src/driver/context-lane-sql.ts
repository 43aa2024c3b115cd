import {
  ChatNotFoundError,
  ContextConflictError,
  type ContextLaneRecord,
  type JsonValue,
} from '@ctxgraph/fragments-core';
import type { PreparedSaveContext } from '@ctxgraph/fragments-core/store-kit';
import type { PostgresConnection } from './connection';
import { integer, type Row, text } from './rows';

/**
 * The chat's context lane: revision 0 and no fragments while none was saved. One statement, so
 * the chat and its lane come from one snapshot.
 */
export function getContext(db: PostgresConnection, chatId: string): Promise<ContextLaneRecord> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT l.fragments::text, l.revision, l.updated_at FROM ${db.names.chats} c
       LEFT JOIN ${db.names.contextLanes} l ON l.chat_id = c.chat_id
       WHERE c.chat_id = $1`,
      [chatId],
    );
    const row = rows[0];
    if (row === undefined) throw new ChatNotFoundError(chatId);
    return laneFrom(chatId, row);
  });
}

/**
 * Replaces the lane in one transaction that first takes the chat row lock (moving the chat's
 * `updated_at`, never its `revision` or `rewritten_at`): concurrent saves of a chat queue, and
 * each reads the revision the previous one wrote, so of saves expecting the same revision exactly
 * one wins and the others get `ContextConflictError`.
 */
export function saveContext(
  db: PostgresConnection,
  input: PreparedSaveContext,
): Promise<ContextLaneRecord> {
  const { chatId, fragmentsJson, expectedRevision } = input;
  return db.run(() =>
    db.transaction(async (sql) => {
      const names = db.names;
      // The lock first, the lane in a statement of its own: under READ COMMITTED the next
      // statement's snapshot is taken after the lock is granted, so it sees the revision the
      // save this one queued behind wrote (a join in the locking statement would not).
      const locked = await db.query(
        sql,
        `SELECT c.updated_at FROM ${names.chats} c WHERE c.chat_id = $1 FOR UPDATE`,
        [chatId],
      );
      if (locked[0] === undefined) throw new ChatNotFoundError(chatId);
      const lanes = await db.query(
        sql,
        `SELECT l.revision, l.updated_at FROM ${names.contextLanes} l WHERE l.chat_id = $1`,
        [chatId],
      );
      const lane = lanes[0];
      const currentRevision = lane === undefined ? 0 : integer(lane[0]);
      if (expectedRevision !== undefined && expectedRevision !== currentRevision) {
        throw new ContextConflictError({ chatId, expectedRevision, currentRevision });
      }
      const previous = Math.max(
        integer((locked[0] as Row)[0]),
        lane === undefined ? 0 : integer(lane[1]),
      );
      const now = Math.max(Date.now(), previous);
      await db.query(sql, `UPDATE ${names.chats} c SET updated_at = $2 WHERE c.chat_id = $1`, [
        chatId,
        now,
      ]);
      const rows = await db.query(
        sql,
        `INSERT INTO ${names.contextLanes} AS l (chat_id, fragments, revision, updated_at)
         VALUES ($1, $2::text::json, $3, $4)
         ON CONFLICT (chat_id) DO UPDATE SET
           fragments = excluded.fragments, revision = excluded.revision, updated_at = excluded.updated_at
         RETURNING l.fragments::text, l.revision, l.updated_at`,
        [chatId, fragmentsJson, currentRevision + 1, now],
      );
      return laneFrom(chatId, rows[0] as Row);
    }),
  );
}

function laneFrom(chatId: string, row: Row): ContextLaneRecord {
  if (row[0] === null) return { chatId, fragments: [], revision: 0, updatedAt: null };
  return {
    chatId,
    fragments: JSON.parse(text(row[0])) as JsonValue[],
    revision: integer(row[1]),
    updatedAt: integer(row[2]),
  };
}
