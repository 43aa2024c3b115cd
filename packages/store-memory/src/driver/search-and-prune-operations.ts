import { OwnershipError, type StoredMessage, utf8Length } from '@ctxgraph/fragments-core';
import {
  activeBranchAfterPrune,
  branchesHolding,
  type ContextStoreDriver,
  compareSearchPositions,
  messageSearchText,
  type SearchMatch,
  searchScore,
  searchTokens,
  unreachableNodes,
} from '@ctxgraph/fragments-core/store-kit';
import {
  type ChatState,
  type MemoryChats,
  requireBranch,
  requireChat,
  timeAfter,
  unindexNode,
} from './memory-state';

/** The search and retention operations of the memory driver. */
export type SearchAndPruneOperations = Required<
  Pick<ContextStoreDriver, 'searchMessages' | 'prune'>
>;

/** The ids on the chain from `head` back to the root. O(chain). */
function chainIds(chat: ChatState, head: string | null): Set<string> {
  const ids = new Set<string>();
  let current = head;
  while (current !== null && !ids.has(current)) {
    ids.add(current);
    current = chat.nodes.get(current)?.parentId ?? null;
  }
  return ids;
}

/**
 * Search as a plain scan (every node of every chat in scope is parsed and tokenized, O(text
 * searched)) and retention over the chat's maps, each in one synchronous stretch, so it
 * serializes with every other write of the store.
 */
export function searchAndPruneOperations(chats: MemoryChats): SearchAndPruneOperations {
  return {
    searchMessages(query) {
      let scope: ChatState[];
      let onChain: Set<string> | undefined;
      if (query.chatId !== undefined) {
        const chat = requireChat(chats, query.chatId);
        if (chat.userId !== query.userId) throw new OwnershipError(chat.id, query.userId);
        if (query.branch !== undefined)
          onChain = chainIds(chat, requireBranch(chat, query.branch).headMessageId);
        scope = [chat];
      } else {
        scope = [...chats.values()].filter((chat) => chat.userId === query.userId);
      }
      const found: SearchMatch[] = [];
      for (const chat of scope) {
        for (const node of chat.nodes.values()) {
          if (onChain !== undefined && !onChain.has(node.id)) continue;
          const message = JSON.parse(node.json) as StoredMessage;
          const score = searchScore(
            searchTokens(messageSearchText(message)),
            query.terms,
            query.prefix,
          );
          if (score === undefined) continue;
          const match = {
            chatId: chat.id,
            messageId: node.id,
            sequence: node.sequence,
            score,
            message,
            branches: [],
          };
          if (query.after === undefined || compareSearchPositions(match, query.after) > 0)
            found.push(match);
        }
      }
      found.sort(compareSearchPositions);
      const page = found.slice(0, query.limit + 1);
      // Branch membership only for the page's hits: each chat's graph numbered once.
      const holders = new Map<string, Map<string, string[]>>();
      return page.map((hit): SearchMatch => {
        let branches = holders.get(hit.chatId);
        if (branches === undefined) {
          const chat = requireChat(chats, hit.chatId);
          branches = branchesHolding(
            chat.nodes.values(),
            [...chat.branches.values()].map((branch) => ({
              name: branch.name,
              headId: branch.headMessageId,
            })),
            page.filter((other) => other.chatId === hit.chatId).map((other) => other.messageId),
          );
          holders.set(hit.chatId, branches);
        }
        return { ...hit, branches: branches.get(hit.messageId) ?? [] };
      });
    },

    prune(input) {
      const chat = requireChat(chats, input.chatId);
      const activeBranch = activeBranchAfterPrune(input, chat.activeBranch, [
        ...chat.branches.keys(),
      ]);
      const pointers: (string | null)[] = [];
      for (const branch of chat.branches.values())
        if (!input.deleteBranches.includes(branch.name)) pointers.push(branch.headMessageId);
      for (const checkpoint of chat.checkpoints.values()) pointers.push(checkpoint.messageId);
      const unreachable = unreachableNodes(chat.nodes, pointers);
      let bytes = 0;
      for (const id of unreachable) bytes += utf8Length(chat.nodes.get(id)?.json ?? '');
      const result = {
        chatId: chat.id,
        dryRun: input.dryRun,
        nodes: unreachable.size,
        bytes,
        branches: input.deleteBranches,
        activeBranch,
      };
      if (input.dryRun || (unreachable.size === 0 && input.deleteBranches.length === 0))
        return result;
      for (const name of input.deleteBranches) chat.branches.delete(name);
      for (const id of unreachable) {
        const node = chat.nodes.get(id);
        if (node !== undefined) unindexNode(chat, node);
        chat.nodes.delete(id);
      }
      chat.activeBranch = activeBranch;
      chat.updatedAt = timeAfter(chat.updatedAt);
      return result;
    },
  };
}
