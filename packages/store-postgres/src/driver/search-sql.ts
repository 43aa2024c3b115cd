import {
  BranchNotFoundError,
  ChatNotFoundError,
  OwnershipError,
  type StoredMessage,
  StoreError,
} from '@ctxgraph/fragments-core';
import {
  branchesHolding,
  type PreparedSearch,
  type SearchMatch,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import { nextSpan } from './chain-spans';
import type { PostgresConnection, Queryable } from './connection';
import { integer, optionalText, type Row, text } from './rows';
import { catchUp, catchUpScope } from './search-index';

// A query word reaches SQL only as a bound value, and only in this shape (the kit's rule).
const TERM = /^[\p{L}\p{N}]+$/u;

const statements = new WeakMap<TableNames, Map<number, string>>();

/**
 * The search statement for `count` query words. $1 user, $2 chat (or null), $3 branch (or
 * null), $4 the words, $5 rows wanted, $6-$8 the cursor's score, chat and sequence (or nulls).
 * The GIN index finds the messages whose words hold every query word; only words whose stamp is
 * the message's current `rewritten_at` count. The score is the contract's (`searchScore`), term
 * by term in the query's order, in float8. With a branch, `spans` is its chain as sequence ranges
 * (one row per run) and a match must fall in one.
 */
function searchStatement(names: TableNames, count: number, prefix: boolean): string {
  let byCount = statements.get(names);
  if (byCount === undefined) {
    byCount = new Map();
    statements.set(names, byCount);
  }
  // Statements are cached by word count, negative for a prefix search.
  const key = prefix ? -count : count;
  const cached = byCount.get(key);
  if (cached !== undefined) return cached;
  // With `prefix`, the last word counts the message's words that start with it (`starts_with`,
  // character by character, no pattern syntax, so `%` or `_` in a word mean nothing); the GIN
  // index narrows by the whole words before it (none for a one-word query: then the chats in
  // scope are read through the primary key, see the README's figures).
  const stem = `($4::text[])[${count}]`;
  const terms = Array.from({ length: count }, (_, index) => {
    const f =
      prefix && index === count - 1
        ? 'p.n'
        : `cardinality(array_positions(w.words, ($4::text[])[${index + 1}]))::float8`;
    return `((${f} * 2.2::float8) / ((${f} + 0.3::float8) + (0.028125::float8 * cardinality(w.words)::float8)))`;
  });
  const statement = `WITH RECURSIVE spans AS (
  SELECT h.parent_id, h.sequence, coalesce(h.run_start, h.sequence) AS low
  FROM ${names.branches} b
  CROSS JOIN LATERAL (
    SELECT m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = b.chat_id AND m.message_id = b.head_message_id LIMIT 1
  ) h
  WHERE $3::text IS NOT NULL AND b.chat_id = $2::text AND b.name = $3::text
  UNION ALL
  SELECT q.parent_id, q.sequence, q.low FROM spans s ${nextSpan(names, '$2::text')}
), found AS (
  SELECT m.chat_id, m.message_id, m.sequence, m.message, (${terms.join(' + ')}) AS score
  FROM ${names.searchWords} w${
    // The words the prefix starts, counted once per message: the filter and the score.
    prefix
      ? `
  CROSS JOIN LATERAL (
    SELECT count(*)::float8 AS n FROM unnest(w.words) AS x(word) WHERE starts_with(x.word, ${stem})
  ) p`
      : ''
  }
  JOIN ${names.messages} m ON m.chat_id = w.chat_id AND m.message_id = w.message_id
    AND coalesce(m.rewritten_at, 0) = w.stamp
  WHERE ${prefix ? `w.words @> ($4::text[])[1:${count - 1}] AND p.n > 0` : 'w.words @> $4::text[]'}
    AND w.chat_id IN (
      SELECT c.chat_id FROM ${names.chats} c
      WHERE c.user_id = $1::text AND ($2::text IS NULL OR c.chat_id = $2::text)
    )
    AND ($3::text IS NULL OR EXISTS (
      SELECT 1 FROM spans s WHERE m.chat_id = $2::text AND m.sequence BETWEEN s.low AND s.sequence
    ))
)
SELECT chat_id, message_id, sequence, score, message::text FROM found
WHERE $6::float8 IS NULL OR score < $6::float8
  OR (score = $6::float8 AND (chat_id COLLATE "C" > $7::text COLLATE "C"
    OR (chat_id = $7::text AND sequence > $8::bigint)))
ORDER BY score DESC, chat_id COLLATE "C", sequence
LIMIT $5::bigint`;
  byCount.set(key, statement);
  return statement;
}

/**
 * Ownership and existence first, as the contract orders them, and in the same round trip
 * whether the chat's index is behind its revision. For a search of every chat of the user, the
 * chats whose index is behind are found by `catchUpScope`.
 */
async function checkScope(
  db: PostgresConnection,
  sql: Queryable,
  query: PreparedSearch,
): Promise<void> {
  if (query.chatId === undefined) {
    for (const chatId of await catchUpScope(db, sql, query.userId)) db.indexHints.current(chatId);
    return;
  }
  const rows = await db.query(
    sql,
    `SELECT c.user_id, b.name, (s.chat_id IS NULL OR s.indexed_version <> c.version) AS stale
     FROM ${db.names.chats} c
     LEFT JOIN ${db.names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
     LEFT JOIN ${db.names.searchState} s ON s.chat_id = c.chat_id
     WHERE c.chat_id = $1`,
    [query.chatId, query.branch ?? ''],
  );
  const row = rows[0];
  if (row === undefined) throw new ChatNotFoundError(query.chatId);
  if (text(row[0]) !== query.userId) throw new OwnershipError(query.chatId, query.userId);
  if (query.branch !== undefined && row[1] === null)
    throw new BranchNotFoundError(query.chatId, query.branch);
  if (row[2] === true) await catchUp(db, sql, query.chatId);
  db.indexHints.current(query.chatId);
}

/**
 * Full-text search: the chats in scope are brought up to date in the index first (see
 * `search-index.ts`; for one chat, the ownership check says whether it is behind, so a current
 * index costs no extra round trip), then one statement finds, scores and
 * pages the matches, and one more reads, for the chats of the page's hits, their nodes from the
 * oldest hit on and their branch heads, which `branchesHolding` turns into each hit's branches
 * in one pass whatever the number of branches. No transaction: a search is a read, and every
 * message committed before the call is indexed by the catch-up before the search statement runs.
 */
export function searchMessages(
  db: PostgresConnection,
  query: PreparedSearch,
): Promise<SearchMatch[]> {
  for (const term of query.terms)
    if (!TERM.test(term))
      throw new StoreError('searchMessages(input): refused a search word outside the search rule.');
  return db.run(async (sql) => {
    await checkScope(db, sql, query);
    // The scope is the user's own: the chats they open through this store from now on are
    // indexed with their saves.
    db.indexHints.userSearched(query.userId);
    const rows = await db.query(sql, searchStatement(db.names, query.terms.length, query.prefix), [
      query.userId,
      query.chatId ?? null,
      query.branch ?? null,
      query.terms,
      String(query.limit + 1),
      query.after === undefined ? null : String(query.after.score),
      query.after?.chatId ?? null,
      query.after === undefined ? null : String(query.after.sequence),
    ]);
    if (rows.length === 0) return [];
    const lowest = new Map<string, number>();
    for (const row of rows) {
      const chatId = text(row[0]);
      const sequence = integer(row[2]);
      lowest.set(chatId, Math.min(lowest.get(chatId) ?? sequence, sequence));
    }
    const chatIds = [...lowest.keys()];
    const graph = await db.query(
      sql,
      `SELECT 0 AS kind, m.chat_id, m.message_id, m.parent_id, 0::bigint AS created_at, 0::bigint AS ordinal
       FROM unnest($1::text[], $2::bigint[]) AS w(chat_id, lowest)
       JOIN ${db.names.messages} m ON m.chat_id = w.chat_id AND m.sequence >= w.lowest
       UNION ALL
       SELECT 1, b.chat_id, b.name, b.head_message_id, b.created_at, b.ordinal
       FROM ${db.names.branches} b WHERE b.chat_id = ANY ($1::text[])
       ORDER BY 1, 2, 5, 6`,
      [chatIds, [...lowest.values()].map(String)],
    );
    const parts = new Map<
      string,
      {
        nodes: { id: string; parentId: string | null }[];
        heads: { name: string; headId: string | null }[];
        ids: string[];
      }
    >();
    for (const chatId of chatIds) parts.set(chatId, { nodes: [], heads: [], ids: [] });
    for (const row of rows) parts.get(text(row[0]))?.ids.push(text(row[1]));
    for (const row of graph) {
      const part = parts.get(text(row[1]));
      if (part === undefined) continue;
      if (integer(row[0]) === 0)
        part.nodes.push({ id: text(row[2]), parentId: optionalText(row[3]) });
      else part.heads.push({ name: text(row[2]), headId: optionalText(row[3]) });
    }
    const holders = new Map<string, Map<string, string[]>>();
    for (const [chatId, part] of parts)
      holders.set(chatId, branchesHolding(part.nodes, part.heads, part.ids));
    return rows.map((row: Row): SearchMatch => {
      const chatId = text(row[0]);
      const messageId = text(row[1]);
      return {
        chatId,
        messageId,
        sequence: integer(row[2]),
        score: Number(row[3]),
        message: JSON.parse(text(row[4])) as StoredMessage,
        branches: holders.get(chatId)?.get(messageId) ?? [],
      };
    });
  });
}
