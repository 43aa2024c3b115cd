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

/** The ids of the messages a search of chat `c` finds, best first. */
async function find(store: SqliteContextStore, query: string): Promise<string[] | undefined> {
  return (await store.searchMessages?.({ userId: 'u', chatId: 'c', query }))?.items.map(
    (hit) => hit.messageId,
  );
}

/** Commits `messages` to the main branch of chat `c`, after `head`. */
function save(
  store: SqliteContextStore,
  head: string | null,
  ...messages: ReturnType<typeof entry>[]
) {
  return store.commit({ chatId: 'c', branch: 'main', expectedHeadId: head, messages });
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
  it('a save indexes nothing until a search; then the first search indexes the chat and later saves index with the write', async () => {
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
    // The chat is searched through this store: the save indexed its message in its own commit.
    expect(indexRows(path)).toBe(3);
    expect(await find('third')).toEqual(['m3']);
    expect(indexRows(path)).toBe(3);
  });

  it('a chat nobody searched pays nothing for search: no index rows, no marks', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    await store.openChat({ chatId: 'quiet', userId: 'v' });
    await store.openChat({ chatId: 'searched', userId: 'u' });
    await store.commit({
      chatId: 'searched',
      branch: 'main',
      expectedHeadId: null,
      messages: [entry('s1', 'seen')],
    });
    await store.searchMessages?.({ userId: 'u', chatId: 'searched', query: 'seen' });
    await store.commit({
      chatId: 'quiet',
      branch: 'main',
      expectedHeadId: null,
      messages: [entry('q1', 'unseen')],
    });
    await store.commit({
      chatId: 'quiet',
      branch: 'main',
      expectedHeadId: 'q1',
      messages: [entry('q2', 'unseen')],
    });
    const database = new Database(path, { readonly: true });
    try {
      expect(database.prepare('SELECT chat_id FROM ctxgraph_search_state').pluck().all()).toEqual([
        'searched',
      ]);
    } finally {
      database.close();
    }
    expect(indexRows(path)).toBe(1);
  });

  it('a user who searched gets the chats they open afterwards indexed from the first save; chats saved before, and other users’ chats, wait for a search', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    const commit = (chatId: string, head: string | null, ...messages: ReturnType<typeof entry>[]) =>
      store.commit({ chatId, branch: 'main', expectedHeadId: head, messages });
    // Ada's chat saved before she ever searched, then her first search (of another chat).
    await store.openChat({ chatId: 'old', userId: 'ada' });
    await commit('old', null, entry('o1', 'an older okapi'));
    await store.openChat({ chatId: 'first', userId: 'ada' });
    await commit('first', null, entry('f1', 'first words'));
    await store.searchMessages?.({ userId: 'ada', chatId: 'first', query: 'first' });
    expect(indexRows(path)).toBe(1);
    // Afterwards: a new chat of hers, the old one reopened, and a chat of Bob's (who never searched).
    await store.openChat({ chatId: 'new', userId: 'ada' });
    await store.openChat({ chatId: 'old', userId: 'ada' });
    await store.openChat({ chatId: 'bobs', userId: 'bob' });
    await commit('new', null, entry('n1', 'a new okapi'), entry('n2', 'no animal'));
    await commit('old', 'o1', entry('o2', 'the older okapi again'));
    await commit('bobs', null, entry('b1', 'okapi'));
    // Only the new chat was indexed, with its save: the old one has messages the index lacks.
    const marks = () => {
      const database = new Database(path, { readonly: true });
      try {
        return database
          .prepare('SELECT chat_id FROM ctxgraph_search_state ORDER BY chat_id')
          .pluck()
          .all();
      } finally {
        database.close();
      }
    };
    expect(marks()).toEqual(['first', 'new']);
    expect(indexRows(path)).toBe(3);
    await commit('new', 'n2', entry('n3', 'okapi three'));
    expect(indexRows(path)).toBe(4);
    // Her search of all her chats catches the old one up and finds every okapi of hers.
    const okapis = async (on: SqliteContextStore) =>
      (await on.searchMessages?.({ userId: 'ada', query: 'okapi' }))?.items
        .map((hit) => hit.messageId)
        .sort();
    expect(await okapis(store)).toEqual(['n1', 'n3', 'o1', 'o2']);
    expect(marks()).toEqual(['first', 'new', 'old']);
    // A fresh store on the file (nothing known of this process) finds the same.
    await using fresh = new SqliteContextStore(path);
    expect(await okapis(fresh)).toEqual(['n1', 'n3', 'o1', 'o2']);
  });

  it('another connection’s save to a searched chat indexes with its write too: the marks are in the file, not in the process', async () => {
    const path = temp.file();
    await using mine = new SqliteContextStore(path);
    await using other = new SqliteContextStore(path);
    await mine.openChat({ chatId: 'c', userId: 'u' });
    await save(mine, null, entry('m1', 'alpha'));
    expect(await find(mine, 'alpha')).toEqual(['m1']);
    // Another process saves: it never searched, but the chat's index is current.
    await save(other, 'm1', entry('m2', 'alpha beta'));
    expect(indexRows(path)).toBe(2);
    expect(await find(mine, 'beta')).toEqual(['m2']);
    expect(indexRows(path)).toBe(2);
  });

  it('a save that finds the index behind (a writer that does not index with its saves, as an older version of this store mid-upgrade) leaves it to the search, which misses nothing', async () => {
    const path = temp.file();
    await using mine = new SqliteContextStore(path);
    await mine.openChat({ chatId: 'c', userId: 'u' });
    await save(mine, null, entry('m1', 'alpha'));
    expect(await find(mine, 'alpha')).toEqual(['m1']);
    // The other writer replaces m1 and adds m2 without touching the index: the marks are now
    // behind the chat's revision.
    const other = new Database(path);
    try {
      other
        .transaction(() => {
          const version =
            (other
              .prepare("SELECT version FROM ctxgraph_chats WHERE id = 'c'")
              .pluck()
              .get() as number) + 1;
          other
            .prepare(
              "UPDATE ctxgraph_messages SET payload = ?, rewritten_at = ? WHERE chat_id = 'c' AND id = 'm1'",
            )
            .run(JSON.stringify(textMessage('m1', 'alpha delta')), version);
          other
            .prepare(
              "INSERT INTO ctxgraph_messages (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at) VALUES ('c', 'm2', 'm1', 2, 'user', ?, 0, 0)",
            )
            .run(JSON.stringify(textMessage('m2', 'alpha beta')));
          other
            .prepare("UPDATE ctxgraph_branches SET head_message_id = 'm2' WHERE chat_id = 'c'")
            .run();
          other
            .prepare("UPDATE ctxgraph_chats SET version = ?, rewritten_at = ? WHERE id = 'c'")
            .run(version, version);
        })
        .immediate();
    } finally {
      other.close();
    }
    // This store saves again: it must not move the marks past m2, which it did not index.
    await save(mine, 'm2', entry('m3', 'alpha gamma'));
    expect(indexRows(path)).toBe(1);
    expect(await find(mine, 'alpha')).toEqual(['m1', 'm2', 'm3']);
    expect(await find(mine, 'beta')).toEqual(['m2']);
    expect(await find(mine, 'delta')).toEqual(['m1']);
    expect(indexRows(path)).toBe(3);
    // A fresh store on the file (nothing known of this process) finds the same.
    await using fresh = new SqliteContextStore(path);
    expect(await find(fresh, 'alpha')).toEqual(['m1', 'm2', 'm3']);
    // Current again: the next save indexes with the write, a replaced message included.
    await save(mine, 'm3', entry('m3', 'alpha epsilon'), entry('m4', 'alpha zeta'));
    expect(indexRows(path)).toBe(4);
    const database = new Database(path, { readonly: true });
    try {
      // The marks hold the version of that save: nothing is left to catch up.
      expect(
        database
          .prepare(
            "SELECT s.indexed_version = c.version FROM ctxgraph_search_state s JOIN ctxgraph_chats c ON c.id = s.chat_id WHERE c.id = 'c'",
          )
          .pluck()
          .get(),
      ).toBe(1);
    } finally {
      database.close();
    }
    expect(await find(fresh, 'gamma')).toEqual([]);
    expect(await find(fresh, 'epsilon')).toEqual(['m3']);
    expect(indexRows(path)).toBe(4);
  });

  it('a save that replaces a message of a searched chat leaves no old words in the index', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await save(store, null, entry('m1', 'before'));
    expect(await find(store, 'before')).toEqual(['m1']);
    await save(store, 'm1', entry('m1', 'after'), entry('m2', 'after too'));
    expect(await find(store, 'before')).toEqual([]);
    expect(await find(store, 'after')).toEqual(['m1', 'm2']);
    await save(store, 'm2', entry('m3', 'after three'));
    expect(await find(store, 'after')).toEqual(['m1', 'm2', 'm3']);
    expect(indexRows(path)).toBe(3);
  });

  it('a save rolled back by a refusal leaves the index as it was', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await save(store, null, entry('m1', 'kept'));
    await store.searchMessages?.({ userId: 'u', chatId: 'c', query: 'kept' });
    const fork = await store.forkBranch?.({ chatId: 'c', from: 'main', headMessageId: 'm1' });
    await store.commit({
      chatId: 'c',
      branch: fork?.name ?? 'missing',
      expectedHeadId: 'm1',
      messages: [entry('side', 'elsewhere')],
    });
    // `side` is on another branch: replacing it from main is refused and the write rolls back.
    await expect(
      store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: 'm1',
        messages: [entry('new', 'lost words'), entry('side', 'moved')],
      }),
    ).rejects.toThrow(/side/);
    const hits = await store.searchMessages?.({ userId: 'u', chatId: 'c', query: 'lost' });
    expect(hits?.items).toEqual([]);
    expect(
      (await store.searchMessages?.({ userId: 'u', chatId: 'c', query: 'elsewhere' }))?.items.map(
        (hit) => hit.messageId,
      ),
    ).toEqual(['side']);
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
