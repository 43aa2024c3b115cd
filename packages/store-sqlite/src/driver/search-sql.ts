import { BranchNotFoundError, OwnershipError, type StoredMessage } from '@ctxgraph/fragments-core';
import type { PreparedSearch, SearchMatch } from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { branchRow, requireChat } from './lookups';

interface HitRow {
  readonly chat_id: string;
  readonly id: string;
  readonly sequence: number;
  readonly score: number;
  readonly payload: string;
}

/**
 * Full-text search with the FTS5 index: every word as a quoted phrase (so FTS5 reads none of
 * them as an operator) in the text column, ANDed with the scope token of the chat or the user
 * (so only their messages are walked), ranked by BM25, joined to the messages of the user's chats (of one chat,
 * or of one branch's chain: a recursive walk from its head). Then, for the page's hits, each
 * branch of their chats walked back only as far as the oldest hit, to say which holds which. One
 * read transaction, so all of it sees one snapshot.
 */
export function searchMessages(db: SqliteConnection, query: PreparedSearch): SearchMatch[] {
  return db.run('searchMessages(input)', () =>
    db.read(() => {
      const t = db.tables;
      if (query.chatId !== undefined) {
        const chat = requireChat(db, query.chatId);
        if (chat.user_id !== query.userId) throw new OwnershipError(query.chatId, query.userId);
        if (query.branch !== undefined && branchRow(db, query.chatId, query.branch) === undefined)
          throw new BranchNotFoundError(query.chatId, query.branch);
      }
      // Every word in the text column, and the chat's (or the user's) scope token.
      const scope =
        query.chatId === undefined ? scopeToken('u', query.userId) : scopeToken('c', query.chatId);
      const match = [...query.terms.map((term) => `body : "${term}"`), `scope : "${scope}"`].join(
        ' AND ',
      );
      const rows = db
        .statement(
          `WITH RECURSIVE chain (id, parent_id) AS (
             SELECT m.id, m.parent_id FROM ${t.branches} b
               JOIN ${t.messages} m ON m.chat_id = b.chat_id AND m.id = b.head_message_id
              WHERE @branch IS NOT NULL AND b.chat_id = @chatId AND b.name = @branch
             UNION ALL
             SELECT m.id, m.parent_id FROM chain JOIN ${t.messages} m ON m.chat_id = @chatId AND m.id = chain.parent_id
           )
           SELECT m.chat_id, m.id, m.sequence, -bm25(${t.messageSearch}, 1.0, 0.0) AS score, m.payload
             FROM ${t.messageSearch} s
             JOIN ${t.messages} m ON m.rowid = s.rowid
             JOIN ${t.chats} c ON c.id = m.chat_id
            WHERE ${t.messageSearch} MATCH @match AND c.user_id = @userId
              AND (@chatId IS NULL OR m.chat_id = @chatId)
              AND (@branch IS NULL OR m.id IN (SELECT id FROM chain))
            ORDER BY score DESC, m.chat_id, m.sequence
            LIMIT @limit OFFSET @offset`,
        )
        .all({
          match,
          userId: query.userId,
          chatId: query.chatId ?? null,
          branch: query.branch ?? null,
          limit: query.limit + 1,
          offset: query.offset,
        }) as HitRow[];
      const lowest = new Map<string, number>();
      for (const row of rows)
        lowest.set(row.chat_id, Math.min(lowest.get(row.chat_id) ?? row.sequence, row.sequence));
      const holders = new Map<string, Map<string, Set<string>>>();
      for (const [chatId, sequence] of lowest)
        holders.set(chatId, branchChains(db, chatId, sequence));
      return rows.map((row): SearchMatch => {
        const branches: string[] = [];
        for (const [name, ids] of holders.get(row.chat_id) ?? [])
          if (ids.has(row.id)) branches.push(name);
        return {
          chatId: row.chat_id,
          messageId: row.id,
          sequence: row.sequence,
          score: row.score,
          message: JSON.parse(row.payload) as StoredMessage,
          branches,
        };
      });
    }),
  );
}

/**
 * A scope token as the `message search` step writes it: `c` (chat) or `u` (user) and the hex of
 * the id's UTF-8 bytes, which is what SQLite's `hex()` gives for text; the tokenizer folds case.
 */
function scopeToken(kind: 'c' | 'u', id: string): string {
  return `${kind}${Buffer.from(id, 'utf8').toString('hex')}`;
}

/** Each branch of the chat (oldest first) with the ids of its chain down to `lowest` sequence. */
function branchChains(
  db: SqliteConnection,
  chatId: string,
  lowest: number,
): Map<string, Set<string>> {
  const t = db.tables;
  const rows = db
    .statement(
      `WITH RECURSIVE chain (branch, ordinal, id, parent_id) AS (
         SELECT b.name, b.rowid, m.id, m.parent_id FROM ${t.branches} b
           JOIN ${t.messages} m ON m.chat_id = b.chat_id AND m.id = b.head_message_id
          WHERE b.chat_id = @chatId AND m.sequence >= @lowest
         UNION ALL
         SELECT chain.branch, chain.ordinal, m.id, m.parent_id
           FROM chain JOIN ${t.messages} m ON m.chat_id = @chatId AND m.id = chain.parent_id
          WHERE m.sequence >= @lowest
       )
       SELECT chain.branch, chain.id FROM chain
         JOIN ${t.branches} b ON b.chat_id = @chatId AND b.name = chain.branch
        ORDER BY b.created_at, b.rowid`,
    )
    .all({ chatId, lowest }) as { branch: string; id: string }[];
  const chains = new Map<string, Set<string>>();
  for (const row of rows) {
    let ids = chains.get(row.branch);
    if (ids === undefined) {
      ids = new Set();
      chains.set(row.branch, ids);
    }
    ids.add(row.id);
  }
  return chains;
}
