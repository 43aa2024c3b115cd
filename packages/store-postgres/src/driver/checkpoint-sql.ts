import {
  ChatNotFoundError,
  type ChatPointerInput,
  CheckpointExistsError,
  type CheckpointRecord,
} from '@ctxgraph/fragments-core';
import type { PreparedCreateCheckpoint } from '@ctxgraph/fragments-core/store-kit';
import type { PostgresConnection } from './connection';
import { CHECKPOINT_COLUMNS, checkpointFrom, integer, type Row } from './rows';

/** Names a node; refuses a taken name unless `replace`. */
export function createCheckpoint(
  db: PostgresConnection,
  input: PreparedCreateCheckpoint,
): Promise<CheckpointRecord> {
  const { chatId, name, messageId, replace } = input;
  return db.run(() =>
    db.transaction(async (sql) => {
      const now = Date.now();
      await db.lockChat(sql, chatId, now, null);
      await db.assertMessageExists(sql, chatId, messageId);
      const onConflict = replace
        ? 'DO UPDATE SET message_id = excluded.message_id, created_at = excluded.created_at'
        : 'DO NOTHING';
      const rows = await db.query(
        sql,
        `INSERT INTO ${db.names.checkpoints} AS k (chat_id, name, message_id, created_at)
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
export function getCheckpoint(
  db: PostgresConnection,
  input: ChatPointerInput,
): Promise<CheckpointRecord | null> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.chat_id, ${CHECKPOINT_COLUMNS} FROM ${db.names.chats} c
       LEFT JOIN ${db.names.checkpoints} k ON k.chat_id = c.chat_id AND k.name = $2
       WHERE c.chat_id = $1`,
      [input.chatId, input.name],
    );
    const row = rows[0];
    if (row === undefined) throw new ChatNotFoundError(input.chatId);
    return row[2] === null ? null : checkpointFrom(row, 1);
  });
}

/** Every checkpoint of the chat, oldest first. */
export function listCheckpoints(
  db: PostgresConnection,
  chatId: string,
): Promise<CheckpointRecord[]> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.chat_id, ${CHECKPOINT_COLUMNS} FROM ${db.names.chats} c
       LEFT JOIN ${db.names.checkpoints} k ON k.chat_id = c.chat_id
       WHERE c.chat_id = $1
       ORDER BY k.created_at, k.ordinal`,
      [chatId],
    );
    if (rows.length === 0) throw new ChatNotFoundError(chatId);
    return rows.filter((row) => row[2] !== null).map((row) => checkpointFrom(row, 1));
  });
}

/** Deletes a checkpoint (never the node). False when there was none. */
export function deleteCheckpoint(
  db: PostgresConnection,
  input: ChatPointerInput,
): Promise<boolean> {
  return db.run(async (sql) => {
    const names = db.names;
    const rows = await db.query(
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
