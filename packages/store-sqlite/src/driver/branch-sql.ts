import {
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  type ChatPointerInput,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import {
  forkBranchName,
  type PreparedCreateBranch,
  type PreparedForkBranch,
  type PreparedRenameBranch,
} from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { branchRow, messageRow, requireChat, touchChat } from './lookups';
import { type BranchRow, branchRecord } from './rows';

/** Creates a branch (and activates it when asked) in one write. */
export function createBranch(db: SqliteConnection, input: PreparedCreateBranch): BranchRecord {
  const { chatId, name, headMessageId } = input;
  return db.run('createBranch(input)', () =>
    db.write(() => {
      requireChat(db, chatId);
      if (branchRow(db, chatId, name) !== undefined) throw new BranchExistsError(chatId, name);
      assertNode(db, chatId, headMessageId);
      return insertBranch(db, chatId, name, headMessageId, input.activate);
    }),
  );
}

/**
 * Creates a branch named `forkBranchName(from, every branch name of the chat)`, reading the
 * names and inserting the branch in one `BEGIN IMMEDIATE` transaction, so concurrent forks (in
 * any process) each get their own name and none fails.
 */
export function forkBranch(db: SqliteConnection, input: PreparedForkBranch): BranchRecord {
  const { chatId, from, headMessageId } = input;
  return db.run('forkBranch(input)', () =>
    db.write(() => {
      requireChat(db, chatId);
      assertNode(db, chatId, headMessageId);
      const names = db
        .statement(`SELECT name FROM ${db.tables.branches} WHERE chat_id = ?`)
        .pluck()
        .all(chatId) as string[];
      // ValidationError when `from` leaves no room for its `-vN` suffix.
      return insertBranch(db, chatId, forkBranchName(from, names), headMessageId, input.activate);
    }),
  );
}

/**
 * Renames a branch in one `BEGIN IMMEDIATE` transaction, which serializes it with every commit
 * and append (in any process): a writer that names the old branch afterwards finds none. The row
 * is updated in place, so its head, `created_at` and rowid (its place in `listBranches`) stay.
 */
export function renameBranch(db: SqliteConnection, input: PreparedRenameBranch): BranchRecord {
  const { chatId, from, to } = input;
  return db.run('renameBranch(input)', () =>
    db.write(() => {
      const chat = requireChat(db, chatId);
      if (branchRow(db, chatId, from) === undefined) throw new BranchNotFoundError(chatId, from);
      if (branchRow(db, chatId, to) !== undefined) throw new BranchExistsError(chatId, to);
      const now = Date.now();
      const row = db
        .statement(
          `UPDATE ${db.tables.branches} SET name = ?, updated_at = MAX(updated_at, ?) WHERE chat_id = ? AND name = ? RETURNING *`,
        )
        .get(to, now, chatId, from) as BranchRow;
      touchChat(db, chatId, now, chat.active_branch === from ? to : undefined);
      return branchRecord(row);
    }),
  );
}

/** A branch, or null (`ChatNotFoundError` when the chat is missing). */
export function getBranch(db: SqliteConnection, input: ChatPointerInput): BranchRecord | null {
  return db.run('getBranch(input)', () => {
    const row = branchRow(db, input.chatId, input.name);
    if (row !== undefined) return branchRecord(row);
    requireChat(db, input.chatId);
    return null;
  });
}

/** Every branch of the chat, oldest first. */
export function listBranches(db: SqliteConnection, chatId: string): BranchRecord[] {
  return db.run('listBranches(chatId)', () =>
    db.read(() => {
      requireChat(db, chatId);
      return branchRows(db, chatId).map(branchRecord);
    }),
  );
}

/** Makes an existing branch the active one. */
export function setActiveBranch(db: SqliteConnection, input: ChatPointerInput): BranchRecord {
  return db.run('setActiveBranch(input)', () =>
    db.write(() => {
      requireChat(db, input.chatId);
      const row = branchRow(db, input.chatId, input.name);
      if (row === undefined) throw new BranchNotFoundError(input.chatId, input.name);
      touchChat(db, input.chatId, Date.now(), input.name);
      return branchRecord(row);
    }),
  );
}

/** Every branch row of the chat, oldest first. */
export function branchRows(db: SqliteConnection, chatId: string): BranchRow[] {
  return db
    .statement(`SELECT * FROM ${db.tables.branches} WHERE chat_id = ? ORDER BY created_at, rowid`)
    .all(chatId) as BranchRow[];
}

export function assertNode(
  db: SqliteConnection,
  chatId: string,
  headMessageId: string | null,
): void {
  if (headMessageId !== null && messageRow(db, chatId, headMessageId) === undefined) {
    throw new MessageNotFoundError(chatId, headMessageId);
  }
}

// Inside the write of createBranch / forkBranch / a fork-commit: the chat and the node exist, the
// name is free.
export function insertBranch(
  db: SqliteConnection,
  chatId: string,
  name: string,
  headMessageId: string | null,
  activate: boolean,
): BranchRecord {
  const now = Date.now();
  const row = db
    .statement(
      `INSERT INTO ${db.tables.branches} (chat_id, name, head_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *`,
    )
    .get(chatId, name, headMessageId, now, now) as BranchRow;
  touchChat(db, chatId, now, activate ? name : undefined);
  return branchRecord(row);
}
