import {
  type ChainPage,
  ChatNotFoundError,
  type GetMessageInput,
  type MessageNodeRecord,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import type {
  PreparedFindMessageNodes,
  PreparedGetChain,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { PostgresConnection } from './connection';
import { MESSAGE_COLUMNS, messageFrom } from './rows';

/**
 * The chain from a node back toward the root in one recursive query that stops at `until` and
 * after `limit` nodes (all of them when undefined), oldest first.
 */
export function getChain(db: PostgresConnection, input: PreparedGetChain): Promise<ChainPage> {
  const { chatId, headMessageId, until, limit } = input;
  return db.run(async (sql) => {
    const names = db.names;
    const rows = await db.query(sql, chainStatement(names), [
      chatId,
      headMessageId,
      until ?? null,
      // As text, any safe integer fits bigint.
      limit === undefined ? null : String(limit),
    ]);
    const nodes = rows.map((row) => messageFrom(row));
    const oldest = nodes[0];
    if (oldest === undefined) {
      const found = await db.query(
        sql,
        `SELECT m.message_id FROM ${names.chats} c
         LEFT JOIN ${names.messages} m ON m.chat_id = c.chat_id AND m.message_id = $2
         WHERE c.chat_id = $1`,
        [chatId, headMessageId],
      );
      if (found[0] === undefined) throw new ChatNotFoundError(chatId);
      if (found[0][0] === null) throw new MessageNotFoundError(chatId, headMessageId);
      // The head is `until` itself: the caller already has everything.
      return { nodes: [], nextCursor: null, reachedUntil: true };
    }
    const reachedUntil = until !== undefined && oldest.parentId === until;
    const cut =
      limit !== undefined && nodes.length === limit && oldest.parentId !== null && !reachedUntil;
    return { nodes, nextCursor: cut ? oldest.parentId : null, reachedUntil };
  });
}

/** One node, or null. */
export function getMessage(
  db: PostgresConnection,
  input: GetMessageInput,
): Promise<MessageNodeRecord | null> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.chat_id, ${MESSAGE_COLUMNS} FROM ${db.names.chats} c
       LEFT JOIN ${db.names.messages} m ON m.chat_id = c.chat_id AND m.message_id = $2
       WHERE c.chat_id = $1`,
      [input.chatId, input.messageId],
    );
    const row = rows[0];
    if (row === undefined) throw new ChatNotFoundError(input.chatId);
    return row[2] === null ? null : messageFrom(row, 1);
  });
}

/**
 * The nodes holding a message id, newest first: one range scan of the `message versions`
 * expression index (the `->>` below must match the index's expression).
 */
export function findMessageNodes(
  db: PostgresConnection,
  input: PreparedFindMessageNodes,
): Promise<MessageNodeRecord[]> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT ${MESSAGE_COLUMNS} FROM ${db.names.messages} m
       WHERE m.chat_id = $1 AND (m.message ->> 'id') = $2
       ORDER BY m.sequence DESC LIMIT $3`,
      [input.chatId, input.messageId, input.limit],
    );
    if (rows.length === 0) {
      const chat = await db.query(sql, `SELECT 1 FROM ${db.names.chats} WHERE chat_id = $1`, [
        input.chatId,
      ]);
      if (chat.length === 0) throw new ChatNotFoundError(input.chatId);
    }
    return rows.map((row) => messageFrom(row));
  });
}

const statements = new WeakMap<TableNames, string>();

