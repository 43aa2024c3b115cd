import {
  type ChainPage,
  type GetMessageInput,
  type MessageNodeRecord,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import type {
  PreparedFindMessageNodes,
  PreparedGetChain,
} from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { messageRow, requireChat } from './lookups';
import { MESSAGE_COLUMNS, type MessageRow, messageRecord } from './rows';

const UNLIMITED = Number.MAX_SAFE_INTEGER;

/**
 * The chain back from `headMessageId`, oldest first, stopping before `until` and after `limit`
 * nodes. The whole walk is one statement: a recursive CTE that follows `parent_id` through the
 * primary key.
 */
export function getChain(db: SqliteConnection, input: PreparedGetChain): ChainPage {
  const { chatId, headMessageId } = input;
  const until = input.until ?? null;
  const limit = input.limit ?? UNLIMITED;
  return db.run('getChain(input)', () => {
    const m = db.tables.messages;
    const rows = db
      .statement(
        `WITH RECURSIVE chain (id, parent_id, sequence, payload, engine_record, created_at, updated_at, depth) AS (
           SELECT id, parent_id, sequence, payload, engine_record, created_at, updated_at, 1
             FROM ${m} WHERE chat_id = @chatId AND id = @head AND id IS NOT @until
           UNION ALL
           SELECT node.id, node.parent_id, node.sequence, node.payload, node.engine_record, node.created_at, node.updated_at, chain.depth + 1
             FROM chain JOIN ${m} AS node ON node.chat_id = @chatId AND node.id = chain.parent_id
            WHERE chain.depth < @limit AND node.id IS NOT @until
         )
         SELECT id, parent_id, sequence, payload, engine_record, created_at, updated_at FROM chain ORDER BY depth DESC`,
      )
      .all({ chatId, head: headMessageId, until, limit }) as MessageRow[];
    const oldest = rows[0];
    if (oldest === undefined) {
      requireChat(db, chatId);
      if (headMessageId === until) return { nodes: [], nextCursor: null, reachedUntil: true };
      throw new MessageNotFoundError(chatId, headMessageId);
    }
    const reachedUntil = until !== null && oldest.parent_id === until;
    const nextCursor =
      !reachedUntil && rows.length === limit && oldest.parent_id !== null ? oldest.parent_id : null;
    return { nodes: rows.map((row) => messageRecord(chatId, row)), nextCursor, reachedUntil };
  });
}

/** One node, or null (`ChatNotFoundError` when the chat is missing). */
export function getMessage(db: SqliteConnection, input: GetMessageInput): MessageNodeRecord | null {
  return db.run('getMessage(input)', () => {
    const row = messageRow(db, input.chatId, input.messageId);
    if (row !== undefined) return messageRecord(input.chatId, row);
    requireChat(db, input.chatId);
    return null;
  });
}

/**
 * The nodes holding a message id, newest first: one range scan of the `message versions`
 * expression index (the `json_extract` below must match the index's expression).
 */
export function findMessageNodes(
  db: SqliteConnection,
  input: PreparedFindMessageNodes,
): MessageNodeRecord[] {
  return db.run('findMessageNodes(input)', () =>
    db.read(() => {
      const rows = db
        .statement(
          `SELECT ${MESSAGE_COLUMNS} FROM ${db.tables.messages}
            WHERE chat_id = ? AND json_extract(payload, '$.id') = ?
            ORDER BY sequence DESC LIMIT ?`,
        )
        .all(input.chatId, input.messageId, input.limit) as MessageRow[];
      if (rows.length === 0) requireChat(db, input.chatId);
      return rows.map((row) => messageRecord(input.chatId, row));
    }),
  );
}
