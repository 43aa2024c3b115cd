import { BranchExistsError, CheckpointExistsError } from '@ctxgraph/fragments-core';
import { type ContextStoreDriver, forkBranchName } from '@ctxgraph/fragments-core/store-kit';
import type { Lookups } from './lookups';
import { type BranchRow, branchRecord, type CheckpointRow, checkpointRecord } from './rows';

/** The branch and checkpoint operations of the driver. */
export type PointerOperations = Required<
  Pick<
    ContextStoreDriver,
    | 'createBranch'
    | 'forkBranch'
    | 'renameBranch'
    | 'getBranch'
    | 'listBranches'
    | 'setActiveBranch'
    | 'createCheckpoint'
    | 'getCheckpoint'
    | 'listCheckpoints'
    | 'deleteCheckpoint'
  >
>;

/** Branches and checkpoints: each a row pointing at a node; listing order is the rowid. */
export function pointerOperations(db: Lookups): PointerOperations {
  const {
    storage,
    sql,
    rows,
    requireChat,
    findBranch,
    requireBranch,
    assertNodeExists,
    branchNames,
    touchChat,
    insertBranch,
  } = db;
  return {
    createBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        if (findBranch(chat.id, input.name) !== undefined)
          throw new BranchExistsError(chat.id, input.name);
        assertNodeExists(chat.id, input.headMessageId);
        return branchRecord(insertBranch(chat, input.name, input.headMessageId, input.activate));
      });
    },

    forkBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        assertNodeExists(chat.id, input.headMessageId);
        const name = forkBranchName(input.from, branchNames(chat.id));
        return branchRecord(insertBranch(chat, name, input.headMessageId, input.activate));
      });
    },

    // An UPDATE keeps the row (and so its rowid: the branch keeps its place in the listing).
    renameBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const branch = requireBranch(chat.id, input.from);
        if (findBranch(chat.id, input.to) !== undefined)
          throw new BranchExistsError(chat.id, input.to);
        const now = Math.max(Date.now(), chat.updated_at, branch.updated_at);
        sql.exec(
          'UPDATE ctxgraph_branches SET name = ?, updated_at = ? WHERE chat_id = ? AND name = ?',
          input.to,
          now,
          chat.id,
          input.from,
        );
        if (chat.active_branch === input.from)
          sql.exec('UPDATE ctxgraph_chats SET active_branch = ? WHERE id = ?', input.to, chat.id);
        touchChat(chat, now);
        return branchRecord({ ...branch, name: input.to, updated_at: now });
      });
    },

    getBranch(input) {
      const chat = requireChat(input.chatId);
      const branch = findBranch(chat.id, input.name);
      return branch === undefined ? null : branchRecord(branch);
    },

    listBranches(chatId) {
      const chat = requireChat(chatId);
      return rows<BranchRow>(
        'SELECT * FROM ctxgraph_branches WHERE chat_id = ? ORDER BY rowid',
        chat.id,
      ).map(branchRecord);
    },

    setActiveBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const branch = requireBranch(chat.id, input.name);
        sql.exec('UPDATE ctxgraph_chats SET active_branch = ? WHERE id = ?', branch.name, chat.id);
        touchChat(chat);
        return branchRecord(branch);
      });
    },

    // A moved checkpoint is a new row under an old name: it lists where a new one would.
    createCheckpoint(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        assertNodeExists(chat.id, input.messageId);
        const exists =
          rows<CheckpointRow>(
            'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ?',
            chat.id,
            input.name,
          ).length > 0;
        if (exists && !input.replace) throw new CheckpointExistsError(chat.id, input.name);
        const now = Math.max(Date.now(), chat.updated_at);
        sql.exec(
          'DELETE FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ?',
          chat.id,
          input.name,
        );
        const checkpoint: CheckpointRow = {
          chat_id: chat.id,
          name: input.name,
          message_id: input.messageId,
          created_at: now,
        };
        sql.exec(
          'INSERT INTO ctxgraph_checkpoints (chat_id, name, message_id, created_at) VALUES (?, ?, ?, ?)',
          checkpoint.chat_id,
          checkpoint.name,
          checkpoint.message_id,
          checkpoint.created_at,
        );
        touchChat(chat, now);
        return checkpointRecord(checkpoint);
      });
    },

    getCheckpoint(input) {
      const chat = requireChat(input.chatId);
      const checkpoint = rows<CheckpointRow>(
        'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ?',
        chat.id,
        input.name,
      )[0];
      return checkpoint === undefined ? null : checkpointRecord(checkpoint);
    },

    listCheckpoints(chatId) {
      const chat = requireChat(chatId);
      return rows<CheckpointRow>(
        'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? ORDER BY rowid',
        chat.id,
      ).map(checkpointRecord);
    },

    // Never deletes the node.
    deleteCheckpoint(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const deleted = rows<{ name: string }>(
          'DELETE FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ? RETURNING name',
          chat.id,
          input.name,
        );
        if (deleted.length === 0) return false;
        touchChat(chat);
        return true;
      });
    },
  };
}
