import { StoreError } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory, textMessage } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('search-index');
afterAll(() => temp.remove());

function entry(id: string, text: string) {
  return { id, message: textMessage(id, text) };
}

function indexRows(path: string): number {
  const database = new Database(path, { readonly: true });
  try {
    return database.prepare('SELECT count(*) FROM ctxgraph_message_search').pluck().get() as number;
  } finally {
    database.close();
  }
}

describe('the lazy search index (SQLite)', () => {
  it('a save indexes nothing; the first search indexes the chat, later ones only what changed', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [entry('m1', 'an aardvark'), entry('m2', 'a second aardvark')],
    });
    expect(indexRows(path)).toBe(0);
    const find = async (query: string) =>
      (await store.searchMessages?.({ userId: 'u', query }))?.items.map((hit) => hit.messageId);
    expect(await find('aardvark')).toEqual(['m1', 'm2']);
    expect(indexRows(path)).toBe(2);
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: 'm2',
      messages: [entry('m3', 'a third aardvark')],
    });
    expect(indexRows(path)).toBe(2);
    expect(await find('third')).toEqual(['m3']);
    expect(indexRows(path)).toBe(3);
  });

  it('finds what another connection (as another process would) saved or replaced since, never its old text', async () => {
    const path = temp.file();
    await using searcher = new SqliteContextStore(path);
    await using writer = new SqliteContextStore(path);
    await writer.openChat({ chatId: 'c', userId: 'u' });
    await writer.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [entry('m1', 'the old wording')],
    });
    const find = async (query: string) =>
      (await searcher.searchMessages?.({ userId: 'u', chatId: 'c', query }))?.items.map(
        (hit) => hit.messageId,
      );
    expect(await find('old')).toEqual(['m1']);
    await writer.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: 'm1',
      messages: [entry('m1', 'the new wording'), entry('m2', 'more new words')],
    });
    expect(await find('old')).toEqual([]);
    expect(await find('new')).toEqual(['m1', 'm2']);
  });

  it('a read-only store refuses to search a chat whose index is behind, and searches once it is current', async () => {
    const path = temp.file();
    {
      await using store = new SqliteContextStore(path);
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [entry('m1', 'a lemur')],
      });
    }
    {
      await using reader = new SqliteContextStore({ path, readonly: true });
      const error = await reader
        .searchMessages?.({ userId: 'u', query: 'lemur' })
        .catch((caught: unknown) => caught);
      expect(StoreError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('read-only');
    }
    {
      await using store = new SqliteContextStore(path);
      await store.searchMessages?.({ userId: 'u', query: 'lemur' });
    }
    await using reader = new SqliteContextStore({ path, readonly: true });
    const page = await reader.searchMessages?.({ userId: 'u', query: 'lemur' });
    expect(page?.items.map((hit) => hit.messageId)).toEqual(['m1']);
  });
});
