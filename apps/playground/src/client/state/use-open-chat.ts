import type { ChatRecord } from '@ctxgraph/fragments-core';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { api, type ChatView } from '../api';
import { describeError } from '../describe-error';
import { noticeFor, type ShowNotice } from './notice';
import { queryKeys, refreshChatList } from './query-keys';

function chatFromHash(): string | null {
  const match = /^#\/chat\/(.+)$/.exec(window.location.hash);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

function onHashChange(listener: () => void): () => void {
  window.addEventListener('hashchange', listener);
  return () => window.removeEventListener('hashchange', listener);
}

/** The chat the address names (`#/chat/<id>`), or null. */
export function useChatIdFromHash(): string | null {
  return useSyncExternalStore(onHashChange, chatFromHash);
}

/** Opens a chat: the address names it (so a reload or a link opens it again). */
export function openChat(chatId: string): void {
  window.location.hash = `#/chat/${encodeURIComponent(chatId)}`;
}

/** Leaves the open chat (the page shows its welcome). */
export function closeChat(): void {
  window.location.hash = '';
}

/** The open chat as the server answers it, or why it could not be opened. */
export interface OpenChat {
  /** The chat, or null while it loads, failed, or none is open. */
  view: ChatView | null;
  /** Why it could not be opened, told once where the chat would be; or null. */
  error: string | null;
}

/** Reads the chat `chatId` as `userId` (again whenever either changes). */
export function useOpenChat(userId: string | null, chatId: string | null): OpenChat {
  const query = useQuery({
    queryKey: queryKeys.chat(userId ?? '', chatId ?? ''),
    queryFn: () => api.chat(chatId ?? ''),
    enabled: userId !== null && chatId !== null,
  });
  if (userId === null || chatId === null) return { view: null, error: null };
  return {
    view: query.data ?? null,
    error: query.error ? describeError(query.error).message : null,
  };
}

/** The user's chats, newest first, a page at a time. */
export interface ChatListState {
  chats: ChatRecord[];
  hasMore: boolean;
  /** Reads the next page. */
  more: () => void;
}

/**
 * The user's chat list; a failure to read it is shown as a notice. When the address opens a chat
 * the list does not hold (made elsewhere since the list was read: another tab, the API), the
 * list is read again, once per such chat, so it is never stale.
 */
export function useChatList(
  userId: string | null,
  show: ShowNotice,
  openChatId: string | null = null,
): ChatListState {
  const queryClient = useQueryClient();
  const refreshedFor = useRef<string | null>(null);
  const query = useInfiniteQuery({
    queryKey: queryKeys.chatList(userId ?? ''),
    queryFn: ({ pageParam }) => api.listChats(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    enabled: userId !== null,
  });
  useEffect(() => {
    if (query.error) show(noticeFor(query.error));
  }, [query.error, show]);
  const listed = query.data?.pages.some((page) =>
    page.items.some((chat) => chat.id === openChatId),
  );
  useEffect(() => {
    if (userId === null || openChatId === null || query.data === undefined || listed) return;
    if (refreshedFor.current === openChatId) return;
    refreshedFor.current = openChatId;
    void refreshChatList(queryClient, userId);
  }, [userId, openChatId, query.data, listed, queryClient]);
  return {
    chats: query.data?.pages.flatMap((page) => page.items) ?? [],
    hasMore: query.hasNextPage,
    more: () => {
      if (query.hasNextPage) void query.fetchNextPage();
    },
  };
}
