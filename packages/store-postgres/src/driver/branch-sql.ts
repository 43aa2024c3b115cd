import {
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  ChatNotFoundError,
  type ChatPointerInput,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import {
  forkBranchName,
  type PreparedCreateBranch,
  type PreparedForkBranch,
  type PreparedRenameBranch,
} from '@ctxgraph/fragments-core/store-kit';
import type { PostgresConnection } from './connection';
import { BRANCH_COLUMNS, branchFrom, integer, type Row } from './rows';

/** Creates a branch, optionally making it the active one in the same transaction. */
export function createBranch(
  db: PostgresConnection,
  input: PreparedCreateBranch,
): Promise<BranchRecord> {
  const { chatId, name, headMessageId, activate } = input;
  return db.run(() =>
    db.transaction(async (sql) => {
      const now = Date.now();
      await db.lockChat(sql, chatId, now, activate ? name : null);
      if (headMessageId !== null) await db.assertMessageExists(sql, chatId, headMessageId);
      const rows = await db.query(
        sql,
        `INSERT INTO ${db.names.branches} AS b (chat_id, name, head_message_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (chat_id, name) DO NOTHING
         RETURNING ${BRANCH_COLUMNS}`,
        [chatId, name, headMessageId, now],
      );
      if (rows[0] === undefined) throw new BranchExistsError(chatId, name);
      return branchFrom(rows[0]);
    }),
  );
}

/**
 * Creates a fork named `forkBranchName(from, every branch name of the chat)` in one
 * transaction that holds the chat row lock while it reads the names and inserts the branch,
 * so concurrent forks queue and each gets its own name. `MessageNotFoundError` when the head
 * is not in the chat.
 */
export function forkBranch(
  db: PostgresConnection,
  input: PreparedForkBranch,
): Promise<BranchRecord> {
  const { chatId, from, headMessageId, activate } = input;
  return db.run(() =>
    db.transaction(async (sql) => {
      const names = db.names;
      const now = Date.now();
      // Every branch is created under this lock (openChat creates `main` with the chat row),
      // and the next statement's snapshot is taken after it is granted: the names are complete.
      await db.lockChat(sql, chatId, now, null);
      const found = await db.query(
        sql,
        `SELECT (SELECT array_agg(b.name) FROM ${names.branches} b WHERE b.chat_id = $1),
           $2::text IS NULL OR EXISTS (SELECT 1 FROM ${names.messages} m WHERE m.chat_id = $1 AND m.message_id = $2::text)`,
        [chatId, headMessageId],
      );
      const row = found[0] as Row;
      if (row[1] !== true) throw new MessageNotFoundError(chatId, headMessageId as string);
      const name = forkBranchName(from, (row[0] as string[] | null) ?? []);
      const rows = await db.query(
        sql,
        `WITH created AS (
           INSERT INTO ${names.branches} AS b (chat_id, name, head_message_id, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $4)
           RETURNING ${BRANCH_COLUMNS}
         ), activated AS (
           UPDATE ${names.chats} c SET active_branch = $2
           WHERE c.chat_id = $1 AND $5 AND EXISTS (SELECT 1 FROM created)
           RETURNING 1
         )
         SELECT * FROM created`,
        [chatId, name, headMessageId, now, activate],
      );
      return branchFrom(rows[0] as Row);
    }),
  );
}

/**
 * Renames a branch in one transaction that takes the locks in the order every write takes them:
 * the branch row first (`FOR UPDATE`, since its key changes: a commit or append holding it
 * finishes first and the rename keeps the head it moved; one that waits for it re-reads the row,
 * finds no branch of the old name and writes nothing), then the chat row (every branch is
 * created under it, so the check that `to` is free holds until the rename commits). The row is
 * updated in place: its head, `created_at` and `ordinal` stay.
 */
export function renameBranch(
  db: PostgresConnection,
  input: PreparedRenameBranch,
): Promise<BranchRecord> {
  const { chatId, from, to } = input;
  const names = db.names;
  return db.run(() =>
    db.transaction(async (sql) => {
      const locked = await db.query(
        sql,
        `SELECT 1 FROM ${names.branches} WHERE chat_id = $1 AND name = $2 FOR UPDATE`,
        [chatId, from],
      );
      const now = Date.now();
      const chat = await db.query(
        sql,
        `UPDATE ${names.chats} c SET
           updated_at = greatest(c.updated_at, $3::bigint),
           active_branch = CASE WHEN c.active_branch = $2 AND $5::boolean THEN $4 ELSE c.active_branch END
         WHERE c.chat_id = $1
         RETURNING (SELECT count(*) FROM ${names.branches} b WHERE b.chat_id = $1 AND b.name = $4)`,
        [chatId, from, now, to, locked.length > 0],
      );
      if (chat[0] === undefined) throw new ChatNotFoundError(chatId);
      if (locked.length === 0) throw new BranchNotFoundError(chatId, from);
      if (integer(chat[0][0]) > 0) throw new BranchExistsError(chatId, to);
      const rows = await db.query(
        sql,
        `UPDATE ${names.branches} b SET name = $3, updated_at = greatest(b.updated_at, $4::bigint)
         WHERE b.chat_id = $1 AND b.name = $2
         RETURNING ${BRANCH_COLUMNS}`,
        [chatId, from, to, now],
      );
      return branchFrom(rows[0] as Row);
    }),
  );
}

/** A branch, or null. */
export function getBranch(
  db: PostgresConnection,
  input: ChatPointerInput,
): Promise<BranchRecord | null> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.chat_id, ${BRANCH_COLUMNS} FROM ${db.names.chats} c
       LEFT JOIN ${db.names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
       WHERE c.chat_id = $1`,
      [input.chatId, input.name],
    );
    const row = rows[0];
    if (row === undefined) throw new ChatNotFoundError(input.chatId);
    return row[2] === null ? null : branchFrom(row, 1);
  });
}

/** Every branch of the chat, oldest first. */
export function listBranches(db: PostgresConnection, chatId: string): Promise<BranchRecord[]> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.chat_id, ${BRANCH_COLUMNS} FROM ${db.names.chats} c
       LEFT JOIN ${db.names.branches} b ON b.chat_id = c.chat_id
       WHERE c.chat_id = $1
       ORDER BY b.created_at, b.ordinal`,
      [chatId],
    );
    if (rows.length === 0) throw new ChatNotFoundError(chatId);
    return rows.filter((row) => row[2] !== null).map((row) => branchFrom(row, 1));
  });
}

