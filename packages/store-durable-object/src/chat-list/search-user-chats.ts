import type { Page, SearchHit, SearchMessagesInput } from '@ctxgraph/fragments-core';
import {
  compareSearchPositions,
  prepareSearch,
  searchCursor,
} from '@ctxgraph/fragments-core/store-kit';

/** Input of {@link searchUserChats}. */
export interface SearchUserChatsInput {
  /** Whose chats. */
  readonly userId: string;
  /** The words to find (the contract's rule: see `SearchMessagesInput.query`). */
  readonly query: string;
  /** Search as you type (the last word a prefix). @default false */
  readonly prefix?: boolean;
  /** Hits per page. @default 20 (at most 100) */
  readonly limit?: number;
  /** `nextCursor` of the previous page of the same search. */
  readonly cursor?: string;
  /** The chats to search: the user's chat list (`DurableObjectChatList.chatIds`). */
  readonly chatIds: readonly string[];
  /**
   * Searches one chat: its object's `searchMessages` with this input (it names the chat and,
   * after the first page, a cursor of that chat's search that starts after the last hit of the
   * previous page).
   */
  readonly searchChat: (chatId: string, input: SearchMessagesInput) => Promise<Page<SearchHit>>;
  /**
   * How many chats are searched at once.
   * @default 6
   */
  readonly concurrency?: number;
}

/** A chat a user-wide search could not search. */
export interface FailedChatSearch {
  /** The chat. */
  readonly chatId: string;
  /** Why (the error's message). */
  readonly error: string;
}

/** What {@link searchUserChats} answers: a page of the contract's hits, and what it missed. */
export interface UserSearchPage extends Page<SearchHit> {
  /**
   * The chats whose search failed: empty for a whole answer. When not empty, the page is
   * **partial**: it ranks the hits of the other chats only.
   */
  readonly failedChats: readonly FailedChatSearch[];
}

/** The default number of chats searched at once. */
export const DEFAULT_SEARCH_CONCURRENCY = 6;

/**
 * A user-wide search over chats kept in separate stores (a Durable Object per chat): it asks each
 * chat for one page, at most `concurrency` at a time, and merges them in the contract's ranking
 * (score descending, then chat id, then sequence), so the page is the one a single store holding
 * every chat would answer. The cursor is the one that store would give (`searchCursor` of the
 * user-wide search), and each chat's next page starts after its position, so pages neither skip
 * nor repeat a hit. A chat that fails (its object unreachable, its store refusing) is left out
 * and named in `failedChats`; a chat gone since the list last heard of it (`ChatNotFoundError`) is
 * left out silently. The input is checked as `searchMessages` checks it (`ValidationError`).
 * Cost: one call per chat of the user per page.
 */
export async function searchUserChats(input: SearchUserChatsInput): Promise<UserSearchPage> {
  const { chatIds, searchChat } = input;
  const concurrency = input.concurrency ?? DEFAULT_SEARCH_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(
      `searchUserChats: concurrency must be a positive integer, received ${String(concurrency)}.`,
    );
  const search = prepareSearch(
    {
      userId: input.userId,
      query: input.query,
      ...(input.prefix === undefined ? {} : { prefix: input.prefix }),
      ...(input.limit === undefined ? {} : { limit: input.limit }),
      ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
    },
    true,
  );
  const hits: SearchHit[] = [];
  const failedChats: FailedChatSearch[] = [];
  let more = false;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chatIds.length) {
      const chatId = chatIds[next] as string;
      next += 1;
      const chatInput: SearchMessagesInput = {
        userId: search.userId,
        query: input.query,
        chatId,
        limit: search.limit,
        ...(search.prefix ? { prefix: true } : {}),
        ...(search.after === undefined
          ? {}
          : { cursor: searchCursor({ ...search, chatId }, search.after) }),
      };
      try {
        const page = await searchChat(chatId, chatInput);
        hits.push(...page.items);
        if (page.nextCursor !== null) more = true;
      } catch (error) {
        if (isNamed(error, 'ChatNotFoundError')) continue;
        failedChats.push({
          chatId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chatIds.length) }, worker));
  hits.sort(compareSearchPositions);
  const items = hits.slice(0, search.limit);
  if (hits.length > search.limit) more = true;
  const last = items.at(-1);
  failedChats.sort((left, right) => (left.chatId < right.chatId ? -1 : 1));
  return {
    items,
    nextCursor: more && last !== undefined ? searchCursor(search, last) : null,
    failedChats,
  };
}

function isNamed(error: unknown, name: string): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    ((error as { name?: unknown }).name === name ||
      (typeof (error as { message?: unknown }).message === 'string' &&
        (error as { message: string }).message.startsWith(`${name}:`)))
  );
}
