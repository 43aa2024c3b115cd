import { afterAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  databaseUrl,
  dropSchema,
  randomSchema,
  textNode,
} from './__fixtures__/test-database';
import { PostgresContextStore } from './postgres-context-store';

const admin = adminClient();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

function storeOn(schema: string): PostgresContextStore {
  return new PostgresContextStore({
    connectionString: databaseUrl(),
    schema,
    connection: { max: 3 },
  });
}

function freshSchema(): string {
  const schema = randomSchema();
  schemas.push(schema);
  return schema;
}

/** The ids of the messages a search of chat `c` finds, best first. */
async function find(store: PostgresContextStore, query: string): Promise<string[]> {
  return (await store.searchMessages({ userId: 'u', chatId: 'c', query })).items.map(
    (hit) => hit.messageId,
  );
}

/** Commits `messages` to the main branch of chat `c`, after `head`. */
function save(
  store: PostgresContextStore,
  head: string | null,
  ...messages: ReturnType<typeof textNode>[]
) {
  return store.commit({ chatId: 'c', branch: 'main', expectedHeadId: head, messages });
}

/** Chat `c` with one message, `m1` ("alpha"), searched through `store`: its index is current. */
async function searchedChat(store: PostgresContextStore): Promise<void> {
  await store.openChat({ chatId: 'c', userId: 'u' });
  await save(store, null, textNode('m1', 'alpha'));
  expect(await find(store, 'alpha')).toEqual(['m1']);
}

async function indexRows(schema: string): Promise<number> {
  const rows = await admin.unsafe(`SELECT count(*) AS n FROM "${schema}".ctxgraph_search_words`);
  return Number(rows[0]?.n);
}