/**
 * Makes an existing branch the active one. The branch row is locked (`FOR KEY SHARE`) before the
 * chat row, the order of every write, so a concurrent rename or delete of the branch either
 * finishes first (then: `BranchNotFoundError`) or waits for this one.
 */
export function setActiveBranch(
  db: PostgresConnection,
  input: ChatPointerInput,
): Promise<BranchRecord> {
  return db.run(async (sql) => {
    const names = db.names;
    const rows = await db.query(
      sql,
      `WITH target AS (
         SELECT ${BRANCH_COLUMNS} FROM ${names.branches} b WHERE b.chat_id = $1 AND b.name = $2
         FOR KEY SHARE
       ), activated AS (
         UPDATE ${names.chats} c SET active_branch = $2, updated_at = greatest(c.updated_at, $3::bigint)
         WHERE c.chat_id = $1 AND EXISTS (SELECT 1 FROM target)
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM ${names.chats} c WHERE c.chat_id = $1), target.*
       FROM (SELECT 1) AS one LEFT JOIN target ON true`,
      [input.chatId, input.name, Date.now()],
    );
    const row = rows[0] as Row;
    if (integer(row[0]) === 0) throw new ChatNotFoundError(input.chatId);
    if (row[2] === null) throw new BranchNotFoundError(input.chatId, input.name);
    return branchFrom(row, 1);
  });
}
