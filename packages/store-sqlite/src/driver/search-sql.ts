import {
  BranchNotFoundError,
  OwnershipError,
  type StoredMessage,
  StoreError,
} from '@ctxgraph/fragments-core';
import {
  branchesHolding,
  type PreparedSearch,
  type SearchMatch,
} from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { branchRow, requireChat } from './lookups';
import { catchUp, scopeToken, staleChats } from './search-index';

interface HitRow {
  readonly chat_id: string;
  readonly id: string;
  readonly sequence: number;
  readonly score: number;
  readonly payload: string;
}

// A query word reaches SQL only as a bound value, and only in this shape (the kit's rule).
const TERM = /^[\p{L}\p{N}]+$/u;

/**
 * Full-text search. First the chats in scope are brought up to date in the index (see
 * `search-index.ts`): when none is behind, the whole search is one read transaction; otherwise
 * it runs in one `BEGIN IMMEDIATE` transaction that catches them up and then searches, so what
 * it finds is exactly what was committed when it took the lock. Then FTS5 finds the messages
 * holding every word and the chat's (or the user's) scope token, the score of the contract
 * (`searchScore`) is computed from each message's stored words, and the page starts after the
 * cursor's sort key. The branches of the page's hits come from one read of their chats' nodes
 * from the oldest hit on (`branchesHolding`), whatever the number of branches.
 */
export function searchMessages(db: SqliteConnection, query: PreparedSearch): SearchMatch[] {
  for (const term of query.terms)
    if (!TERM.test(term))
      throw new StoreError(`searchMessages(input): refused a search word outside the search rule.`);
  return db.run('searchMessages(input)', () => {
    const { chatId } = query;
    // This connection's own write since its last catch-up: the look would find the chat behind.
    const behind = chatId !== undefined && db.indexHints.behind(chatId);
    const fresh = behind
      ? undefined
      : db.read(() => {
          checkScope(db, query);
          return staleChats(db, query.userId, chatId).length === 0 ? search(db, query) : undefined;
        });
    if (fresh !== undefined) {
      if (chatId !== undefined) db.indexHints.current(chatId);
      db.indexHints.userSearched(query.userId);
      return fresh;
    }
    if (db.readonly)
      throw new StoreError(
        `SqliteContextStore at "${db.path}": the search index of these chats is behind their messages, and the database is open read-only, so it cannot be brought up to date. Search once through a writable store (which indexes lazily, on the first search of a chat), then search here.`,
      );
    const found = db.write(() => {
      checkScope(db, query);
      for (const chat of staleChats(db, query.userId, chatId)) {
        catchUp(db, chat);
        db.indexHints.current(chat.id);
      }
      return search(db, query);
    });
    if (chatId !== undefined) db.indexHints.current(chatId);
    db.indexHints.userSearched(query.userId);
    return found;
  });
}

/** Ownership first, then the branch, as the contract orders them. */
function checkScope(db: SqliteConnection, query: PreparedSearch): void {
  if (query.chatId === undefined) return;
  const chat = requireChat(db, query.chatId);
  if (chat.user_id !== query.userId) throw new OwnershipError(query.chatId, query.userId);
  if (query.branch !== undefined && branchRow(db, query.chatId, query.branch) === undefined)
    throw new BranchNotFoundError(query.chatId, query.branch);
}

