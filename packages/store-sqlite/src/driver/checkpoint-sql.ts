import {
  type ChatPointerInput,
  CheckpointExistsError,
  type CheckpointRecord,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import type { PreparedCreateCheckpoint } from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { checkpointRow, messageRow, requireChat, touchChat } from './lookups';
import { type CheckpointRow, checkpointRecord } from './rows';

/** Names a node; `replace` moves an existing checkpoint of that name instead of refusing. */
export function createCheckpoint(
  db: SqliteConnection,
  input: PreparedCreateCheckpoint,
): CheckpointRecord {
  const { chatId, name, messageId } = input;
  return db.run('createCheckpoint(input)', () =>
    db.write(() => {
      requireChat(db, chatId);
      if (messageRow(db, chatId, messageId) === undefined)
        throw new MessageNotFoundError(chatId, messageId);
      const taken = checkpointRow(db, chatId, name) !== undefined;
      if (taken && !input.replace) throw new CheckpointExistsError(chatId, name);
      const now = Date.now();
      // Replacing keeps the row (and so its place in the listing) and records when it moved.
      const row = db
        .statement(
          `INSERT INTO ${db.tables.checkpoints} (chat_id, name, message_id, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (chat_id, name) DO UPDATE SET message_id = excluded.message_id, created_at = excluded.created_at
           RETURNING *`,
        )
        .get(chatId, name, messageId, now) as CheckpointRow;
      touchChat(db, chatId, now);
      return checkpointRecord(row);
    }),
  );
}

/** A checkpoint, or null (`ChatNotFoundError` when the chat is missing). */
export function getCheckpoint(
  db: SqliteConnection,
  input: ChatPointerInput,
): CheckpointRecord | null {
  return db.run('getCheckpoint(input)', () => {
    const row = checkpointRow(db, input.chatId, input.name);
    if (row !== undefined) return checkpointRecord(row);
    requireChat(db, input.chatId);
    return null;
  });
}

/** Every checkpoint of the chat, oldest first. */
export function listCheckpoints(db: SqliteConnection, chatId: string): CheckpointRecord[] {
  return db.run('listCheckpoints(chatId)', () =>
    db.read(() => {
      requireChat(db, chatId);
      return checkpointRows(db, chatId).map(checkpointRecord);
    }),
  );
}

/** Deletes a checkpoint (never its node); false when there was none. */
export function deleteCheckpoint(db: SqliteConnection, input: ChatPointerInput): boolean {
  return db.run('deleteCheckpoint(input)', () =>
    db.write(() => {
      requireChat(db, input.chatId);
      const deleted =
        db
          .statement(`DELETE FROM ${db.tables.checkpoints} WHERE chat_id = ? AND name = ?`)
          .run(input.chatId, input.name).changes > 0;
      if (deleted) touchChat(db, input.chatId, Date.now());
      return deleted;
    }),
  );
}

/** A chat's checkpoints, oldest first. */
export function checkpointRows(db: SqliteConnection, chatId: string): CheckpointRow[] {
  return db
    .statement(
      `SELECT * FROM ${db.tables.checkpoints} WHERE chat_id = ? ORDER BY created_at, rowid`,
    )
    .all(chatId) as CheckpointRow[];
}
