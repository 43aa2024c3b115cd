import {
  BranchExistsError,
  type BranchRecord,
  CheckpointExistsError,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import { type ContextStoreDriver, forkBranchName } from '@ctxgraph/fragments-core/store-kit';
import {
  type BranchState,
  branchRecord,
  type ChatState,
  type CheckpointState,
  checkpointRecord,
  type MemoryChats,
  requireBranch,
  requireChat,
  timeAfter,
} from './memory-state';

/** The branch and checkpoint operations of the memory driver. */
export type BranchAndCheckpointOperations = Required<
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

/** Branches and checkpoints: each a pointer to a node, each write O(1) (a fork O(branches)). */
export function branchAndCheckpointOperations(chats: MemoryChats): BranchAndCheckpointOperations {
  return {
    createBranch(input) {
      const chat = requireChat(chats, input.chatId);
      if (chat.branches.has(input.name)) throw new BranchExistsError(chat.id, input.name);
      assertNodeExists(chat, input.headMessageId);
      return addBranch(chat, input.name, input.headMessageId, input.activate);
    },

    // Reads the names and creates the fork in one synchronous stretch, so concurrent forks never
    // pick the same name.
    forkBranch(input) {
      const chat = requireChat(chats, input.chatId);
      assertNodeExists(chat, input.headMessageId);
      const name = forkBranchName(input.from, chat.branches.keys());
      return addBranch(chat, name, input.headMessageId, input.activate);
    },

    // One synchronous stretch: a commit or append that addresses the old name afterwards finds
    // no branch (BranchNotFoundError) and writes nothing; one before it moved the head the
    // rename keeps. The map is rebuilt so the branch keeps its place (creation order).
    renameBranch(input) {
      const chat = requireChat(chats, input.chatId);
      const branch = requireBranch(chat, input.from);
      if (chat.branches.has(input.to)) throw new BranchExistsError(chat.id, input.to);
      const now = timeAfter(Math.max(chat.updatedAt, branch.updatedAt));
      const renamed: BranchState = { ...branch, name: input.to, updatedAt: now };
      const entries = [...chat.branches.values()];
      chat.branches.clear();
      for (const entry of entries)
        chat.branches.set(
          entry.name === input.from ? input.to : entry.name,
          entry === branch ? renamed : entry,
        );
      if (chat.activeBranch === input.from) chat.activeBranch = input.to;
      chat.updatedAt = now;
      return branchRecord(chat.id, renamed);
    },

    getBranch(input) {
      const chat = requireChat(chats, input.chatId);
      const branch = chat.branches.get(input.name);
      return branch === undefined ? null : branchRecord(chat.id, branch);
    },

    listBranches(chatId) {
      const chat = requireChat(chats, chatId);
      return [...chat.branches.values()].map((branch) => branchRecord(chat.id, branch));
    },

    setActiveBranch(input) {
      const chat = requireChat(chats, input.chatId);
      const branch = requireBranch(chat, input.name);
      chat.activeBranch = branch.name;
      chat.updatedAt = timeAfter(chat.updatedAt);
      return branchRecord(chat.id, branch);
    },

    createCheckpoint(input) {
      const chat = requireChat(chats, input.chatId);
      assertNodeExists(chat, input.messageId);
      if (chat.checkpoints.has(input.name) && !input.replace) {
        throw new CheckpointExistsError(chat.id, input.name);
      }
      const now = timeAfter(chat.updatedAt);
      const checkpoint: CheckpointState = {
        name: input.name,
        messageId: input.messageId,
        createdAt: now,
      };
      // A moved checkpoint is a new one under an old name: it lists where a new one would.
      chat.checkpoints.delete(input.name);
      chat.checkpoints.set(checkpoint.name, checkpoint);
      chat.updatedAt = now;
      return checkpointRecord(chat.id, checkpoint);
    },

    getCheckpoint(input) {
      const chat = requireChat(chats, input.chatId);
      const checkpoint = chat.checkpoints.get(input.name);
      return checkpoint === undefined ? null : checkpointRecord(chat.id, checkpoint);
    },

    listCheckpoints(chatId) {
      const chat = requireChat(chats, chatId);
      return [...chat.checkpoints.values()].map((checkpoint) =>
        checkpointRecord(chat.id, checkpoint),
      );
    },

    // Never deletes the node.
    deleteCheckpoint(input) {
      const chat = requireChat(chats, input.chatId);
      if (!chat.checkpoints.delete(input.name)) return false;
      chat.updatedAt = timeAfter(chat.updatedAt);
      return true;
    },
  };
}

function assertNodeExists(chat: ChatState, messageId: string | null): void {
  if (messageId !== null && !chat.nodes.has(messageId))
    throw new MessageNotFoundError(chat.id, messageId);
}

function addBranch(
  chat: ChatState,
  name: string,
  headMessageId: string | null,
  activate: boolean,
): BranchRecord {
  const now = timeAfter(chat.updatedAt);
  const branch: BranchState = { name, headMessageId, createdAt: now, updatedAt: now };
  chat.branches.set(branch.name, branch);
  if (activate) chat.activeBranch = branch.name;
  chat.updatedAt = now;
  return branchRecord(chat.id, branch);
}
