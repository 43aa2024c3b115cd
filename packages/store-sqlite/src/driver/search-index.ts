import type { StoredMessage } from '@ctxgraph/fragments-core';
import { messageSearchText, searchTokens } from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import type { HeadStateRow } from './lookups';

// The search index is built lazily (see the `lazy search index` migration): a save to a chat
// nobody searched indexes nothing; a search first brings the chats it looks at up to date, and
// from then on each save of such a chat indexes its new messages with the write while the index
// is current (`indexInline`). Per chat,
// `search_state` records the chat revision and the highest sequence indexed. Since then, a new
// node has a higher sequence (a node is never inserted below the chat's highest sequence, and
// prune lowers the mark when it deletes the highest) and a node replaced in place has
// `rewritten_at` above the revision. So a catch-up reads only what changed: O(messages written
// since), and nothing at all when the chat's revision has not moved.

/**
 * A chat whose index is behind: its id, owner and current revision, and its marks (the revision
 * and sequence indexed so far; null when the chat was never indexed), read by the same lookup.
 */
export interface StaleChat {
  readonly id: string;
  readonly user_id: string;
  readonly version: number;
  readonly indexed_version: number | null;
  readonly indexed_sequence: number | null;
}

/**
 * The chats of the search's scope whose index is behind their version (one chat, or every chat
 * of the user). A read: run it in the transaction that then searches.
 */
export function staleChats(
  db: SqliteConnection,
  userId: string,
  chatId: string | undefined,
): StaleChat[] {
  return (
    chatId === undefined
      ? db.prepared(staleOfUserSql).all(userId)
      : db.prepared(staleChatSql).all(chatId)
  ) as StaleChat[];
}

function staleChatSql(t: TableNames): string {
  return `SELECT c.id, c.user_id, c.version, s.indexed_version, s.indexed_sequence FROM ${t.chats} c
    LEFT JOIN ${t.searchState} s ON s.chat_id = c.id
   WHERE c.id = ? AND (s.chat_id IS NULL OR s.indexed_version <> c.version)`;
}

function staleOfUserSql(t: TableNames): string {
  return `SELECT c.id, c.user_id, c.version, s.indexed_version, s.indexed_sequence FROM ${t.chats} c
    LEFT JOIN ${t.searchState} s ON s.chat_id = c.id
   WHERE c.user_id = ? AND (s.chat_id IS NULL OR s.indexed_version <> c.version)`;
}

/** Indexes a write's nodes as it writes them: see {@link inlineIndex}. */
export interface InlineIndex {
  /** A node the write inserted (`replaced` false) or replaced in place (its old words go). */
  add(rowid: number | bigint, sequence: number, message: StoredMessage, replaced: boolean): void;
  /** After the write: the marks move to (or start at) the revision it gave the chat. */
  finish(versionAfter: number): void;
}

/**
 * The index of a write's nodes, kept in the write's own transaction, or undefined when the chat's
 * index is not to be kept that way. It is for a chat whose index was current just before the
 * write (its marks, read with the head under the write lock, hold the revision the write found:
 * searched, here or in another process, and indexed by every save since), and for a chat that
 * had no node and was never indexed when its owner searched through this store. Either way the
 * index then lacks exactly what the write writes: each new node's words go in, each replaced
 * node's old words come out and its new ones go in, and the marks move to the write's version,
 * so the next search has nothing to catch up, as an app indexing by hand would have it. A chat
 * nobody searched has no marks and pays nothing; one whose index is behind (written by a version
 * of this store that did not index with the write, say) waits for the next search's catch-up.
 */
export function inlineIndex(
  db: SqliteConnection,
  chatId: string,
  before: HeadStateRow,
): InlineIndex | undefined {
  const current =
    before.indexed_version === null
      ? before.max_sequence === null && db.indexHints.userSearches(before.user_id)
      : before.indexed_version === before.version;
  if (!current) return undefined;
  const scope = `${scopeToken('c', chatId)} ${scopeToken('u', before.user_id)}`;
  const insert = db.prepared(insertSql);
  let highest = before.indexed_sequence ?? 0;
  return {
    add(rowid, sequence, message, replaced) {
      if (sequence > highest) highest = sequence;
      if (replaced) db.prepared(removeSql).run(rowid);
      const tokens = searchTokens(messageSearchText(message));
      if (tokens.length > 0) insert.run(rowid, ` ${tokens.join('  ')} `, scope, tokens.length);
    },
    finish(versionAfter) {
      db.prepared(saveStateSql).run(chatId, versionAfter, highest);
    },
  };
}

/** A node to index: a row of {@link changedSql}, as an array (`raw()`: no object per row). */
type ChangedRow = [rowid: number, sequence: number, payload: string, rewritten: number];

