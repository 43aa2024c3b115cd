import type { StoredMessage } from '@ctxgraph/fragments-core';
import { messageSearchText, searchTokens } from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { PostgresConnection, Queryable } from './connection';
import { integer, text } from './rows';

// The search index is built lazily (see the `lazy search index` migration): a save indexes
// nothing; a search first brings the chats it looks at up to date. Per chat, `search_state`
// holds the chat revision and the highest sequence indexed. Sequences are handed out under the
// chat row's lock and never reused (`last_sequence`), so within a chat they commit in order:
// a snapshot that holds a sequence holds every lower one. A node inserted since the last
// catch-up has a higher sequence; one replaced in place has `rewritten_at` above the revision.
// So a catch-up reads only what changed, and nothing when the chat's revision has not moved.
//
// Under READ COMMITTED the read and the write of a catch-up are two statements, and another
// catch-up (or a writer) may run between them, so every write is guarded: a message's words are
// replaced only by words of a later `stamp` (its `rewritten_at`, 0 when never replaced), the
// marks only ever move up, and words of a node pruned meanwhile are refused by the foreign key
// (the catch-up then reads again). A search only uses words whose stamp is the message's
// current one, so it never finds a message by text it no longer has.

const statements = new WeakMap<TableNames, { stale: string; changed: string; save: string }>();

function indexStatements(names: TableNames): { stale: string; changed: string; save: string } {
  const cached = statements.get(names);
  if (cached !== undefined) return cached;
  // $1 user: the user's chats whose index is behind their version.
  const stale = `SELECT c.chat_id FROM ${names.chats} c
  LEFT JOIN ${names.searchState} s ON s.chat_id = c.chat_id
  WHERE c.user_id = $1::text AND (s.chat_id IS NULL OR s.indexed_version <> c.version)`;
  // $1 chat. One snapshot: the chat's revision and last sequence, and every node inserted or
  // replaced since the marks (two index ranges).
  const changed = `WITH chat AS (
  SELECT c.version, c.last_sequence, coalesce(s.indexed_version, -1) AS from_version,
    coalesce(s.indexed_sequence, 0) AS from_sequence
  FROM ${names.chats} c LEFT JOIN ${names.searchState} s ON s.chat_id = c.chat_id
  WHERE c.chat_id = $1::text
)
SELECT ch.version, ch.last_sequence, m.message_id, m.stamp, m.message
FROM chat ch
LEFT JOIN LATERAL (
  SELECT n.message_id, coalesce(n.rewritten_at, 0) AS stamp, n.message::text AS message
  FROM ${names.messages} n WHERE n.chat_id = $1::text AND n.sequence > ch.from_sequence
  UNION ALL
  SELECT n.message_id, n.rewritten_at, n.message::text FROM ${names.messages} n
  WHERE n.chat_id = $1::text AND n.rewritten_at > ch.from_version AND n.sequence <= ch.from_sequence
) m ON true`;
  // $1 chat, $2 ids, $3 words (space-separated: a word never holds a space), $4 stamps,
  // $5 version, $6 sequence.
  const save = `WITH input AS (
  SELECT t.id, t.words, t.stamp FROM unnest($2::text[], $3::text[], $4::bigint[]) AS t(id, words, stamp)
), written AS (
  INSERT INTO ${names.searchWords} AS w (chat_id, message_id, words, stamp)
  SELECT $1::text, i.id, CASE WHEN i.words = '' THEN '{}'::text[] ELSE string_to_array(i.words, ' ') END, i.stamp
  FROM input i
  ON CONFLICT (chat_id, message_id) DO UPDATE SET words = excluded.words, stamp = excluded.stamp
    WHERE w.stamp < excluded.stamp
  RETURNING 1
)
-- PostgreSQL runs a data-modifying WITH to completion whether or not it is read.
INSERT INTO ${names.searchState} AS s (chat_id, indexed_version, indexed_sequence)
SELECT $1::text, $5::bigint, $6::bigint
WHERE EXISTS (SELECT 1 FROM ${names.chats} c WHERE c.chat_id = $1::text)
ON CONFLICT (chat_id) DO UPDATE SET
  indexed_version = greatest(s.indexed_version, excluded.indexed_version),
  indexed_sequence = greatest(s.indexed_sequence, excluded.indexed_sequence)`;
  const built = { stale, changed, save };
  statements.set(names, built);
  return built;
}

/**
 * Brings the index of every chat of the user up to date (nothing to do: one small read), and
 * returns the chats it caught up.
 */
export async function catchUpScope(
  db: PostgresConnection,
  sql: Queryable,
  userId: string,
): Promise<string[]> {
  const { stale } = indexStatements(db.names);
  const chats = (await db.query(sql, stale, [userId])).map((row) => text(row[0]));
  for (const chatId of chats) await catchUp(db, sql, chatId);
  return chats;
}

// 23503: a node read by the catch-up was pruned (or its chat deleted) before its words were
// written, and the foreign key refused them; reading again no longer sees it. Rare, so the
// write relies on the key rather than probing every message first.
const ATTEMPTS = 4;

/** Indexes what changed in the chat since its last catch-up (see above). */
export async function catchUp(
  db: PostgresConnection,
  sql: Queryable,
  chatId: string,
): Promise<void> {
  const { changed, save } = indexStatements(db.names);
  for (let attempt = 1; ; attempt += 1) {
    const rows = await db.query(sql, changed, [chatId]);
    const first = rows[0];
    if (first === undefined) return; // the chat was deleted meanwhile
    const ids: string[] = [];
    const words: string[] = [];
    const stamps: string[] = [];
    for (const row of rows) {
      if (row[2] === null) continue;
      ids.push(text(row[2]));
      stamps.push(String(integer(row[3])));
      words.push(
        searchTokens(messageSearchText(JSON.parse(text(row[4])) as StoredMessage)).join(' '),
      );
    }
    try {
      await db.query(sql, save, [
        chatId,
        ids,
        words,
        stamps,
        String(integer(first[0])),
        String(integer(first[1])),
      ]);
      return;
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code !== '23503' || attempt >= ATTEMPTS) throw error;
    }
  }
}