describe('the lazy search index (PostgreSQL)', () => {
  it('a save indexes nothing until a search; then the first search indexes the chat and later saves index with the write', async () => {
    const schema = freshSchema();
    await using store = storeOn(schema);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [textNode('m1', 'an aardvark'), textNode('m2', 'a second aardvark')],
    });
    expect(await indexRows(schema)).toBe(0);
    const find = async (query: string) =>
      (await store.searchMessages({ userId: 'u', query })).items.map((hit) => hit.messageId);
    expect(await find('aardvark')).toEqual(['m1', 'm2']);
    expect(await indexRows(schema)).toBe(2);
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: 'm2',
      messages: [textNode('m3', 'a third aardvark')],
    });
    // The chat is searched through this store: the save indexed its message in its own statement.
    expect(await indexRows(schema)).toBe(3);
    expect(await find('third')).toEqual(['m3']);
    expect(await indexRows(schema)).toBe(3);
  });

  it('a chat nobody searched pays nothing for search: no index rows, no marks', async () => {
    const schema = freshSchema();
    await using store = storeOn(schema);
    await store.openChat({ chatId: 'quiet', userId: 'u' });
    await store.openChat({ chatId: 'searched', userId: 'u' });
    await store.commit({
      chatId: 'searched',
      branch: 'main',
      expectedHeadId: null,
      messages: [textNode('s1', 'seen')],
    });
    await store.searchMessages({ userId: 'u', chatId: 'searched', query: 'seen' });
    await store.commit({
      chatId: 'quiet',
      branch: 'main',
      expectedHeadId: null,
      messages: [textNode('q1', 'unseen')],
    });
    await store.append({ chatId: 'quiet', branch: 'main', messages: [textNode('q2', 'unseen')] });
    const marks = await admin.unsafe(`SELECT chat_id FROM "${schema}".ctxgraph_search_state`);
    expect(marks.map((row) => row.chat_id)).toEqual(['searched']);
    expect(await indexRows(schema)).toBe(1);
  });

  it('a user who searched gets the chats they open afterwards indexed from the first save; chats saved before, and other users’ chats, wait for a search', async () => {
    const schema = freshSchema();
    await using store = storeOn(schema);
    const commit = (
      chatId: string,
      head: string | null,
      ...messages: ReturnType<typeof textNode>[]
    ) => store.commit({ chatId, branch: 'main', expectedHeadId: head, messages });
    // Ada's chat saved before she ever searched, then her first search (of another chat).
    await store.openChat({ chatId: 'old', userId: 'ada' });
    await commit('old', null, textNode('o1', 'an older okapi'));
    await store.openChat({ chatId: 'first', userId: 'ada' });
    await commit('first', null, textNode('f1', 'first words'));
    await store.searchMessages({ userId: 'ada', chatId: 'first', query: 'first' });
    expect(await indexRows(schema)).toBe(1);
    // Afterwards: a new chat of hers, the old one reopened, and a chat of Bob's (who never searched).
    await store.openChat({ chatId: 'new', userId: 'ada' });
    await store.openChat({ chatId: 'old', userId: 'ada' });
    await store.openChat({ chatId: 'bobs', userId: 'bob' });
    await commit('new', null, textNode('n1', 'a new okapi'), textNode('n2', 'no animal'));
    await commit('old', 'o1', textNode('o2', 'the older okapi again'));
    await commit('bobs', null, textNode('b1', 'okapi'));
    // Only the new chat was indexed, with its save: the old one has messages the index lacks.
    const marks = async () =>
      (
        await admin.unsafe(
          `SELECT chat_id, indexed_version, indexed_sequence FROM "${schema}".ctxgraph_search_state ORDER BY chat_id`,
        )
      ).map((row) => `${row.chat_id}@${row.indexed_version}/${row.indexed_sequence}`);
    expect(await marks()).toEqual(['first@1/1', 'new@1/2']);
    expect(await indexRows(schema)).toBe(3);
    await commit('new', 'n2', textNode('n3', 'okapi three'));
    expect(await indexRows(schema)).toBe(4);
    expect(await marks()).toEqual(['first@1/1', 'new@2/3']);
    // Her search of all her chats catches the old one up and finds every okapi of hers.
    const okapis = async (on: PostgresContextStore) =>
      (await on.searchMessages({ userId: 'ada', query: 'okapi' })).items
        .map((hit) => hit.messageId)
        .sort();
    expect(await okapis(store)).toEqual(['n1', 'n3', 'o1', 'o2']);
    expect(await marks()).toEqual(['first@1/1', 'new@2/3', 'old@2/2']);
    // A fresh store on the schema (nothing known of this process) finds the same.
    await using fresh = storeOn(schema);
    expect(await okapis(fresh)).toEqual(['n1', 'n3', 'o1', 'o2']);
  });

  it('a save that finds the index behind (another server wrote since) leaves it to the search, which misses nothing', async () => {
    const schema = freshSchema();
    await using mine = storeOn(schema);
    await using other = storeOn(schema);
    await searchedChat(mine);
    await save(other, 'm1', textNode('m2', 'alpha beta'));
    // This store saves again: the marks are behind (m2), so it must not move them past m2.
    await mine.append({ chatId: 'c', branch: 'main', messages: [textNode('m3', 'alpha gamma')] });
    expect(await indexRows(schema)).toBe(1);
    expect(await find(mine, 'alpha')).toEqual(['m1', 'm2', 'm3']);
    expect(await find(mine, 'beta')).toEqual(['m2']);
    expect(await indexRows(schema)).toBe(3);
    // Indexed with the write again, now that the index is current.
    await mine.append({ chatId: 'c', branch: 'main', messages: [textNode('m4', 'alpha delta')] });
    expect(await indexRows(schema)).toBe(4);
    await using fresh = storeOn(schema);
    expect(await find(fresh, 'alpha')).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(await find(fresh, 'delta')).toEqual(['m4']);
  });

  it('another server learns from its first save that a chat is searched: its later saves index with the write', async () => {
    const schema = freshSchema();
    await using mine = storeOn(schema);
    await using other = storeOn(schema);
    await searchedChat(mine);
    // The other server never searched: its first save brings no words, and finds the marks.
    await save(other, 'm1', textNode('m2', 'alpha beta'));
    expect(await indexRows(schema)).toBe(1);
    expect(await find(mine, 'beta')).toEqual(['m2']);
    // From then on it brings the words, and the write indexes them while the index is current.
    await save(other, 'm2', textNode('m3', 'alpha gamma'));
    await save(other, 'm3', textNode('m4', 'alpha delta'));
    expect(await indexRows(schema)).toBe(4);
    expect(await find(mine, 'delta')).toEqual(['m4']);
    expect(await indexRows(schema)).toBe(4);
    // A chat with no marks teaches it the opposite: no words for its saves.
    await other.openChat({ chatId: 'quiet', userId: 'v' });
    await other.commit({
      chatId: 'quiet',
      branch: 'main',
      expectedHeadId: null,
      messages: [textNode('q1', 'quiet')],
    });
    await other.commit({
      chatId: 'quiet',
      branch: 'main',
      expectedHeadId: 'q1',
      messages: [textNode('q2', 'quiet')],
    });
    expect(await indexRows(schema)).toBe(4);
  });

  it('a save that replaces a message of a searched chat leaves no old words in the index', async () => {
    const schema = freshSchema();
    await using store = storeOn(schema);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await save(store, null, textNode('m1', 'before'));
    expect(await find(store, 'before')).toEqual(['m1']);
    await save(store, 'm1', textNode('m1', 'after'), textNode('m2', 'after too'));
    // Indexed by the save itself, the replaced message's words swapped: the marks are current,
    // and its words carry its new stamp.
    const state = await admin.unsafe(
      `SELECT s.indexed_version = c.version AS current,
         (SELECT w.words FROM "${schema}".ctxgraph_search_words w WHERE w.message_id = 'm1') AS words
       FROM "${schema}".ctxgraph_search_state s JOIN "${schema}".ctxgraph_chats c ON c.chat_id = s.chat_id`,
    );
    expect(state.map((row) => [row.current, row.words])).toEqual([[true, ['after']]]);
    expect(await find(store, 'before')).toEqual([]);
    expect(await find(store, 'after')).toEqual(['m1', 'm2']);
    await save(store, 'm2', textNode('m3', 'after three'));
    expect(await indexRows(schema)).toBe(3);
    expect(await find(store, 'after')).toEqual(['m1', 'm2', 'm3']);
  });

  it('a save refused (the head moved) indexes nothing', async () => {
    const schema = freshSchema();
    await using store = storeOn(schema);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await save(store, null, textNode('m1', 'kept'));
    await store.searchMessages({ userId: 'u', chatId: 'c', query: 'kept' });
    await expect(
      store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: 'stale',
        messages: [textNode('m2', 'lost words')],
      }),
    ).rejects.toThrow(/head/i);
    expect(await indexRows(schema)).toBe(1);
    expect((await store.searchMessages({ userId: 'u', chatId: 'c', query: 'lost' })).items).toEqual(
      [],
    );
  });

  it('finds what another server saved or replaced meanwhile, never by its old text, with searches and writes racing', async () => {
    const schema = freshSchema();
    await using writer = storeOn(schema);
    await using searcher = storeOn(schema);
    await writer.openChat({ chatId: 'c', userId: 'u' });
    let head: string | null = null;
    const searches: Promise<unknown>[] = [];
    for (let turn = 0; turn < 20; turn += 1) {
      const id = `m${turn}`;
      await writer.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: head,
        messages: [textNode(id, `draft ${turn} of a bison`)],
      });
      head = id;
      // Replaced in place right away, while searches from the other server catch up.
      searches.push(searcher.searchMessages({ userId: 'u', chatId: 'c', query: 'bison' }));
      await writer.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: head,
        messages: [textNode(id, `final ${turn} of a yak`)],
      });
      searches.push(searcher.searchMessages({ userId: 'u', chatId: 'c', query: 'yak' }));
    }
    await Promise.all(searches);
    const all = async (query: string) =>
      (await searcher.searchMessages({ userId: 'u', chatId: 'c', query, limit: 100 })).items;
    expect(await all('bison')).toEqual([]);
    const yaks = await all('yak');
    expect(yaks.map((hit) => hit.messageId).sort()).toEqual(
      Array.from({ length: 20 }, (_, turn) => `m${turn}`).sort(),
    );
    for (const hit of yaks) expect(hit.snippet).toMatch(/^final \d+ of a yak$/);
  });
});
