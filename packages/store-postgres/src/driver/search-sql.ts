import {
  BranchNotFoundError,
  ChatNotFoundError,
  OwnershipError,
  type StoredMessage,
} from '@ctxgraph/fragments-core';
import type { PreparedSearch, SearchMatch } from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import { nextSpan } from './chain-spans';
import type { PostgresConnection, Queryable } from './connection';
import { integer, type Row, text } from './rows';

const statements = new WeakMap<TableNames, { search: string; branches: string }>();

function searchStatements(names: TableNames): { search: string; branches: string } {
  const cached = statements.get(names);
  if (cached !== undefined) return cached;
  // $1 user, $2 chat (or null), $3 branch (or null), $4 the words, $5 rows wanted, $6 offset.
  // With a branch, `spans` is its chain as sequence ranges (one row per run) and a match must
  // fall in one; the GIN index finds the matches, ownership keeps the user's chats only.
  const search = `WITH RECURSIVE query AS (
  SELECT plainto_tsquery(${names.searchConfig}, $4::text) AS words
), spans AS (
  SELECT h.parent_id, h.sequence, coalesce(h.run_start, h.sequence) AS low
  FROM ${names.branches} b
  CROSS JOIN LATERAL (
    SELECT m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = b.chat_id AND m.message_id = b.head_message_id LIMIT 1
  ) h
  WHERE $3::text IS NOT NULL AND b.chat_id = $2::text AND b.name = $3::text
  UNION ALL
  SELECT q.parent_id, q.sequence, q.low FROM spans s ${nextSpan(names, '$2::text')}
), matches AS (
  SELECT m.chat_id, m.message_id, m.sequence, m.message,
    ts_rank(m.search_vector, query.words)::float8 AS score
  FROM ${names.messages} m CROSS JOIN query
  WHERE m.search_vector @@ query.words
    AND m.chat_id IN (
      SELECT c.chat_id FROM ${names.chats} c
      WHERE c.user_id = $1::text AND ($2::text IS NULL OR c.chat_id = $2::text)
    )
    AND ($3::text IS NULL OR EXISTS (
      SELECT 1 FROM spans s WHERE m.chat_id = $2::text AND m.sequence BETWEEN s.low AND s.sequence
    ))
)
SELECT chat_id, message_id, sequence, score, message::text FROM matches
ORDER BY score DESC, chat_id COLLATE "C", sequence
LIMIT $5::bigint OFFSET $6::bigint`;
  // $1 chat ids, $2 the smallest hit sequence of each. Every branch of those chats, walked back
  // run by run only as far as that sequence: its spans say which hits it holds.
  const branches = `WITH RECURSIVE wanted AS (
  SELECT w.chat_id, w.lowest FROM unnest($1::text[], $2::bigint[]) AS w(chat_id, lowest)
), spans AS (
  SELECT b.chat_id, b.name, b.created_at, b.ordinal, w.lowest, h.parent_id, h.sequence,
    coalesce(h.run_start, h.sequence) AS low
  FROM wanted w
  JOIN ${names.branches} b ON b.chat_id = w.chat_id
  CROSS JOIN LATERAL (
    SELECT m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = b.chat_id AND m.message_id = b.head_message_id LIMIT 1
  ) h
  UNION ALL
  SELECT s.chat_id, s.name, s.created_at, s.ordinal, s.lowest, q.parent_id, q.sequence, q.low
  FROM spans s ${nextSpan(names, 's.chat_id')}
  WHERE s.low > s.lowest
)
SELECT chat_id, name, low, sequence FROM spans ORDER BY chat_id, created_at, ordinal`;
  const built = { search, branches };
  statements.set(names, built);
  return built;
}

/** Ownership and existence first, as the contract orders them. */
async function checkScope(
  db: PostgresConnection,
  sql: Queryable,
  query: PreparedSearch,
): Promise<void> {
  if (query.chatId === undefined) return;
  const rows = await db.query(
    sql,
    `SELECT c.user_id, b.name FROM ${db.names.chats} c
     LEFT JOIN ${db.names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
     WHERE c.chat_id = $1`,
    [query.chatId, query.branch ?? ''],
  );
  const row = rows[0];
  if (row === undefined) throw new ChatNotFoundError(query.chatId);
  if (text(row[0]) !== query.userId) throw new OwnershipError(query.chatId, query.userId);
  if (query.branch !== undefined && row[1] === null)
    throw new BranchNotFoundError(query.chatId, query.branch);
}

/**
 * Full-text search with the GIN index over `search_vector`, ranked by `ts_rank`, then the
 * branches of the page's hits. Two statements (three with a chat scope), no transaction: a
 * search is a read.
 */
export function searchMessages(
  db: PostgresConnection,
  query: PreparedSearch,
): Promise<SearchMatch[]> {
  return db.run(async (sql) => {
    await checkScope(db, sql, query);
    const { search, branches } = searchStatements(db.names);
    const rows = await db.query(sql, search, [
      query.userId,
      query.chatId ?? null,
      query.branch ?? null,
      query.terms.join(' '),
      String(query.limit + 1),
      String(query.offset),
    ]);
    if (rows.length === 0) return [];
    const lowest = new Map<string, number>();
    for (const row of rows) {
      const chatId = text(row[0]);
      const sequence = integer(row[2]);
      lowest.set(chatId, Math.min(lowest.get(chatId) ?? sequence, sequence));
    }
    const spans = await db.query(sql, branches, [
      [...lowest.keys()],
      [...lowest.values()].map(String),
    ]);
    return rows.map((row: Row): SearchMatch => {
      const chatId = text(row[0]);
      const sequence = integer(row[2]);
      const names: string[] = [];
      for (const span of spans) {
        if (span[0] !== chatId) continue;
        const name = text(span[1]);
        if (!names.includes(name) && sequence >= integer(span[2]) && sequence <= integer(span[3]))
          names.push(name);
      }
      return {
        chatId,
        messageId: text(row[1]),
        sequence,
        score: Number(row[3]),
        message: JSON.parse(text(row[4])) as StoredMessage,
        branches: names,
      };
    });
  });
}
