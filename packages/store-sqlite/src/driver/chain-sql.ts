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
 * The nodes holding a message id, newest first: the node under the message's own id (a
 * primary-key probe) and its versions (a range scan of the `versions` partial index, whose
 * condition the second WHERE repeats so that SQLite can use it), at most `limit` in all.
 */
export function findMessageNodes(
  db: SqliteConnection,
  input: PreparedFindMessageNodes,
): MessageNodeRecord[] {
  return db.run('findMessageNodes(input)', () =>
    db.read(() => {
      const rows = db.statement(findMessageNodesSql(db.tables.messages)).all({
        chatId: input.chatId,
        messageId: input.messageId,
        limit: input.limit,
      }) as MessageRow[];
      if (rows.length === 0) requireChat(db, input.chatId);
      return rows.map((row) => messageRecord(input.chatId, row));
    }),
  );
}

/**
 * The statement of {@link findMessageNodes} for the messages table `m` (named parameters
 * `chatId`, `messageId`, `limit`).
 */
export function findMessageNodesSql(m: string): string {
  return `SELECT ${MESSAGE_COLUMNS} FROM ${m}
     WHERE chat_id = @chatId AND id = @messageId AND json_extract(payload, '$.id') = @messageId
    UNION ALL
    SELECT * FROM (
      SELECT ${MESSAGE_COLUMNS} FROM ${m}
       WHERE chat_id = @chatId AND json_extract(payload, '$.id') = @messageId
         AND json_extract(payload, '$.id') <> id
       ORDER BY sequence DESC LIMIT @limit
    )
    ORDER BY sequence DESC LIMIT @limit`;
}
