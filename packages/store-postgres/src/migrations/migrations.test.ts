import { SchemaVersionError, ValidationError } from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, it } from 'vitest';
import { adminClient, databaseUrl, dropSchema, randomSchema } from '../__fixtures__/test-database';
import { PostgresContextStore } from '../postgres-context-store';
import { getMigrationSql, MIGRATIONS, SCHEMA_VERSION } from './migrations';

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

async function recordedVersions(schema: string, prefix = 'ctxgraph_'): Promise<number[]> {
  const rows = await admin.unsafe(
    `SELECT version FROM "${schema}"."${prefix}migrations" ORDER BY version`,
  );
  return rows.map((row) => Number(row.version));
}

async function tablesOf(schema: string): Promise<string[]> {
  const rows =
    await admin`SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`;
  return rows.map((row) => String(row.table_name));
}

describe('migrations', () => {
  it('version 3 keeps context lanes as json (never jsonb, which reorders keys), deleted with the chat', async () => {
    const schema = freshSchema();
    const store = new PostgresContextStore({ connectionString: databaseUrl(), schema });
    try {
      await store.migrate();
      const columns =
        await admin`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = 'ctxgraph_context_lanes' ORDER BY ordinal_position`;
      expect(columns.map((row) => [row.column_name, row.data_type])).toEqual([
        ['chat_id', 'text'],
        ['fragments', 'json'],
        ['revision', 'bigint'],
        ['updated_at', 'bigint'],
      ]);
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.saveContext({ chatId: 'c', fragments: [{ z: 1, a: 2 }] });
      const stored = await admin.unsafe(
        `SELECT fragments::text AS fragments FROM "${schema}".ctxgraph_context_lanes`,
      );
      expect(stored.map((row) => row.fragments)).toEqual(['[{"z":1,"a":2}]']);
      await store.deleteChat('c');
      expect(await admin.unsafe(`SELECT 1 FROM "${schema}".ctxgraph_context_lanes`)).toHaveLength(
        0,
      );
    } finally {
      await store.close();
    }
  });

  it('versions 4 and 5 make a version 3 database searchable under the one rule, indexed on the first search', async () => {
    const schema = freshSchema();
    const script = getMigrationSql({ schema });
    // The database as version 3 left it: the script up to the step that adds search, run as
    // psql would (one connection, its own BEGIN/COMMIT).
    const connection = await admin.reserve();
    try {
      await connection.unsafe(script.slice(0, script.indexOf('-- version 4')));
    } finally {
      connection.release();
    }
    expect(await recordedVersions(schema)).toEqual([1, 2, 3]);
    const message = (id: string, text: string) =>
      JSON.stringify({ id, role: 'user', parts: [{ type: 'text', text }, { type: 'step-start' }] });
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_chats (chat_id, user_id, active_branch, version, last_sequence, created_at, updated_at)
       VALUES ('old', 'u', 'main', 1, 2, 1, 1)`,
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_messages (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
       VALUES ('old', 'm1', NULL, 1, 'user', $1::text::json, 1, 1), ('old', 'm2', 'm1', 2, 'user', $2::text::json, 1, 1)`,
      [message('m1', 'Running with the wolves'), message('m2', 'ελληνικά και café')],
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_branches (chat_id, name, head_message_id, created_at, updated_at)
       VALUES ('old', 'main', 'm2', 1, 1)`,
    );
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      searchLanguage: 'english',
    });
    try {
      expect(await store.migrate()).toEqual({ from: 3, to: SCHEMA_VERSION });
      const count = async (table: string) =>
        Number((await admin.unsafe(`SELECT count(*) FROM "${schema}".${table}`))[0]?.count);
      expect(await count('ctxgraph_search_words')).toBe(0);
      const find = async (query: string) =>
        (await store.searchMessages({ userId: 'u', query })).items.map((hit) => hit.messageId);
      // The store kit's rule, whatever the searchLanguage: no stemming, diacritics folded.
      expect(await find('running wolves')).toEqual(['m1']);
      expect(await find('runs')).toEqual([]);
      expect(await find('cafe')).toEqual(['m2']);
      expect(await count('ctxgraph_search_words')).toBe(2);
      const hits = (
        await store.searchMessages({
          userId: 'u',
          chatId: 'old',
          branch: 'main',
          query: 'ελληνικά',
        })
      ).items;
      expect(hits.map((hit) => [hit.messageId, hit.branches, hit.snippet])).toEqual([
        ['m2', ['main'], 'ελληνικά και café'],
      ]);
      const indexes = await admin.unsafe(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%search%' ORDER BY 1`,
        [schema],
      );
      expect(
        indexes.map((row) => [row.indexname, String(row.indexdef).includes('USING gin (words)')]),
      ).toEqual([
        ['ctxgraph_search_state_pkey', false],
        ['ctxgraph_search_words_idx', true],
        ['ctxgraph_search_words_pkey', false],
      ]);
    } finally {
      await store.close();
    }
  });

  it('the engine-records step keeps every node of an earlier database, each without a record', async () => {
    const schema = freshSchema();
    const script = getMigrationSql({ schema });
    const step = MIGRATIONS.findIndex((migration) => migration.name === 'engine records') + 1;
    // The database as the step before left it, with a node whose record an earlier engine kept
    // in its metadata (the engine reads that itself; the store leaves the message as it is).
    const connection = await admin.reserve();
    try {
      await connection.unsafe(script.slice(0, script.indexOf(`-- version ${step}`)));
    } finally {
      connection.release();
    }
    expect(await recordedVersions(schema)).toEqual(
      Array.from({ length: step - 1 }, (_, index) => index + 1),
    );
    const legacy = {
      id: 'm1',
      role: 'assistant',
      parts: [{ type: 'text', text: 'hi' }],
      metadata: { ctxgraph: { usage: { modelId: 'm' } } },
    };
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_chats (chat_id, user_id, active_branch, version, last_sequence, created_at, updated_at)
       VALUES ('old', 'u', 'main', 1, 1, 1, 1)`,
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_messages (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
       VALUES ('old', 'm1', NULL, 1, 'assistant', $1::text::json, 1, 1)`,
      [JSON.stringify(legacy)],
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_branches (chat_id, name, head_message_id, created_at, updated_at)
       VALUES ('old', 'main', 'm1', 1, 1)`,
    );
    const store = new PostgresContextStore({ connectionString: databaseUrl(), schema });
    try {
      expect(await store.migrate()).toEqual({ from: step - 1, to: SCHEMA_VERSION });
      const node = await store.getMessage({ chatId: 'old', messageId: 'm1' });
      expect(node?.message).toEqual(legacy);
      expect(node?.engineRecord).toBeNull();
      const replaced = {
        id: 'm1',
        message: { id: 'm1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] },
        engineRecord: { usage: { z: 1, modelId: 'm' } },
      };
      await store.commit({
        chatId: 'old',
        branch: 'main',
        expectedHeadId: 'm1',
        messages: [replaced],
      });
      const chain = await store.getChain({ chatId: 'old', headMessageId: 'm1' });
      expect(JSON.stringify(chain.nodes[0]?.engineRecord)).toBe('{"usage":{"z":1,"modelId":"m"}}');
      expect(chain.nodes[0]?.message).toEqual(replaced.message);
      const columns = await admin.unsafe(
        `SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'ctxgraph_messages' AND column_name = 'engine_record'`,
        [schema],
      );
      expect(columns.map((row) => row.data_type)).toEqual(['json']);
    } finally {
      await store.close();
    }
  });

  it('the message-versions step indexes every node of an earlier database by its message id', async () => {
    const schema = freshSchema();
    const script = getMigrationSql({ schema });
    const step = MIGRATIONS.findIndex((migration) => migration.name === 'message versions') + 1;
    expect(step).toBe(7);
    const connection = await admin.reserve();
    try {
      await connection.unsafe(script.slice(0, script.indexOf(`-- version ${step}`)));
    } finally {
      connection.release();
    }
    expect(await recordedVersions(schema)).toEqual(
      Array.from({ length: step - 1 }, (_, index) => index + 1),
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_chats (chat_id, user_id, active_branch, version, last_sequence, created_at, updated_at)
       VALUES ('old', 'u', 'main', 1, 2, 1, 1)`,
    );
    for (const [id, parent, sequence] of [
      ['u1', null, 1],
      ['a1', 'u1', 2],
    ] as const) {
      await admin.unsafe(
        `INSERT INTO "${schema}".ctxgraph_messages (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
         VALUES ('old', $1, $2, $3, 'user', $4::text::json, 1, 1)`,
        [id, parent, sequence, JSON.stringify({ id, role: 'user', parts: [] })],
      );
    }
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_branches (chat_id, name, head_message_id, created_at, updated_at)
       VALUES ('old', 'main', 'a1', 1, 1)`,
    );
    const store = new PostgresContextStore({ connectionString: databaseUrl(), schema });
    try {
      expect(await store.migrate()).toEqual({ from: step - 1, to: SCHEMA_VERSION });
      const found = await store.findMessageNodes({ chatId: 'old', messageId: 'a1' });
      expect(found.map((node) => [node.id, node.parentId])).toEqual([['a1', 'u1']]);
      const fork = await store.commit({
        chatId: 'old',
        branch: 'main',
        expectedHeadId: 'u1',
        fork: { from: 'main' },
        messages: [{ id: 'a1~2', message: { id: 'a1', role: 'user', parts: [] } }],
      });
      expect(fork.branch).toBe('main-v2');
      expect(
        (await store.findMessageNodes({ chatId: 'old', messageId: 'a1' })).map((node) => node.id),
      ).toEqual(['a1~2', 'a1']);
      const indexes = await admin.unsafe(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'ctxgraph_messages_by_message_id_idx'`,
        [schema],
      );
      expect(indexes).toHaveLength(1);
      expect(String(indexes[0]?.indexdef)).toContain("(message ->> 'id'::text)");
    } finally {
      await store.close();
    }
  });

  it('the ended-replies step keeps a live reply of an earlier database live, and ends it readable', async () => {
    const schema = freshSchema();
    const script = getMigrationSql({ schema });
    const step =
      MIGRATIONS.findIndex((migration) => migration.name === 'live replies: ended replies kept') +
      1;
    expect(step).toBe(9);
    const connection = await admin.reserve();
    try {
      await connection.unsafe(script.slice(0, script.indexOf(`-- version ${step}`)));
    } finally {
      connection.release();
    }
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_chats (chat_id, user_id, active_branch, version, last_sequence, created_at, updated_at)
       VALUES ('old', 'u', 'main', 0, 0, 1, 1)`,
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_live_replies (chat_id, reply_id, branch, after_node_id, owner,
         lease_expires_at, stop_requested_at, chunk_count, started_at, start_order, data)
       VALUES ('old', 'r1', 'main', NULL, 'o', 9999999999999, NULL, 1, 1, 1, '{}')`,
    );
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_live_chunks (chat_id, reply_id, seq, count, chunks) VALUES ('old', 'r1', 0, 1, '["a"]')`,
    );
    const store = new PostgresContextStore({ connectionString: databaseUrl(), schema });
    try {
      expect(await store.migrate()).toEqual({ from: step - 1, to: SCHEMA_VERSION });
      expect((await store.getLiveState('old')).replies.map((record) => record.endedAt)).toEqual([
        null,
      ]);
      await store.endReply({ chatId: 'old', replyId: 'r1', owner: 'o' });
      const ended = await store.readReply({ chatId: 'old', replyId: 'r1' });
      expect(ended?.chunks).toEqual(['a']);
      expect(ended?.record.endedAt).not.toBeNull();
    } finally {
      await store.close();
    }
  });

  it('refuses a searchLanguage that is not a configuration name', () => {
    expect(
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          searchLanguage: "english'; DROP",
        }),
    ).toThrow(/searchLanguage/);
    expect(() => getMigrationSql({ searchLanguage: '' })).toThrow(ValidationError);
  });

  it('the version is the number of steps', () => {
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
  });

  it('8 stores starting at once on a fresh schema migrate it exactly once and all work', async () => {
    const schema = freshSchema();
    const stores = Array.from(
      { length: 8 },
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          schema,
          connection: { max: 1 },
        }),
    );
    try {
      const results = await Promise.all(stores.map((store) => store.migrate()));
      expect(results.filter((result) => result.from === 0).length).toBeGreaterThanOrEqual(1);
      for (const result of results) expect(result.to).toBe(SCHEMA_VERSION);
      expect(await recordedVersions(schema)).toEqual(MIGRATIONS.map((_, index) => index + 1));
      expect(await tablesOf(schema)).toEqual([
        'ctxgraph_branches',
        'ctxgraph_chats',
        'ctxgraph_checkpoints',
        'ctxgraph_context_lanes',
        'ctxgraph_live_chunks',
        'ctxgraph_live_replies',
        'ctxgraph_live_revisions',
        'ctxgraph_messages',
        'ctxgraph_migrations',
        'ctxgraph_search_state',
        'ctxgraph_search_words',
      ]);
      // Every store can use the schema right away, and sees the others' chats.
      await Promise.all(
        stores.map((store, index) => store.openChat({ chatId: `chat-${index}`, userId: 'user' })),
      );
      const listed = await stores[0]?.listChats({ userId: 'user' });
      expect(listed?.items).toHaveLength(8);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('8 stores migrating lazily on their first call at once also work', async () => {
    const schema = freshSchema();
    const stores = Array.from(
      { length: 8 },
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          schema,
          connection: { max: 1 },
        }),
    );
    try {
      const opened = await Promise.all(
        stores.map((store) => store.openChat({ chatId: 'shared', userId: 'user' })),
      );
      expect(opened.filter((result) => result.created)).toHaveLength(1);
      expect(await recordedVersions(schema)).toEqual(MIGRATIONS.map((_, index) => index + 1));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('migrate() a second time changes nothing', async () => {
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: freshSchema(),
    });
    try {
      expect(await store.migrate()).toEqual({ from: 0, to: SCHEMA_VERSION });
      expect(await store.migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    } finally {
      await store.close();
    }
  });

  it('migrate: false refuses a schema without tables with SchemaVersionError, and works after migrate()', async () => {
    const schema = freshSchema();
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      migrate: false,
    });
    try {
      const error = await store
        .openChat({ chatId: 'c', userId: 'u' })
        .catch((caught: unknown) => caught);
      expect(SchemaVersionError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('migrate: false');
      expect((error as Error).message).toContain('getMigrationSql');
      // Nothing was created by the refused call.
      expect(await tablesOf(schema)).toEqual([]);
      await store.migrate();
      expect((await store.openChat({ chatId: 'c', userId: 'u' })).created).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('refuses a database whose schema is newer than this code with SchemaVersionError, changing nothing', async () => {
    const schema = freshSchema();
    const first = new PostgresContextStore({ connectionString: databaseUrl(), schema });
    await first.migrate();
    await first.close();
    await admin.unsafe(
      `INSERT INTO "${schema}".ctxgraph_migrations (version, name) VALUES (${SCHEMA_VERSION + 1}, 'from the future')`,
    );
    for (const migrate of [true, false]) {
      const store = new PostgresContextStore({ connectionString: databaseUrl(), schema, migrate });
      try {
        const error = await store.getChat('c').catch((caught: unknown) => caught);
        expect(SchemaVersionError.isInstance(error), String(error)).toBe(true);
        expect((error as Error).message).toContain(
          `schema version ${SCHEMA_VERSION + 1}, newer than version ${SCHEMA_VERSION}`,
        );
        const explicit = await store.migrate().catch((caught: unknown) => caught);
        expect(SchemaVersionError.isInstance(explicit)).toBe(true);
      } finally {
        await store.close();
      }
    }
    expect(await recordedVersions(schema)).toEqual([
      ...MIGRATIONS.map((_, index) => index + 1),
      SCHEMA_VERSION + 1,
    ]);
  });

  it('getMigrationSql exports a script that runs twice without harm and serves a migrate: false store', async () => {
    const schema = freshSchema();
    const script = getMigrationSql({ schema, tablePrefix: 'app_' });
    expect(script).toContain(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    expect(script).toContain(`"${schema}"."app_messages"`);
    expect(script).toContain('pg_advisory_xact_lock');
    // The script holds its own BEGIN/COMMIT, as psql would run it: one connection, simple protocol.
    const connection = await admin.reserve();
    try {
      await connection.unsafe(script);
      await connection.unsafe(script);
    } finally {
      connection.release();
    }
    expect(await recordedVersions(schema, 'app_')).toEqual(MIGRATIONS.map((_, index) => index + 1));
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      tablePrefix: 'app_',
      migrate: false,
    });
    try {
      expect((await store.openChat({ chatId: 'c', userId: 'u' })).created).toBe(true);
    } finally {
      await store.close();
    }
    expect(
      getMigrationSql({ schema, tablePrefix: 'app_', fromVersion: SCHEMA_VERSION }),
    ).not.toContain('BEGIN;');
  });

  it('getMigrationSql refuses identifiers it would have to trust', () => {
    expect(() => getMigrationSql({ schema: 'bad"; DROP TABLE x; --' })).toThrow(ValidationError);
    expect(() => getMigrationSql({ schema: 'bad"; DROP TABLE x; --' })).toThrow(
      'getMigrationSql(options): schema expected letters',
    );
    expect(() => getMigrationSql({ tablePrefix: '1abc' })).toThrow('tablePrefix');
    expect(() => getMigrationSql({ tablePrefix: 'x'.repeat(33) })).toThrow('at most 32 characters');
    expect(() => getMigrationSql({ schema: 's'.repeat(64) })).toThrow('at most 63 characters');
  });

  it('stores with different prefixes share a schema without touching each other', async () => {
    const schema = freshSchema();
    const left = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      tablePrefix: 'left_',
    });
    const right = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      tablePrefix: 'right_',
    });
    try {
      await Promise.all([
        left.openChat({ chatId: 'c', userId: 'left-user' }),
        right.openChat({ chatId: 'c', userId: 'right-user' }),
      ]);
      expect((await left.getChat('c'))?.userId).toBe('left-user');
      expect((await right.getChat('c'))?.userId).toBe('right-user');
      expect(await recordedVersions(schema, 'left_')).toEqual(
        MIGRATIONS.map((_, index) => index + 1),
      );
      expect(await recordedVersions(schema, 'right_')).toEqual(
        MIGRATIONS.map((_, index) => index + 1),
      );
    } finally {
      await Promise.all([left.close(), right.close()]);
    }
  });

  it('a quoted mixed-case schema and an empty prefix work', async () => {
    const schema = `T_Mixed_${randomSchema()}`;
    schemas.push(schema);
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      tablePrefix: '',
    });
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      expect(await tablesOf(schema)).toContain('chats');
    } finally {
      await store.close();
    }
  });
});
