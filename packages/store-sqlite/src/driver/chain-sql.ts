import {
  type ChainPage,
  type EngineRecord,
  type GetMessageInput,
  type MessageNodeRecord,
  MessageNotFoundError,
  type StoredMessage,
  StoreError,
} from '@ctxgraph/fragments-core';
import type {
  PreparedFindMessageNodes,
  PreparedGetChain,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import { messageRow, requireChat } from './lookups';
import { MESSAGE_COLUMNS, type MessageRow, messageRecord } from './rows';

const UNLIMITED = Number.MAX_SAFE_INTEGER;

/**
 * The chain back from `headMessageId`, oldest first, stopping before `until` and after `limit`
 * nodes. The whole walk is one statement: a recursive CTE that follows `parent_id` through the
 * primary key.
 *
 * Each node comes back as one JSON text, `[id, parentId, sequence, createdAt, updatedAt,
 * engineRecord, message]`, built by SQLite around the stored JSON of the record and the message:
 * each value better-sqlite3 hands to JavaScript costs about as much as parsing a short message,
 * so one value per node (parsed once, as the message had to be anyway) costs less than seven.
 * Only that text and the parent id ride through the recursion and the sort.
 */
export function getChain(db: SqliteConnection, input: PreparedGetChain): ChainPage {
  const { chatId, headMessageId } = input;
  const until = input.until ?? null;
  const limit = input.limit ?? UNLIMITED;
  return db.run('getChain(input)', () => {
    const texts = db
      .prepared(chainSql)
      .pluck(true)
      .all({ chatId, head: headMessageId, until, limit }) as string[];
    const count = texts.length;
    if (count === 0) {
      requireChat(db, chatId);
      if (headMessageId === until) return { nodes: [], nextCursor: null, reachedUntil: true };
      throw new MessageNotFoundError(chatId, headMessageId);
    }
    const nodes = new Array<MessageNodeRecord>(count);
    for (let index = 0; index < count; index += 1)
      nodes[index] = chainNode(db, chatId, texts[index] as string);
    const oldestParent = (nodes[0] as MessageNodeRecord).parentId;
    const reachedUntil = until !== null && oldestParent === until;
    const nextCursor =
      !reachedUntil && count === limit && oldestParent !== null ? oldestParent : null;
    return { nodes, nextCursor, reachedUntil };
  });
}

/** A node of the chain statement: its row's JSON text, `[id, parentId, sequence, createdAt, updatedAt, engineRecord, message]`. */
type ChainRow = [
  id: string,
  parentId: string | null,
  sequence: number,
  createdAt: number,
  updatedAt: number,
  engineRecord: EngineRecord | null,
  message: StoredMessage,
];

/**
 * The record of one row of the chain statement. The stored JSON texts were written by the store
 * (each one JSON value), so a row parses to exactly seven values; anything else is a damaged row,
 * reported as such rather than read askew.
 */
function chainNode(db: SqliteConnection, chatId: string, text: string): MessageNodeRecord {
  const row = JSON.parse(text) as ChainRow;
  if (row.length !== 7 || typeof row[0] !== 'string') {
    throw new StoreError(
      `SqliteContextStore at "${db.path}": a stored node of chat "${chatId}" is damaged (its message or engine record is not one JSON value). Restore the file from a backup.`,
    );
  }
  return {
    chatId,
    id: row[0],
    parentId: row[1],
    sequence: row[2],
    message: row[6],
    engineRecord: row[5],
    createdAt: row[3],
    updatedAt: row[4],
  };
}

/**
 * The chain walk: one recursive statement through the primary key, oldest first, each node as
 * the JSON text {@link chainNode} reads: `json_array` writes the ids (quoted) and the integers
 * (STRICT columns hold integers only, so the array ends in a digit and its one closing bracket),
 * and the stored JSON of the record and the message follow as they are. Shorter to prepare and
 * to run than a concatenation of each value (a new handle prepares it on its first read).
 */
function chainSql(tables: TableNames): string {
  const m = tables.messages;
  const row = (node: string) =>
    `rtrim(json_array(${node}.id, ${node}.parent_id, ${node}.sequence, ${node}.created_at, ${node}.updated_at), ']') || ',' || coalesce(${node}.engine_record, 'null') || ',' || ${node}.payload || ']'`;
  return `WITH RECURSIVE chain (parent_id, node_json, depth) AS (
     SELECT newest.parent_id, ${row('newest')}, 1
       FROM ${m} AS newest WHERE newest.chat_id = @chatId AND newest.id = @head AND newest.id IS NOT @until
     UNION ALL
     SELECT older.parent_id, ${row('older')}, chain.depth + 1
       FROM chain JOIN ${m} AS older ON older.chat_id = @chatId AND older.id = chain.parent_id
      WHERE chain.depth < @limit AND older.id IS NOT @until
   )
   SELECT node_json FROM chain ORDER BY depth DESC`;
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
