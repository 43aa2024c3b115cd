import {
  BranchNotFoundError,
  type BranchRecord,
  ChatNotFoundError,
  StoreError,
} from '@ctxgraph/fragments-core';
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import {
  type BranchRow,
  branchRecord,
  type ChatRow,
  type CheckpointRow,
  MESSAGE_COLUMNS,
  type MessageRow,
} from './rows';

// The row lookups several use cases share, each one prepared statement.

/** The chat's row, or undefined. */
export function chatRow(db: SqliteConnection, chatId: string): ChatRow | undefined {
  return db.statement(`SELECT * FROM ${db.tables.chats} WHERE id = ?`).get(chatId) as
    | ChatRow
    | undefined;
}

/** The chat's row; `ChatNotFoundError` when there is none. */
export function requireChat(db: SqliteConnection, chatId: string): ChatRow {
  const row = chatRow(db, chatId);
  if (row === undefined) throw new ChatNotFoundError(chatId);
  return row;
}

/** A branch's row, or undefined. */
export function branchRow(
  db: SqliteConnection,
  chatId: string,
  name: string,
): BranchRow | undefined {
  return db
    .statement(`SELECT * FROM ${db.tables.branches} WHERE chat_id = ? AND name = ?`)
    .get(chatId, name) as BranchRow | undefined;
}

/** The chat's active branch; a `StoreError` when the chat names one that does not exist. */
export function activeBranch(db: SqliteConnection, chat: ChatRow): BranchRecord {
  const row = branchRow(db, chat.id, chat.active_branch);
  if (row === undefined) throw missingActiveBranch(db, chat);
  return branchRecord(row);
}

/** The error of a chat whose active branch does not exist (a damaged or hand-edited file). */
export function missingActiveBranch(db: SqliteConnection, chat: ChatRow): StoreError {
  return new StoreError(
    `SqliteContextStore at "${db.path}": chat "${chat.id}" names active branch "${chat.active_branch}", which does not exist.`,
  );
}

/** A checkpoint's row, or undefined. */
export function checkpointRow(
  db: SqliteConnection,
  chatId: string,
  name: string,
): CheckpointRow | undefined {
  return db
    .statement(`SELECT * FROM ${db.tables.checkpoints} WHERE chat_id = ? AND name = ?`)
    .get(chatId, name) as CheckpointRow | undefined;
}

/** A node's row, or undefined. */
export function messageRow(
  db: SqliteConnection,
  chatId: string,
  id: string,
): MessageRow | undefined {
  return db
    .statement(`SELECT ${MESSAGE_COLUMNS} FROM ${db.tables.messages} WHERE chat_id = ? AND id = ?`)
    .get(chatId, id) as MessageRow | undefined;
}

/** The state a write of messages starts from. */
export interface HeadStateRow {
  user_id: string;
  version: number;
  rewritten_at: number;
  branch_name: string | null;
  head: string | null;
  max_sequence: number | null;
  /** The search index marks: the chat revision and the highest sequence indexed; null when never indexed. */
  indexed_version: number | null;
  indexed_sequence: number | null;
}

/**
 * The chat's owner and version, one branch's head, the chat's highest sequence and its search
 * index marks, in one lookup. `ChatNotFoundError` / `BranchNotFoundError` when either is missing.
 */
export function headState(db: SqliteConnection, chatId: string, branch: string): HeadStateRow {
  const state = db.prepared(headStateSql).get(branch, chatId) as HeadStateRow | undefined;
  if (state === undefined) throw new ChatNotFoundError(chatId);
  if (state.branch_name === null) throw new BranchNotFoundError(chatId, branch);
  return state;
}

function headStateSql(t: TableNames): string {
  return `SELECT chat.user_id AS user_id, chat.version AS version, chat.rewritten_at AS rewritten_at, branch.name AS branch_name, branch.head_message_id AS head,
              (SELECT MAX(sequence) FROM ${t.messages} WHERE chat_id = chat.id) AS max_sequence,
              marks.indexed_version AS indexed_version, marks.indexed_sequence AS indexed_sequence
         FROM ${t.chats} AS chat LEFT JOIN ${t.branches} AS branch ON branch.chat_id = chat.id AND branch.name = ?
         LEFT JOIN ${t.searchState} AS marks ON marks.chat_id = chat.id
        WHERE chat.id = ?`;
}

/** Moves the chat's `updated_at` (never back), and its active branch when given. */
export function touchChat(
  db: SqliteConnection,
  chatId: string,
  now: number,
  activeBranchName?: string,
): void {
  if (activeBranchName === undefined) {
    db.statement(`UPDATE ${db.tables.chats} SET updated_at = MAX(updated_at, ?) WHERE id = ?`).run(
      now,
      chatId,
    );
  } else {
    db.statement(
      `UPDATE ${db.tables.chats} SET active_branch = ?, updated_at = MAX(updated_at, ?) WHERE id = ?`,
    ).run(activeBranchName, now, chatId);
  }
}
