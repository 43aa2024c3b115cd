import { env, runInDurableObject } from 'cloudflare:test';
import type { Page, SearchHit, SearchMessagesInput } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import type { TestChatObject } from '../__fixtures__/test-worker';
import type { DurableObjectContextStore } from '../durable-object-context-store';
import { searchUserChats } from './search-user-chats';

const chats = (env as unknown as { TEST_CHATS: DurableObjectNamespace<TestChatObject> }).TEST_CHATS;

const text = (id: string, words: string) => ({
  id,
  message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: words }] },
});

// Every chat in one store, so the store's own user-wide search is the reference the fan-out
// over per-chat searches must equal, page by page.
const CHATS: Record<string, string[]> = {
  alpha: ['the weather in paris', 'paris paris in spring', 'nothing here'],
  beta: ['weather report for paris', 'a long note about the weather and paris and more words'],
  gamma: ['paris', 'rain in paris today', 'weather'],
  delta: ['no match at all'],
};

async function withStore<T>(action: (store: DurableObjectContextStore) => Promise<T>): Promise<T> {
  return runInDurableObject(
    chats.get(chats.idFromName(`fan-out-${crypto.randomUUID()}`)),
    async (object) => {
      const store = object.stores[0] as DurableObjectContextStore;
      for (const [chatId, texts] of Object.entries(CHATS)) {
        const { branch } = await store.openChat({ chatId, userId: 'ada' });
        await store.append({
          chatId,
          branch: branch.name,
          messages: texts.map((words, index) => text(`${chatId}-${index}`, words)),
        });
      }
      await store.openChat({ chatId: 'eve-chat', userId: 'eve' });
      return action(store);
    },
  );
}

async function allPages(
  next: (cursor: string | undefined) => Promise<Page<SearchHit>>,
): Promise<SearchHit[][]> {
  const pages: SearchHit[][] = [];
  let cursor: string | undefined;
  do {
    const page = await next(cursor);
    pages.push([...page.items]);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

describe('searchUserChats: a user-wide search fanned out to one store per chat', () => {
  it('answers the pages one store holding every chat answers, cursors included', async () => {
    for (const prefix of [false, true]) {
      const query = prefix ? 'paris weat' : 'paris';
      const { reference, fanned } = await withStore(async (store) => {
        const reference = await allPages((cursor) =>
          store.searchMessages({
            userId: 'ada',
            query,
            prefix,
            limit: 2,
            ...(cursor === undefined ? {} : { cursor }),
          }),
        );
        const fanned = await allPages((cursor) =>
          searchUserChats({
            userId: 'ada',
            query,
            prefix,
            limit: 2,
            ...(cursor === undefined ? {} : { cursor }),
            chatIds: Object.keys(CHATS),
            searchChat: (_chatId, input) => store.searchMessages(input),
            concurrency: 2,
          }),
        );
        return { reference, fanned };
      });
      expect(reference.flat().length).toBeGreaterThan(2);
      expect(fanned).toEqual(reference);
    }
  });

  it('searches at most `concurrency` chats at once, and each chat in its own scope', async () => {
    const seen: SearchMessagesInput[] = [];
    let inFlight = 0;
    let most = 0;
    const page = await withStore((store) =>
      searchUserChats({
        userId: 'ada',
        query: 'weather',
        chatIds: Object.keys(CHATS),
        concurrency: 2,
        searchChat: async (_chatId, input) => {
          seen.push(input);
          inFlight += 1;
          most = Math.max(most, inFlight);
          // Let the other workers start before this one answers.
          for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
          try {
            return await store.searchMessages(input);
          } finally {
            inFlight -= 1;
          }
        },
      }),
    );
    expect(most).toBe(2);
    expect(seen.map((input) => input.chatId).sort()).toEqual(Object.keys(CHATS).sort());
    expect(page.items.map((hit) => hit.chatId)).not.toContain('delta');
    expect(page.failedChats).toEqual([]);
  });

  it('answers a partial page naming the chat that failed; a chat gone since is skipped', async () => {
    const page = await withStore((store) =>
      searchUserChats({
        userId: 'ada',
        query: 'paris',
        chatIds: [...Object.keys(CHATS), 'deleted-since'],
        searchChat: (chatId, input) =>
          chatId === 'beta'
            ? Promise.reject(new Error('Durable Object reset because its code was updated.'))
            : store.searchMessages(input),
      }),
    );
    expect(page.failedChats).toEqual([
      { chatId: 'beta', error: 'Durable Object reset because its code was updated.' },
    ]);
    expect(new Set(page.items.map((hit) => hit.chatId))).toEqual(new Set(['alpha', 'gamma']));
  });

  it('checks its input as searchMessages does, before any chat is asked', async () => {
    let asked = 0;
    const refuse = (input: Partial<Parameters<typeof searchUserChats>[0]>) =>
      searchUserChats({
        userId: 'ada',
        query: 'paris',
        chatIds: ['alpha'],
        searchChat: async () => {
          asked += 1;
          return { items: [], nextCursor: null };
        },
        ...input,
      }).then(
        () => 'answered',
        (error: Error) => error.name,
      );
    expect(await refuse({ query: '  ' })).toBe('ValidationError');
    expect(await refuse({ query: 'AND OR' })).toBe('ValidationError');
    expect(await refuse({ limit: 1000 })).toBe('ValidationError');
    expect(await refuse({ cursor: '1:2:alpha:zz' })).toBe('ValidationError');
    expect(await refuse({ userId: '' })).toBe('ValidationError');
    expect(await refuse({ concurrency: 0 })).toBe('RangeError');
    expect(asked).toBe(0);
  });
});
