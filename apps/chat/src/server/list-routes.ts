import {
  type ChatRecord,
  type ListChatsInput,
  type SearchHit,
  ValidationError,
} from '@ctxgraph/fragments-core';

// The chat list and search routes' request and answer shapes, one module for both runtimes: the
// Node server answers them from its store (`listChats`, `searchMessages`); the Worker from the
// user's object (the list) and a search fanned out to the user's chat objects. Same query
// parameters, same JSON, same errors.

/** A chat as `GET /api/chats` lists it. */
export interface ChatSummary {
  readonly id: string;
  readonly title: string | null;
  /** How many message writes the chat has had (the store's `revision`). */
  readonly revision: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** `GET /api/chats`: the user's chats, most recently updated first. */
export interface ChatListAnswer {
  readonly chats: readonly ChatSummary[];
  /** Pass as `?cursor=` for the next page; null on the last. */
  readonly nextCursor: string | null;
}

/** A message as `GET /api/search` finds it. */
export interface SearchHitSummary {
  readonly chatId: string;
  readonly messageId: string;
  readonly role: string;
  readonly sequence: number;
  readonly score: number;
  readonly snippet: string;
  readonly branches: readonly string[];
}

/** `GET /api/search`: the best matches first. */
export interface SearchAnswer {
  readonly hits: readonly SearchHitSummary[];
  readonly nextCursor: string | null;
  /**
   * Chats that could not be searched (on Workers, a chat object that failed): the page then
   * ranks the other chats' hits only. Always empty on Node (one store answers).
   */
  readonly failedChats: readonly { readonly chatId: string; readonly error: string }[];
}

/** The search a `GET /api/search` asks for. */
export interface SearchRequest {
  readonly query: string;
  readonly prefix: boolean;
  readonly limit?: number;
  readonly cursor?: string;
}

function refused(route: string, field: string, problem: string): ValidationError {
  return new ValidationError(`${route}: ${field} ${problem}.`, {
    issues: [{ path: field, message: problem }],
  });
}

function limitOf(route: string, url: URL): { limit?: number } {
  const text = url.searchParams.get('limit');
  if (text === null) return {};
  if (!/^\d{1,3}$/.test(text))
    throw refused(route, 'limit', `must be a whole number, received '${text.slice(0, 20)}'`);
  return { limit: Number(text) };
}

function cursorOf(url: URL): { cursor?: string } {
  const cursor = url.searchParams.get('cursor');
  return cursor === null || cursor === '' ? {} : { cursor };
}

/** The list request of `GET /api/chats?limit=&cursor=` (the store checks the values). */
export function chatListRequest(url: URL, userId: string): ListChatsInput {
  return { userId, ...limitOf('GET /api/chats', url), ...cursorOf(url) };
}

/** The search of `GET /api/search?q=&prefix=1&limit=&cursor=`; `q` is required. */
export function searchRequest(url: URL): SearchRequest {
  const route = 'GET /api/search';
  const query = url.searchParams.get('q');
  if (query === null) throw refused(route, 'q', 'is missing: give the words to search for');
  const prefix = url.searchParams.get('prefix');
  if (prefix !== null && prefix !== '0' && prefix !== '1')
    throw refused(route, 'prefix', `must be 0 or 1, received '${prefix.slice(0, 20)}'`);
  return { query, prefix: prefix === '1', ...limitOf(route, url), ...cursorOf(url) };
}

/** The answer of `GET /api/chats`. */
export function chatListAnswer(page: {
  readonly items: readonly ChatRecord[];
  readonly nextCursor: string | null;
}): ChatListAnswer {
  return {
    chats: page.items.map((chat) => ({
      id: chat.id,
      title: chat.title,
      revision: chat.revision,
      createdAt: chat.createdAt,
      updatedAt: chat.updatedAt,
    })),
    nextCursor: page.nextCursor,
  };
}

/** The answer of `GET /api/search`. */
export function searchAnswer(page: {
  readonly items: readonly SearchHit[];
  readonly nextCursor: string | null;
  readonly failedChats?: SearchAnswer['failedChats'];
}): SearchAnswer {
  return {
    hits: page.items.map((hit) => ({
      chatId: hit.chatId,
      messageId: hit.messageId,
      role: hit.role,
      sequence: hit.sequence,
      score: hit.score,
      snippet: hit.snippet,
      branches: hit.branches,
    })),
    nextCursor: page.nextCursor,
    failedChats: page.failedChats ?? [],
  };
}
