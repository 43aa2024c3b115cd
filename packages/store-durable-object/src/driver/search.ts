import {
  BranchNotFoundError,
  OwnershipError,
  type StoredMessage,
  StoreError,
} from '@ctxgraph/fragments-core';
import {
  branchesHolding,
  compareSearchPositions,
  messageSearchText,
  type PreparedSearch,
  type SearchMatch,
  searchScore,
  searchTokens,
} from '@ctxgraph/fragments-core/store-kit';
import type { Lookups } from './lookups';
import type { SqlStorageLike, SqlValue } from './sql-storage';

// Full-text search over the object's own SQLite (FTS5 is built into Durable Object SQLite).
//
// The index is lazy, as in the SQLite store: a save writes nothing to it, so an app that never
// searches pays nothing per turn. A search brings the chats of its scope up to date first, in the
// same `transactionSync` as the search itself (the object runs one call at a time, so nothing is
// written in between): per chat, `ctxgraph_search_state` holds the revision and the highest
// sequence indexed. When the chat's revision has not moved, nothing is read; when only new nodes
// came (the chat's `rewritten_at` is not above the indexed revision), the nodes above the indexed
// sequence are indexed; when a node was replaced in place since, the chat is indexed anew (the
// store keeps no per-node rewrite mark, and the commit path stays as it is).
//
// Ranking is the contract's `searchScore`, computed from each match's stored words by the kit's
// own function, so the numbers are the other stores' to the bit.

/** A query word reaches FTS5 only in this shape (the kit's rule), and always quoted. */
const TERM = /^[\p{L}\p{N}]+$/u;

interface ChatScopeRow {
  readonly id: string;
  readonly user_id: string;
  readonly revision: number;
  readonly rewritten_at: number;
  readonly indexed_revision: number | null;
  readonly indexed_sequence: number | null;
}

/** Deletes a chat's index rows and marks, before its nodes go (inside `deleteChat`'s write). */
export function forgetSearchIndex(sql: SqlStorageLike, chatId: string): void {
  const marked = sql
    .exec('SELECT 1 AS marked FROM ctxgraph_search_state WHERE chat_id = ?', chatId)
    .toArray();
  if (marked.length === 0) return;
  sql.exec(
    'DELETE FROM ctxgraph_message_search WHERE rowid IN (SELECT rowid FROM ctxgraph_nodes WHERE chat_id = ?)',
    chatId,
  );
  sql.exec('DELETE FROM ctxgraph_search_state WHERE chat_id = ?', chatId);
}

/** The driver's `searchMessages`: catch up the chats in scope, then search, in one write. */
export function searchMessages(db: Lookups, query: PreparedSearch): SearchMatch[] {
  for (const term of query.terms)
    if (!TERM.test(term))
      throw new StoreError('searchMessages(input): refused a search word outside the search rule.');
  const { storage, sql } = db;
  return storage.transactionSync(() => {
    if (query.chatId !== undefined) {
      const chat = db.requireChat(query.chatId);
      if (chat.user_id !== query.userId) throw new OwnershipError(query.chatId, query.userId);
      if (query.branch !== undefined && db.findBranch(query.chatId, query.branch) === undefined)
        throw new BranchNotFoundError(query.chatId, query.branch);
    }
    for (const chat of chatsInScope(db, query)) catchUp(sql, chat);
    return search(db, query);
  });
}

function chatsInScope(db: Lookups, query: PreparedSearch): ChatScopeRow[] {
  const select = `SELECT c.id, c.user_id, c.revision, c.rewritten_at, s.indexed_revision, s.indexed_sequence
      FROM ctxgraph_chats c LEFT JOIN ctxgraph_search_state s ON s.chat_id = c.id`;
  return query.chatId === undefined
    ? db.rows<ChatScopeRow>(`${select} WHERE c.user_id = ?`, query.userId)
    : db.rows<ChatScopeRow>(`${select} WHERE c.id = ?`, query.chatId);
}

function catchUp(sql: SqlStorageLike, chat: ChatScopeRow): void {
  if (chat.indexed_revision === chat.revision) return;
  let from = chat.indexed_sequence ?? 0;
  if (chat.indexed_revision !== null && chat.rewritten_at > chat.indexed_revision) {
    // A node was replaced in place since the last catch-up: index the chat anew.
    sql.exec(
      'DELETE FROM ctxgraph_message_search WHERE rowid IN (SELECT rowid FROM ctxgraph_nodes WHERE chat_id = ?)',
      chat.id,
    );
    from = 0;
  }
  let highest = from;
  for (const [rowid, sequence, message] of sql
    .exec(
      'SELECT rowid, sequence, message FROM ctxgraph_nodes WHERE chat_id = ? AND sequence > ? ORDER BY sequence',
      chat.id,
      from,
    )
    .raw()) {
    highest = Math.max(highest, Number(sequence));
    const tokens = searchTokens(messageSearchText(JSON.parse(String(message)) as StoredMessage));
    if (tokens.length === 0) continue;
    sql.exec(
      'INSERT INTO ctxgraph_message_search (rowid, body, words) VALUES (?, ?, ?)',
      rowid as SqlValue,
      ` ${tokens.join('  ')} `,
      tokens.length,
    );
  }
  sql.exec(
    `INSERT INTO ctxgraph_search_state (chat_id, indexed_revision, indexed_sequence) VALUES (?, ?, ?)
     ON CONFLICT (chat_id) DO UPDATE SET indexed_revision = excluded.indexed_revision,
       indexed_sequence = excluded.indexed_sequence`,
    chat.id,
    chat.revision,
    highest,
  );
}