function search(db: SqliteConnection, query: PreparedSearch): SearchMatch[] {
  const t = db.tables;
  // Every word in the body column (as a quoted string, so FTS5 reads none as an operator), and
  // the chat's (or the user's) scope token.
  const scope =
    query.chatId === undefined ? scopeToken('u', query.userId) : scopeToken('c', query.chatId);
  // With `prefix`, the last word is an FTS5 prefix query (`"fib"*`); still a quoted string.
  const last = query.terms.length - 1;
  const match = [
    ...query.terms.map((term, index) =>
      query.prefix && index === last ? `body : "${term}"*` : `body : "${term}"`,
    ),
    `scope : "${scope}"`,
  ].join(' AND ');
  // The contract's score, term by term in the query's order: f occurrences of the word (the
  // body is ` w1  w2 `, so each occurrence of ` word ` is one word) among n words.
  const parameters: Record<string, unknown> = {
    match,
    userId: query.userId,
    chatId: query.chatId ?? null,
    limit: query.limit + 1,
    afterScore: query.after?.score ?? null,
    afterChat: query.after?.chatId ?? null,
    afterSequence: query.after?.sequence ?? null,
  };
  // A prefix counts every word it starts: each occurrence of ` fib` (a space, then the prefix)
  // is the start of one word, since words hold no spaces.
  const score = query.terms
    .map((term, index) => {
      parameters[`t${index}`] = query.prefix && index === last ? ` ${term}` : ` ${term} `;
      const f = `((length(s.body) - length(replace(s.body, @t${index}, ''))) / length(@t${index}))`;
      return `((${f} * 2.2) / ((${f} + 0.3) + (0.028125 * s.words)))`;
    })
    .join(' + ');
  // The branch's chain only for a search of one branch: SQLite builds the (empty) chain even
  // when `@branch` is null, which cost a chat or user search several times its FTS5 query.
  const chain =
    query.branch === undefined
      ? ''
      : `chain (id, parent_id) AS (
         SELECT m.id, m.parent_id FROM ${t.branches} b
           JOIN ${t.messages} m ON m.chat_id = b.chat_id AND m.id = b.head_message_id
          WHERE b.chat_id = @chatId AND b.name = @branch
         UNION ALL
         SELECT m.id, m.parent_id FROM chain JOIN ${t.messages} m ON m.chat_id = @chatId AND m.id = chain.parent_id
       ),`;
  if (query.branch !== undefined) parameters.branch = query.branch;
  const rows = db
    .statement(
      `WITH RECURSIVE ${chain} found AS (
         SELECT m.chat_id, m.id, m.sequence, (${score}) AS score, m.payload
           FROM ${t.messageSearch} s
           JOIN ${t.messages} m ON m.rowid = s.rowid
           JOIN ${t.chats} c ON c.id = m.chat_id
          WHERE ${t.messageSearch} MATCH @match AND c.user_id = @userId
            AND (@chatId IS NULL OR m.chat_id = @chatId)
            ${query.branch === undefined ? '' : 'AND m.id IN (SELECT id FROM chain)'}
       )
       SELECT chat_id, id, sequence, score, payload FROM found
        WHERE @afterScore IS NULL OR score < @afterScore
           OR (score = @afterScore AND (chat_id > @afterChat
               OR (chat_id = @afterChat AND sequence > @afterSequence)))
        ORDER BY score DESC, chat_id, sequence
        LIMIT @limit`,
    )
    .all(parameters) as HitRow[];
  const lowest = new Map<string, number>();
  for (const row of rows)
    lowest.set(row.chat_id, Math.min(lowest.get(row.chat_id) ?? row.sequence, row.sequence));
  const holders = new Map<string, Map<string, string[]>>();
  for (const [chatId, sequence] of lowest) {
    const nodes = db
      .statement(
        `SELECT id, parent_id AS parentId FROM ${t.messages} WHERE chat_id = ? AND sequence >= ?`,
      )
      .all(chatId, sequence) as { id: string; parentId: string | null }[];
    const heads = db
      .statement(
        `SELECT name, head_message_id AS headId FROM ${t.branches} WHERE chat_id = ? ORDER BY created_at, rowid`,
      )
      .all(chatId) as { name: string; headId: string | null }[];
    holders.set(
      chatId,
      branchesHolding(
        nodes,
        heads,
        rows.filter((row) => row.chat_id === chatId).map((row) => row.id),
      ),
    );
  }
  return rows.map(
    (row): SearchMatch => ({
      chatId: row.chat_id,
      messageId: row.id,
      sequence: row.sequence,
      score: row.score,
      message: JSON.parse(row.payload) as StoredMessage,
      branches: holders.get(row.chat_id)?.get(row.id) ?? [],
    }),
  );
}