/**
 * Indexes what changed in `chat` since its last catch-up. Run it inside a write transaction
 * (`BEGIN IMMEDIATE`), after reading `chat` there: no other writer can commit in between, so
 * nothing committed is missed and nothing indexed is stale when the same transaction searches.
 */
export function catchUp(db: SqliteConnection, chat: StaleChat): void {
  // The marks come with the chat's row (`staleChats`, in this same transaction).
  const fromSequence = chat.indexed_sequence ?? 0;
  const changed = db
    .prepared(changedSql)
    .raw(true)
    .all({
      chatId: chat.id,
      sequence: fromSequence,
      version: chat.indexed_version ?? -1,
    }) as ChangedRow[];
  const scope = `${scopeToken('c', chat.id)} ${scopeToken('u', chat.user_id)}`;
  const remove = db.prepared(removeSql);
  const insert = db.prepared(insertSql);
  let highest = fromSequence;
  for (const [rowid, sequence, payload, rewritten] of changed) {
    if (sequence > highest) highest = sequence;
    // A replaced node was indexed before (unless it is also new): its old words go first.
    if (rewritten === 1) remove.run(rowid);
    const tokens = searchTokens(messageSearchText(JSON.parse(payload) as StoredMessage));
    if (tokens.length === 0) continue;
    insert.run(rowid, ` ${tokens.join('  ')} `, scope, tokens.length);
  }
  db.prepared(saveStateSql).run(chat.id, chat.version, highest);
}

function stateSql(t: TableNames): string {
  return `SELECT indexed_version, indexed_sequence FROM ${t.searchState} WHERE chat_id = ?`;
}

// Two index ranges: nodes inserted since (sequence) and nodes replaced since (the partial index
// on rewritten_at). `rewritten` says whether the node may have old words in the index.
function changedSql(t: TableNames): string {
  return `SELECT rowid, sequence, payload, 0 AS rewritten FROM ${t.messages}
           WHERE chat_id = @chatId AND sequence > @sequence
            AND (rewritten_at IS NULL OR rewritten_at <= @version)
          UNION ALL
          SELECT rowid, sequence, payload, 1 AS rewritten FROM ${t.messages}
           WHERE chat_id = @chatId AND rewritten_at IS NOT NULL AND rewritten_at > @version`;
}

function removeSql(t: TableNames): string {
  return `DELETE FROM ${t.messageSearch} WHERE rowid = ?`;
}

function insertSql(t: TableNames): string {
  return `INSERT INTO ${t.messageSearch} (rowid, body, scope, words) VALUES (?, ?, ?, ?)`;
}

function saveStateSql(t: TableNames): string {
  return `INSERT INTO ${t.searchState} (chat_id, indexed_version, indexed_sequence) VALUES (?, ?, ?)
          ON CONFLICT (chat_id) DO UPDATE SET indexed_version = excluded.indexed_version,
            indexed_sequence = excluded.indexed_sequence`;
}

/**
 * A scope token: `c` (chat) or `u` (user) and the hex of the id's UTF-8 bytes, so a search ANDs
 * its words with the chat's (or the user's) short doclist instead of scoring every message of
 * every chat that holds a common word.
 */
export function scopeToken(kind: 'c' | 'u', id: string): string {
  return `${kind}${Buffer.from(id, 'utf8').toString('hex')}`;
}

/**
 * Removes from the index the nodes of `chatId` that `condition` (SQL over the messages table
 * aliased `m`, with the given named parameters) selects, before they are deleted, and lowers
 * the chat's indexed sequence to what is left, so a node later inserted at a freed sequence is
 * indexed. Nothing when the chat was never searched. For prune and deleteChat, inside their
 * write transaction.
 */
export function forgetNodes(
  db: SqliteConnection,
  chatId: string,
  condition: string,
  parameters: Record<string, unknown>,
  prefix: string = '',
): void {
  const t = db.tables;
  if (db.prepared(stateSql).get(chatId) === undefined) return;
  db.statement(
    `${prefix} DELETE FROM ${t.messageSearch}
      WHERE rowid IN (SELECT m.rowid FROM ${t.messages} m WHERE m.chat_id = @chatId AND ${condition})`,
  ).run({ ...parameters, chatId });
}

/** After prune deleted nodes: the indexed sequence no higher than the chat's highest node. */
export function lowerIndexedSequence(db: SqliteConnection, chatId: string): void {
  const t = db.tables;
  db.statement(
    `UPDATE ${t.searchState}
        SET indexed_sequence = MIN(indexed_sequence,
          coalesce((SELECT MAX(sequence) FROM ${t.messages} WHERE chat_id = @chatId), 0))
      WHERE chat_id = @chatId`,
  ).run({ chatId });
}