interface Candidate {
  readonly chatId: string;
  readonly id: string;
  readonly sequence: number;
  readonly score: number;
  readonly rowid: number;
}

function search(db: Lookups, query: PreparedSearch): SearchMatch[] {
  const { sql } = db;
  const last = query.terms.length - 1;
  // Every word quoted, so FTS5 reads none as an operator; with `prefix`, the last is `"fib"*`.
  const match = query.terms
    .map((term, index) => (query.prefix && index === last ? `"${term}"*` : `"${term}"`))
    .join(' AND ');
  const chain =
    query.branch === undefined || query.chatId === undefined
      ? undefined
      : chainIds(sql, query.chatId, query.branch);
  const candidates: Candidate[] = [];
  for (const [rowid, body, chatId, id, sequence] of sql
    .exec(
      `SELECT s.rowid, s.body, m.chat_id, m.id, m.sequence
         FROM ctxgraph_message_search s
         JOIN ctxgraph_nodes m ON m.rowid = s.rowid
         JOIN ctxgraph_chats c ON c.id = m.chat_id
        WHERE ctxgraph_message_search MATCH ? AND c.user_id = ?
          AND (? IS NULL OR m.chat_id = ?)`,
      `body : (${match})`,
      query.userId,
      query.chatId ?? null,
      query.chatId ?? null,
    )
    .raw()) {
    if (chain !== undefined && !chain.has(String(id))) continue;
    const tokens = String(body)
      .split(' ')
      .filter((word) => word !== '');
    const score = searchScore(tokens, query.terms, query.prefix);
    if (score === undefined) continue;
    const candidate: Candidate = {
      chatId: String(chatId),
      id: String(id),
      sequence: Number(sequence),
      score,
      rowid: Number(rowid),
    };
    if (query.after !== undefined && compareSearchPositions(candidate, query.after) <= 0) continue;
    candidates.push(candidate);
  }
  candidates.sort(compareSearchPositions);
  const page = candidates.slice(0, query.limit + 1);
  const holders = new Map<string, Map<string, string[]>>();
  for (const chatId of new Set(page.map((hit) => hit.chatId))) {
    const hits = page.filter((hit) => hit.chatId === chatId);
    const lowest = Math.min(...hits.map((hit) => hit.sequence));
    const nodes = db
      .rows<{ id: string; parent_id: string | null }>(
        'SELECT id, parent_id FROM ctxgraph_nodes WHERE chat_id = ? AND sequence >= ?',
        chatId,
        lowest,
      )
      .map((node) => ({ id: node.id, parentId: node.parent_id }));
    const heads = db
      .rows<{ name: string; head_message_id: string | null }>(
        'SELECT name, head_message_id FROM ctxgraph_branches WHERE chat_id = ? ORDER BY rowid',
        chatId,
      )
      .map((branch) => ({ name: branch.name, headId: branch.head_message_id }));
    holders.set(
      chatId,
      branchesHolding(
        nodes,
        heads,
        hits.map((hit) => hit.id),
      ),
    );
  }
  return page.map((hit): SearchMatch => {
    const row = db.rows<{ message: string }>(
      'SELECT message FROM ctxgraph_nodes WHERE rowid = ?',
      hit.rowid,
    )[0];
    if (row === undefined)
      throw new StoreError(`searchMessages(input): node "${hit.id}" vanished during the search.`);
    return {
      chatId: hit.chatId,
      messageId: hit.id,
      sequence: hit.sequence,
      score: hit.score,
      message: JSON.parse(row.message) as StoredMessage,
      branches: holders.get(hit.chatId)?.get(hit.id) ?? [],
    };
  });
}

/** The ids on a branch's chain (its head and every ancestor); `BranchNotFoundError` checked before. */
function chainIds(sql: SqlStorageLike, chatId: string, branch: string): Set<string> {
  const ids = new Set<string>();
  for (const [id] of sql
    .exec(
      `WITH RECURSIVE chain (id, parent_id) AS (
         SELECT m.id, m.parent_id FROM ctxgraph_branches b
           JOIN ctxgraph_nodes m ON m.chat_id = b.chat_id AND m.id = b.head_message_id
          WHERE b.chat_id = ? AND b.name = ?
         UNION ALL
         SELECT m.id, m.parent_id FROM chain JOIN ctxgraph_nodes m ON m.chat_id = ? AND m.id = chain.parent_id
       )
       SELECT id FROM chain`,
      chatId,
      branch,
      chatId,
    )
    .raw())
    ids.add(String(id));
  return ids;
}
