import { ContextConflictError, StoreError } from '@ctxgraph/fragments-core';
import { describe, expect, it, vi } from 'vitest';
import { InMemoryContextStore } from './in-memory-context-store';

describe('InMemoryContextStore context lane', () => {
  it('moves the chat updatedAt (never back) but not its revision; listChats sees the write', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const store = new InMemoryContextStore();
      vi.setSystemTime(1_000);
      await store.openChat({ chatId: 'a', userId: 'u' });
      vi.setSystemTime(2_000);
      await store.openChat({ chatId: 'b', userId: 'u' });
      vi.setSystemTime(3_000);
      const saved = await store.saveContext({ chatId: 'a', fragments: ['x'] });
      expect(saved.updatedAt).toBe(3_000);
      const chat = await store.getChat('a');
      expect([chat?.updatedAt, chat?.revision]).toEqual([3_000, 0]);
      expect((await store.listChats({ userId: 'u' })).items.map((item) => item.id)).toEqual([
        'a',
        'b',
      ]);
      // The clock going back does not take updatedAt with it.
      vi.setSystemTime(500);
      const again = await store.saveContext({ chatId: 'a', fragments: ['y'] });
      expect(again.updatedAt).toBe(3_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('saves started in the same tick with one expected revision: the first call wins', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    const settled = await Promise.allSettled(
      ['first', 'second', 'third'].map((text) =>
        store.saveContext({ chatId: 'c', fragments: [text], expectedRevision: 0 }),
      ),
    );
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    const conflict = (settled[1] as PromiseRejectedResult).reason as ContextConflictError;
    expect(ContextConflictError.isInstance(conflict)).toBe(true);
    expect(conflict.message).toBe(
      'The context of chat "c" is at revision 1, not 0: another writer saved it first. Nothing was written; load it again and retry.',
    );
    expect((await store.getContext('c')).fragments).toEqual(['first']);
  });

  it('refuses getContext and saveContext once closed, and close() drops the lanes', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.saveContext({ chatId: 'c', fragments: ['x'] });
    await store.close();
    const error = await store.getContext('c').catch((caught: unknown) => caught);
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'getContext(chatId): this InMemoryContextStore is closed.',
    );
    await expect(store.saveContext({ chatId: 'c', fragments: [] })).rejects.toThrow(
      'saveContext(input): this InMemoryContextStore is closed.',
    );
  });
});
