import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer } from '../../../../tooling/postgres-server.ts';
import { importLegacyPostgresContexts } from './legacy-contexts';
import { openBackend } from './open-backend';

// An older playground kept contexts in its own `playground_context` table. The backend moves them
// into the store's context lane once, when it opens, and drops the table.

const oldContext = [{ type: 'role', text: 'You are terse.' }];
const newerContext = [{ type: 'hint', text: 'Saved in the lane already.' }];

/** Chats `old` (context only in the old table) and `newer` (its lane saved since). */
async function seedChats(store: ContextStore): Promise<void> {
  await store.openChat({ chatId: 'old', userId: 'ada' });
  await store.openChat({ chatId: 'newer', userId: 'ada' });
  await store.saveContext?.({ chatId: 'newer', fragments: newerContext });
}

/** The old table's rows: both chats, and one whose chat was deleted. */
const legacyRows: readonly (readonly [string, string])[] = [
  ['old', JSON.stringify(oldContext)],
  ['newer', JSON.stringify([{ type: 'hint', text: 'stale' }])],
  ['deleted-chat', JSON.stringify(oldContext)],
];

async function expectImported(store: ContextStore): Promise<void> {
  expect(await store.getContext?.('old')).toMatchObject({ fragments: oldContext, revision: 1 });
  expect(await store.getContext?.('newer')).toMatchObject({
    fragments: newerContext,
    revision: 1,
  });
  expect(await store.getChat('deleted-chat')).toBeNull();
}

describe('contexts of the old playground_context table', () => {
  it('move into the SQLite store’s context lane once, and the table goes', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-legacy-'));
    const path = join(directory, 'play.db');
    try {
      const seeding = new SqliteContextStore(path);
      await seedChats(seeding);
      await seeding.close();
      const database = new Database(path);
      database.exec(
        'CREATE TABLE playground_context (chat_id TEXT PRIMARY KEY, fragments TEXT NOT NULL, updated_at INTEGER NOT NULL)',
      );
      const insert = database.prepare('INSERT INTO playground_context VALUES (?, ?, 0)');
      for (const [chatId, fragments] of legacyRows) insert.run(chatId, fragments);
      database.close();

      const backend = await openBackend({ kind: 'sqlite', path });
      await expectImported(backend.store);
      await backend.close();
      const check = new Database(path, { readonly: true });
      expect(
        check.prepare("SELECT name FROM sqlite_master WHERE name = 'playground_context'").get(),
      ).toBeUndefined();
      check.close();
      // Opening again finds nothing to move and changes nothing.
      const again = await openBackend({ kind: 'sqlite', path });
      await expectImported(again.store);
      await again.close();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('contexts of the old playground_context table in Postgres', () => {
  let url = '';
  let stop = async (): Promise<void> => {};
  // The old table lived wherever the connection's search_path pointed: a schema of this test's
  // own, so parallel runs on one server never see each other's table.
  const schema = `legacy_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    const server = await startPostgresServer();
    stop = server.stop;
    const parsed = new URL(server.url);
    parsed.searchParams.set('search_path', schema);
    url = parsed.toString();
  });

  afterAll(async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await sql.end();
    await stop();
  });

  it('move into the store’s context lane once, and the table goes', async () => {
    const tablePrefix = `${schema}_`;
    const seeding = new PostgresContextStore({ connectionString: url, schema, tablePrefix });
    await seedChats(seeding);
    await seeding.close();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql.unsafe(
      `CREATE TABLE ${schema}.playground_context (chat_id text PRIMARY KEY, fragments jsonb NOT NULL)`,
    );
    for (const [chatId, fragments] of legacyRows)
      await sql.unsafe(`INSERT INTO ${schema}.playground_context VALUES ($1, $2::text::jsonb)`, [
        chatId,
        fragments,
      ]);
    const store = new PostgresContextStore({ connectionString: url, schema, tablePrefix });
    try {
      expect(await importLegacyPostgresContexts(url, store)).toBe(1);
      await expectImported(store);
      const [left] = await sql<{ table: string | null }[]>`
        SELECT to_regclass(${`${schema}.playground_context`})::text AS table`;
      expect(left?.table).toBeNull();
      expect(await importLegacyPostgresContexts(url, store)).toBe(0);
    } finally {
      await store.close();
      await sql.end();
    }
  });
});
