import { OwnershipError, type StoredMessage } from '@ctxgraph/fragments-core';
import {
  activeBranchAfterPrune,
  type ContextStoreDriver,
  messageSearchText,
  type SearchMatch,
  searchTokens,
  unreachableNodes,
  utf8Length,
} from '@ctxgraph/fragments-core/store-kit';
import {
  type ChatState,
  compareIds,
  type MemoryChats,
  requireBranch,
  requireChat,
  timeAfter,
} from './memory-state';

/** The search and retention operations of the memory driver. */
export type BranchOperations = Required<Pick<ContextStoreDriver, 'searchMessages' | 'prune'>>;

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
 * A score for a text that holds every term, or undefined when it does not: the terms'
 * occurrences over the square root of the text's length in words, so repeating a word counts
 * and a long text dilutes it (a plain stand-in for BM25).
 */
function scoreText(text: string, terms: readonly string[]): number | undefined {
  const tokens = searchTokens(text);
  if (tokens.length === 0) return undefined;
  let occurrences = 0;
  for (const term of terms) {
    let count = 0;
    for (const token of tokens) if (token === term) count += 1;
    if (count === 0) return undefined;
    occurrences += count;
  }
  return occurrences / Math.sqrt(tokens.length);
}

/**
 * Search as a plain scan (every node of every chat in scope is parsed and tokenized, O(text
 * searched)) and retention over the chat's maps, each in one synchronous stretch, so it
 * serializes with every other write of the store.
 */
export function branchOperations(chats: MemoryChats): BranchOperations {
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
      const found: {
        chat: ChatState;
        id: string;
        sequence: number;
        score: number;
        message: StoredMessage;
      }[] = [];
      for (const chat of scope) {
        for (const node of chat.nodes.values()) {
          if (onChain !== undefined && !onChain.has(node.id)) continue;
          const message = JSON.parse(node.json) as StoredMessage;
          const score = scoreText(messageSearchText(message), query.terms);
          if (score === undefined) continue;
          found.push({ chat, id: node.id, sequence: node.sequence, score, message });
        }
      }
      found.sort(
        (left, right) =>
          right.score - left.score ||
          compareIds(left.chat.id, right.chat.id) ||
          left.sequence - right.sequence,
      );
      const page = found.slice(query.offset, query.offset + query.limit + 1);
      // Branch membership only for the page's hits: each chat's chains once.
      const chains = new Map<ChatState, [string, Set<string>][]>();
      return page.map((hit): SearchMatch => {
        let branches = chains.get(hit.chat);
        if (branches === undefined) {
          branches = [...hit.chat.branches.values()].map((branch) => [
            branch.name,
            chainIds(hit.chat, branch.headMessageId),
          ]);
          chains.set(hit.chat, branches);
        }
        return {
          chatId: hit.chat.id,
          messageId: hit.id,
          sequence: hit.sequence,
          score: hit.score,
          message: hit.message,
          branches: branches.filter(([, ids]) => ids.has(hit.id)).map(([name]) => name),
        };
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
      for (const id of unreachable) chat.nodes.delete(id);
      chat.activeBranch = activeBranch;
      chat.updatedAt = timeAfter(chat.updatedAt);
      return result;
    },
  };
}
