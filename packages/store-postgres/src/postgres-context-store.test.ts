import { StoreError, ValidationError } from '@ctxgraph/fragments-core';
import postgres from 'postgres';
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

function freshSchema(): string {
  const schema = randomSchema();
  schemas.push(schema);
  return schema;
}

describe('PostgresContextStore construction', () => {
  it.each([
    [
      'a schema with a quote',
      { connectionString: 'postgres://x', schema: 'a"b' },
      'schema expected letters',
    ],
    [
      'a schema starting with a digit',
      { connectionString: 'postgres://x', schema: '1a' },
      'schema expected letters',
    ],
    [
      'a prefix with a dash',
      { connectionString: 'postgres://x', tablePrefix: 'a-' },
      'tablePrefix expected',
    ],
    [
      'both sql and a connection string',
      { connectionString: 'postgres://x', sql: postgres('postgres://x') },
      'either sql',
    ],
    ['sql that is not a client', { sql: {} as never }, 'sql must be a postgres.js client'],
    [
      'connection options with a given client',
      { sql: postgres('postgres://x'), connection: { max: 1 } },
      'connection options apply to a pool the store opens',
    ],
    ['no way to reach the database', {}, 'give sql'],
    [
      'an empty connection string',
      { connectionString: '' },
      'connectionString must be a non-empty string',
    ],
    [
      'migrate not a boolean',
      { connectionString: 'postgres://x', migrate: 'yes' as never },
      'migrate must be a boolean',
    ],
    [
      'a grace period for ended replies under 30 s',
      { connectionString: 'postgres://x', endedReplyGraceMs: 1000 },
      'endedReplyGraceMs expected an integer of milliseconds from 30000 to 86400000, received 1000',
    ],
  ])('refuses %s with ValidationError', (_label, options, message) => {
    expect(() => new PostgresContextStore(options)).toThrow(ValidationError);
    expect(() => new PostgresContextStore(options)).toThrow(message);
  });

  it('declares the v1 contract, persistence, multi-process safety, append, forkBranch, the context lane, search, retention and live replies', async () => {
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: freshSchema(),
    });
    expect(store.specificationVersion).toBe('v1');
    expect(store.capabilities).toEqual({
      persistent: true,
      multiProcess: true,
      search: true,
      searchPrefix: true,
      retention: true,
      liveReplies: true,
    });
    expect(store.schema).toMatch(/^t_/);
    expect(store.tablePrefix).toBe('ctxgraph_');
    await store.close();
  });

  it('accepts a bare connection string (schema public by default) and serializes without the URL', async () => {
    const store = new PostgresContextStore(databaseUrl());
    expect(store.schema).toBe('public');
    const json = JSON.stringify(store);
    expect(JSON.parse(json)).toEqual({
      store: 'PostgresContextStore',
      schema: 'public',
      tablePrefix: 'ctxgraph_',
      ownsClient: true,
      closed: false,
    });
    expect(json).not.toContain(databaseUrl());
    await store.close();
    expect(store.toJSON().closed).toBe(true);
  });

  it('uses a shared client without closing it, and respects its prepare: false (PgBouncer transaction mode)', async () => {
    const client = postgres(databaseUrl(), { max: 2, prepare: false, onnotice: () => {} });
    try {
      const store = new PostgresContextStore({ sql: client, schema: freshSchema() });
      expect(store.toJSON().ownsClient).toBe(false);
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [textNode('a'), textNode('b')],
      });
      expect(
        (await store.getChain({ chatId: 'c', headMessageId: 'b' })).nodes.map((node) => node.id),
      ).toEqual(['a', 'b']);
      await store.close();
      // The app's client is still open and usable.
      const rows = await client`SELECT 1 AS one`;
      expect(rows[0]?.one).toBe(1);
      // No named prepared statements were created on the server by the store.
      const prepared = await client`SELECT count(*)::int AS n FROM pg_prepared_statements`;
      expect(prepared[0]?.n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('refuses calls after close() with StoreError; close() and asyncDispose can both run', async () => {
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: freshSchema(),
    });
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store[Symbol.asyncDispose]();
    await store.close();
    const error = await store.getChat('c').catch((caught: unknown) => caught);
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('getChat(chatId): this PostgresContextStore is closed.');
    await expect(store.migrate()).rejects.toThrow(
      'migrate(): this PostgresContextStore is closed.',
    );
  });

  it('keeps message JSON byte for byte (key order, unicode) and metadata key order', async () => {
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: freshSchema(),
    });
    try {
      const metadata = { zeta: 1, alpha: { y: 2, b: 3 }, 'ünï 🎉': 'x' };
      await store.openChat({ chatId: 'c', userId: 'u', metadata });
      const message = {
        role: 'assistant',
        id: 'm',
        parts: [{ text: 'é "quoted" \\ 🎉', type: 'text' }],
        metadata: { z: 1, a: 2 },
      };
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'm', message }],
      });
      const stored = await store.getMessage({ chatId: 'c', messageId: 'm' });
      expect(JSON.stringify(stored?.message)).toBe(JSON.stringify(message));
      expect(JSON.stringify((await store.getChat('c'))?.metadata)).toBe(JSON.stringify(metadata));
    } finally {
      await store.close();
    }
  });

  it('getChain reads a chain in one query: only one statement reaches the server', async () => {
    const schema = freshSchema();
    const statements: string[] = [];
    const client = postgres(databaseUrl(), {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query) => statements.push(query),
    });
    const store = new PostgresContextStore({ sql: client, schema });
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      const ids = Array.from({ length: 50 }, (_, index) => `m${index}`);
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: ids.map((id) => textNode(id)),
      });
      statements.length = 0;
      const page = await store.getChain({
        chatId: 'c',
        headMessageId: 'm49',
        until: 'm9',
        limit: 30,
      });
      expect(statements).toHaveLength(1);
      expect(page.nodes.map((node) => node.id)).toEqual(ids.slice(20));
      expect(page.nextCursor).toBe('m19');
      statements.length = 0;
      const commit = await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: 'm49',
        messages: [textNode('n1'), textNode('n2', 'reply', 'assistant')],
      });
      expect(statements).toHaveLength(1);
      expect(commit.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
        ['n1', 'm49', 51],
        ['n2', 'n1', 52],
      ]);
    } finally {
      await store.close();
      await client.end();
    }
  });
});
