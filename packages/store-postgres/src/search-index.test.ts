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

async function indexRows(schema: string): Promise<number> {
  const rows = await admin.unsafe(`SELECT count(*) AS n FROM "${schema}".ctxgraph_search_words`);
  return Number(rows[0]?.n);
}

describe('the lazy search index (PostgreSQL)', () => {
  it('a save indexes nothing; the first search indexes the chat, later ones only what changed', async () => {
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
    expect(await indexRows(schema)).toBe(2);
    expect(await find('third')).toEqual(['m3']);
    expect(await indexRows(schema)).toBe(3);
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
