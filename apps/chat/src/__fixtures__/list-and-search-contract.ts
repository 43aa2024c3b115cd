// The chat list and search routes' contract, checked the same way against the Node server and
// the Worker (start:workers): the same requests, the same answers. Each run uses chat ids and a
// search word of its own, so other tests' chats (the app has one user) never change the outcome.
import { expect } from 'vitest';
import type { ChatListAnswer, SearchAnswer } from '../server/list-routes';
import { NodeChat } from './chat-test-kit';

async function json<T>(url: string, status = 200): Promise<T> {
  const response = await fetch(url);
  expect(response.status, `${url}: ${response.status}`).toBe(status);
  return (await response.json()) as T;
}

/** Two chats, the list and search over them, pages, bad requests and a delete. */
export async function checkChatListAndSearch(base: string): Promise<void> {
  const suffix = Math.random().toString(36).slice(2, 10);
  const word = `zq${suffix.replace(/[^a-z]/g, 'k')}`;
  const first = `list-a-${suffix}`;
  const second = `list-b-${suffix}`;
  const chat = new NodeChat(base, first);
  await chat.sendMessage({ text: `about ${word} and rain` });
  expect(chat.currentError).toBeUndefined();
  const other = new NodeChat(base, second);
  await other.sendMessage({ text: `${word} ${word} twice` });
  expect(other.currentError).toBeUndefined();

  // The list: the most recently written first, each chat's revision as its store has it.
  const listed = await json<ChatListAnswer>(`${base}/api/chats?limit=100`);
  const ours = listed.chats.filter((entry) => entry.id === first || entry.id === second);
  expect(ours.map((entry) => entry.id)).toEqual([second, first]);
  for (const entry of ours) {
    expect(entry.revision).toBeGreaterThanOrEqual(2);
    expect(entry.title).toBeNull();
    expect(entry.updatedAt).toBeGreaterThanOrEqual(entry.createdAt);
  }
  // A page at a time, with the cursor.
  const one = await json<ChatListAnswer>(`${base}/api/chats?limit=1`);
  expect(one.chats).toHaveLength(1);
  expect(one.nextCursor).toEqual(expect.any(String));
  const next = await json<ChatListAnswer>(
    `${base}/api/chats?limit=1&cursor=${encodeURIComponent(one.nextCursor as string)}`,
  );
  expect(next.chats[0]?.id).not.toBe(one.chats[0]?.id);

  // Search across the user's chats: both questions and both replies, best first.
  const found = await json<SearchAnswer>(`${base}/api/search?q=${word}`);
  expect(found.failedChats).toEqual([]);
  expect(found.nextCursor).toBeNull();
  expect(found.hits).toHaveLength(4);
  expect(new Set(found.hits.map((hit) => hit.chatId))).toEqual(new Set([first, second]));
  expect(found.hits[0]).toMatchObject({
    chatId: second,
    role: 'user',
    snippet: `${word} ${word} twice`,
  });
  for (const hit of found.hits) expect(hit.branches).toEqual(['main']);
  // Page by page: the same hits in the same order.
  const paged: SearchAnswer['hits'][number][] = [];
  let cursor: string | null = null;
  do {
    const page: SearchAnswer = await json<SearchAnswer>(
      `${base}/api/search?q=${word}&limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
    );
    paged.push(...page.hits);
    cursor = page.nextCursor;
  } while (cursor !== null);
  expect(paged).toEqual(found.hits);
  // As you type: the word's first letters find the same messages.
  const typed = await json<SearchAnswer>(`${base}/api/search?q=${word.slice(0, -1)}&prefix=1`);
  expect(typed.hits.map((hit) => hit.messageId)).toEqual(found.hits.map((hit) => hit.messageId));

  // Bad requests: 400 with a JSON error naming what was wrong, as the chat routes answer.
  for (const [query, field] of [
    ['', 'q'],
    ['?q=AND%20OR', 'query'],
    [`?q=${word}&limit=many`, 'limit'],
    [`?q=${word}&limit=1000`, 'limit'],
    [`?q=${word}&prefix=yes`, 'prefix'],
    [`?q=${word}&cursor=1:2:x:zz`, 'cursor'],
  ] as const) {
    const refused = await json<{ error: string }>(`${base}/api/search${query}`, 400);
    expect(refused.error).toContain(field);
  }
  const badList = await json<{ error: string }>(`${base}/api/chats?cursor=nonsense`, 400);
  expect(badList.error).toContain('cursor');

  // Another method: a 405 with `Allow`, JSON.
  for (const path of ['/api/chats', '/api/search?q=x']) {
    const posted = await fetch(`${base}${path}`, { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
    expect(await posted.json()).toEqual({ error: expect.stringContaining('GET') });
  }

  // A deleted chat leaves the list and the search.
  expect((await fetch(`${base}/api/chat/${first}`, { method: 'DELETE' })).status).toBe(204);
  const after = await json<ChatListAnswer>(`${base}/api/chats?limit=100`);
  expect(after.chats.map((entry) => entry.id)).not.toContain(first);
  expect(after.chats.map((entry) => entry.id)).toContain(second);
  const left = await json<SearchAnswer>(`${base}/api/search?q=${word}`);
  expect(new Set(left.hits.map((hit) => hit.chatId))).toEqual(new Set([second]));
}
