import type { QueryClient, QueryFilters } from '@tanstack/react-query';
import type { RendererName } from '../api';

/**
 * Every query's key, in one place. A user's queries sit under `['users', userId]` (the server
 * answers each user differently), and everything read about one chat under its chat key, so a
 * change to the chat can refresh what depends on it with one filter.
 */
export const queryKeys = {
  /** `GET /api/info`: the same for every user. */
  info: () => ['info'] as const,
  /** The user's chat list, page by page (an infinite query). */
  chatList: (userId: string) => ['users', userId, 'chat-list'] as const,
  /** One chat as the page shows it (`GET /api/chats/:chatId`); the prefix of its other queries. */
  chat: (userId: string, chatId: string) => ['users', userId, 'chats', chatId] as const,
  /** The engine's `inspect()` of the chat, with a budget plan when `maxInputTokens` is set. */
  inspect: (
    userId: string,
    chatId: string,
    options: { renderer: RendererName; modelId: string; maxInputTokens?: number },
  ) => [...queryKeys.chat(userId, chatId), 'inspect', options] as const,
  /** The model calls of the active branch with a cache prediction, predicted and confirmed. */
  cacheCalls: (userId: string, chatId: string) =>
    [...queryKeys.chat(userId, chatId), 'cache-calls'] as const,
  /** Two branches compared (`compareBranches`). */
  compare: (userId: string, chatId: string, left: string, right: string) =>
    [...queryKeys.chat(userId, chatId), 'compare', { left, right }] as const,
  /** A message's versions (`versions(nodeId)`). */
  versions: (userId: string, chatId: string, nodeId: string) =>
    [...queryKeys.chat(userId, chatId), 'versions', nodeId] as const,
  /** What deleting a branch would remove (`deleteBranch({ dryRun: true })`). */
  branchDeletion: (userId: string, chatId: string, branch: string, activate: string | undefined) =>
    [...queryKeys.chat(userId, chatId), 'branch-deletion', { branch, activate }] as const,
};

/** The queries read from a chat other than the chat itself (its inspect, comparisons, …). */
export function derivedFromChat(userId: string, chatId: string): QueryFilters {
  const prefix = queryKeys.chat(userId, chatId);
  return { queryKey: prefix, predicate: (query) => query.queryKey.length > prefix.length };
}

/**
 * After the chat list changed (a chat created, renamed, written to, deleted): keep only its first
 * page and read that again, as the page always did; a later page's cursor would be stale.
 */
export async function refreshChatList(queryClient: QueryClient, userId: string): Promise<void> {
  const key = queryKeys.chatList(userId);
  queryClient.setQueryData<{ pages: unknown[]; pageParams: unknown[] }>(key, (data) =>
    data === undefined
      ? data
      : { pages: data.pages.slice(0, 1), pageParams: data.pageParams.slice(0, 1) },
  );
  await queryClient.invalidateQueries({ queryKey: key });
}