/** The chain statement for these tables, built once per store. */
function chainStatement(names: TableNames): string {
  const cached = statements.get(names);
  if (cached !== undefined) return cached;
  const messages = names.messages;
  // $1 chat, $2 head, $3 until (or null), $4 limit (or null).
  // The walk goes from the head toward the root one run at a time (see the `chain runs`
  // migration): each `spans` row is a node q and stands for the chain from q back to the first
  // node of its run, sequences low..q.sequence. The next span starts at the parent of that
  // first node. Every lookup is a LATERAL probe with LIMIT 1 or a range of the (chat_id,
  // sequence) key, so the plan is index probes whatever the planner knows about the table: a
  // plain recursive join is hash-joined against every row of the chat at every step when
  // statistics are missing, or when one chat fills most of the table. It stops at the span
  // that holds `until` (all of a span's sequences are on the chain, so that is the test) and
  // once `limit` nodes are covered; the nodes are then read span by span with range scans,
  // each bounded by `until` and `limit`, so a short read of a long run stays short.
  const statement = `WITH RECURSIVE target AS (
  SELECT (SELECT u.sequence FROM ${messages} u WHERE u.chat_id = $1::text AND u.message_id = $3::text) AS until_sequence
), spans AS (
  SELECT h.message_id, h.parent_id, h.sequence, h.message, h.engine_record, h.created_at, h.updated_at,
    coalesce(h.run_start, h.sequence) AS low,
    h.sequence - coalesce(h.run_start, h.sequence) + 1 AS covered
  FROM ${messages} h
  WHERE h.chat_id = $1::text AND h.message_id = $2::text
  UNION ALL
  SELECT q.message_id, q.parent_id, q.sequence, q.message, q.engine_record, q.created_at, q.updated_at,
    coalesce(q.run_start, q.sequence),
    s.covered + q.sequence - coalesce(q.run_start, q.sequence) + 1
  FROM spans s
  CROSS JOIN target t
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.low = s.sequence THEN s.parent_id ELSE (
      SELECT f.parent_id FROM ${messages} f WHERE f.chat_id = $1::text AND f.sequence = s.low
    ) END AS id
  ) first_parent
  CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.message, m.engine_record, m.created_at, m.updated_at, m.run_start
    FROM ${messages} m
    WHERE m.chat_id = $1::text AND m.message_id = first_parent.id
    LIMIT 1
  ) q
  WHERE (t.until_sequence IS NULL OR t.until_sequence NOT BETWEEN s.low AND s.sequence)
    AND ($4::bigint IS NULL OR s.covered < $4::bigint)
), nodes AS (
  SELECT s.message_id, s.parent_id, s.sequence, s.message, s.engine_record, s.created_at, s.updated_at FROM spans s
  UNION ALL
  SELECT r.message_id, r.parent_id, r.sequence, r.message, r.engine_record, r.created_at, r.updated_at
  FROM spans s CROSS JOIN target t CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.message, m.engine_record, m.created_at, m.updated_at
    FROM ${messages} m
    WHERE s.low < s.sequence AND m.chat_id = $1::text AND m.sequence < s.sequence
      -- Within one long run, read only what is wanted: the part after until when the run
      -- holds it, and only the newest nodes the limit still allows (newer spans took the
      -- rest). One lower bound, so it is the index range, not a filter over the whole run.
      AND m.sequence >= greatest(
        s.low,
        coalesce(s.low + s.covered - $4::bigint, s.low),
        CASE WHEN t.until_sequence BETWEEN s.low AND s.sequence THEN t.until_sequence + 1 ELSE s.low END
      )
    -- A fence: the range stays a per-span index scan instead of a join over the whole chat.
    OFFSET 0
  ) r
), wanted AS (
  SELECT n.* FROM nodes n
  WHERE n.sequence > coalesce((
    SELECT t.until_sequence FROM target t
    WHERE EXISTS (SELECT 1 FROM spans s WHERE t.until_sequence BETWEEN s.low AND s.sequence)
  ), 0)
  ORDER BY n.sequence DESC
  LIMIT $4::bigint
)
SELECT $1::text, w.message_id, w.parent_id, w.sequence, w.message::text, w.created_at, w.updated_at, w.engine_record::text
FROM wanted w ORDER BY w.sequence`;
  statements.set(names, statement);
  return statement;
}
