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
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import { messageRow, requireChat } from './lookups';
import {
  MESSAGE_COLUMNS,
  type MessageRow,
  type MessageTuple,
  messageRecord,
  messageRecordOfTuple,
} from './rows';

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
    // Rows as arrays (no object per row), in MESSAGE_COLUMNS order.
    const rows = db
      .prepared(chainSql)
      .raw(true)
      .all({ chatId, head: headMessageId, until, limit }) as MessageTuple[];
    const oldest = rows[0];
    if (oldest === undefined) {
      requireChat(db, chatId);
      if (headMessageId === until) return { nodes: [], nextCursor: null, reachedUntil: true };
      throw new MessageNotFoundError(chatId, headMessageId);
    }
    const oldestParent = oldest[1];
    const reachedUntil = until !== null && oldestParent === until;
    const nextCursor =
      !reachedUntil && rows.length === limit && oldestParent !== null ? oldestParent : null;
    const nodes = new Array<MessageNodeRecord>(rows.length);
    for (let index = 0; index < rows.length; index += 1)
      nodes[index] = messageRecordOfTuple(chatId, rows[index] as MessageTuple);
    return { nodes, nextCursor, reachedUntil };
  });
}

/** The chain walk: one recursive statement through the primary key, oldest first. */
function chainSql(tables: TableNames): string {
  const m = tables.messages;
  return `WITH RECURSIVE chain (id, parent_id, sequence, payload, engine_record, created_at, updated_at, depth) AS (
     SELECT id, parent_id, sequence, payload, engine_record, created_at, updated_at, 1
       FROM ${m} WHERE chat_id = @chatId AND id = @head AND id IS NOT @until
     UNION ALL
     SELECT node.id, node.parent_id, node.sequence, node.payload, node.engine_record, node.created_at, node.updated_at, chain.depth + 1
       FROM chain JOIN ${m} AS node ON node.chat_id = @chatId AND node.id = chain.parent_id
      WHERE chain.depth < @limit AND node.id IS NOT @until
   )
   SELECT ${MESSAGE_COLUMNS} FROM chain ORDER BY depth DESC`;
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
 * The nodes holding a message id, newest first: its versions through the `versions` partial
 * index (whose condition the WHERE repeats, so that SQLite uses it) and the node under the
 * message's own id by primary key, in one statement (one snapshot, no read transaction around
 * it), sorted and cut to `limit` here. The chat is checked only when nothing was found, as
 * `getMessage` does: either answer is true of some moment of the call.
 */
export function findMessageNodes(
  db: SqliteConnection,
  input: PreparedFindMessageNodes,
): MessageNodeRecord[] {
  const { chatId, messageId, limit } = input;
  return db.run('findMessageNodes(input)', () => {
    const rows = db
      .statement(findMessageNodesSql(db.tables, limit))
      .all({ chatId, messageId }) as MessageRow[];
    if (rows.length === 0) requireChat(db, chatId);
    if (rows.length > 1) rows.sort((left, right) => right.sequence - left.sequence);
    if (rows.length > limit) rows.length = limit;
    return rows.map((row) => messageRecord(chatId, row));
  });
}

/**
 * The statement of {@link findMessageNodes} for the store's tables (named parameters `chatId`
 * and `messageId`). The limit is written into it: bound as a parameter, it cost SQLite's lookup
 * four times as much. The kit has checked it (an integer from 1 to 100); it is checked again
 * before it reaches SQL text.
 */
export function findMessageNodesSql(tables: TableNames, limit: number): string {
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new RangeError(`findMessageNodes: limit ${limit} is not an integer from 1 to 100.`);
  const m = tables.messages;
  return `SELECT * FROM (
      SELECT ${MESSAGE_COLUMNS} FROM ${m}
       WHERE chat_id = @chatId AND json_extract(payload, '$.id') = @messageId
         AND json_extract(payload, '$.id') <> id
       ORDER BY sequence DESC LIMIT ${limit}
    )
    UNION ALL
    SELECT ${MESSAGE_COLUMNS} FROM ${m}
     WHERE chat_id = @chatId AND id = @messageId AND json_extract(payload, '$.id') = @messageId`;
}
