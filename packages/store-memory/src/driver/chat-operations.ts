import { type JsonObject, OwnershipError, StoreError } from '@ctxgraph/fragments-core';
import { type ContextStoreDriver, mergeMetadata } from '@ctxgraph/fragments-core/store-kit';
import {
  type BranchState,
  branchRecord,
  type ChatState,
  chatRecord,
  checkpointRecord,
  compareIds,
  MAIN_BRANCH,
  type MemoryChats,
  nodeRecord,
  requireChat,
  timeAfter,
} from './memory-state';

/** The chat-level operations of the memory driver. */
export type ChatOperations = Pick<
  ContextStoreDriver,
  'openChat' | 'getChat' | 'updateChat' | 'listChats' | 'deleteChat' | 'getGraph'
>;

/** Chats: open (create or load), read, update, list, delete, and the whole graph of one. */
export function chatOperations(chats: MemoryChats): ChatOperations {
  return {
    openChat(input) {
      const existing = chats.get(input.chatId);
      if (existing !== undefined) {
        if (existing.userId !== input.userId) throw new OwnershipError(input.chatId, input.userId);
        if (input.metadata !== undefined) {
          const current = JSON.parse(existing.metadataJson) as JsonObject;
          existing.metadataJson = JSON.stringify(mergeMetadata(current, input.metadata));
          existing.updatedAt = timeAfter(existing.updatedAt);
        }
        const branch = existing.branches.get(existing.activeBranch);
        if (branch === undefined) {
          throw new StoreError(
            `openChat(input): active branch of chat "${input.chatId}" is missing.`,
          );
        }
        return {
          chat: chatRecord(existing),
          branch: branchRecord(existing.id, branch),
          created: false,
        };
      }
      const now = Date.now();
      const main: BranchState = {
        name: MAIN_BRANCH,
        headMessageId: null,
        createdAt: now,
        updatedAt: now,
      };
      const chat: ChatState = {
        id: input.chatId,
        userId: input.userId,
        title: input.title,
        metadataJson: input.metadataJson,
        activeBranch: MAIN_BRANCH,
        revision: 0,
        rewrittenAt: 0,
        createdAt: now,
        updatedAt: now,
        nextSequence: 1,
        nodes: new Map(),
        byMessageId: new Map(),
        branches: new Map([[MAIN_BRANCH, main]]),
        checkpoints: new Map(),
        context: undefined,
      };
      chats.set(chat.id, chat);
      return { chat: chatRecord(chat), branch: branchRecord(chat.id, main), created: true };
    },

    getChat(chatId) {
      const chat = chats.get(chatId);
      return chat === undefined ? null : chatRecord(chat);
    },

    updateChat(input) {
      const chat = requireChat(chats, input.chatId);
      if (input.metadata !== undefined) {
        const current = JSON.parse(chat.metadataJson) as JsonObject;
        chat.metadataJson = JSON.stringify(mergeMetadata(current, input.metadata));
      }
      if (input.title !== undefined) chat.title = input.title;
      chat.updatedAt = timeAfter(chat.updatedAt);
      return chatRecord(chat);
    },

    // Sorts the user's chats on each call: O(n log n) in that user's chats.
    listChats(query) {
      const after = query.after;
      const owned: ChatState[] = [];
      for (const chat of chats.values()) {
        if (chat.userId !== query.userId) continue;
        if (
          after !== null &&
          !(
            chat.updatedAt < after.updatedAt ||
            (chat.updatedAt === after.updatedAt && chat.id > after.id)
          )
        ) {
          continue;
        }
        owned.push(chat);
      }
      owned.sort(
        (left, right) => right.updatedAt - left.updatedAt || compareIds(left.id, right.id),
      );
      return owned.slice(0, query.limit + 1).map(chatRecord);
    },

    // The chat's nodes, branches, checkpoints and context lane all live in its state object.
    deleteChat(chatId) {
      return chats.delete(chatId);
    },

    getGraph(chatId) {
      const chat = requireChat(chats, chatId);
      return {
        chat: chatRecord(chat),
        nodes: [...chat.nodes.values()].map((node) => nodeRecord(chat.id, node)),
        branches: [...chat.branches.values()].map((branch) => branchRecord(chat.id, branch)),
        checkpoints: [...chat.checkpoints.values()].map((checkpoint) =>
          checkpointRecord(chat.id, checkpoint),
        ),
      };
    },
  };
}
