import { ContextConflictError, SchemaVersionError } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory, textMessage } from './__fixtures__/temp-files';
import {
  MIGRATIONS,
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SCHEMA_VERSION,
} from './migrations/migrations';
import { tableNames } from './schema/table-names';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('context-lane');
afterAll(() => temp.remove());

/** A file at schema version 1 (before the context lane), holding one chat with one message. */
function fileAtVersionOne(): string {
  const path = temp.file();
  const database = new Database(path);
  const tables = tableNames();
  const first = MIGRATIONS[0];
  if (first === undefined) throw new Error('no first migration');
  database.exec(`CREATE TABLE ${tables.migrations} (
    version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;`);
  database.exec(first.sql(tables));
  database.prepare(`INSERT INTO ${tables.migrations} VALUES (1, ?, 0)`).run(first.name);
  database
    .prepare(
      `INSERT INTO ${tables.chats} VALUES ('old', 'ada', 'Old chat', '{}', 'main', 1, 0, 10, 20)`,
    )
    .run();
  database
    .prepare(`INSERT INTO ${tables.messages} VALUES ('old', 'm1', NULL, 1, 'user', ?, 10, 10)`)
    .run(JSON.stringify(textMessage('m1')));
  database.prepare(`INSERT INTO ${tables.branches} VALUES ('old', 'main', 'm1', 10, 20)`).run();
  database.close();
  return path;
}

describe('the context lane in SQLite', () => {
  it('migrates a file of the previous schema version, keeping its chats', async () => {
    const path = fileAtVersionOne();
    const database = new Database(path);
    expect(readSqliteSchemaVersion(database)).toBe(1);
    expect(migrateSqliteDatabase(database)).toEqual({
      fromVersion: 1,
      toVersion: SCHEMA_VERSION,
      applied: [
        'context lanes',
        'message search',
        'engine records',
        'lazy search index',
        'message versions',
        'message versions: only versions indexed',
        'live replies',
        'live replies: ended replies kept',
      ],
    });
    database.close();
    await using store = new SqliteContextStore(path);
    expect((await store.getChat('old'))?.title).toBe('Old chat');
    expect((await store.getChain({ chatId: 'old', headMessageId: 'm1' })).nodes).toHaveLength(1);
    expect(await store.getContext('old')).toEqual({
      chatId: 'old',
      fragments: [],
      revision: 0,
      updatedAt: null,
    });
    const saved = await store.saveContext({ chatId: 'old', fragments: [{ type: 'hint' }] });
    expect(saved.revision).toBe(1);
  });

  it('refuses a previous-version file with migrate: false until migrate() runs', async () => {
    const path = fileAtVersionOne();
    await using store = new SqliteContextStore({ path, migrate: false });
    const error = await store.getContext('old').catch((caught: unknown) => caught);
    expect(SchemaVersionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`schema version 1, older than ${SCHEMA_VERSION}`);
    expect(await store.migrate()).toMatchObject({
      fromVersion: 1,
      applied: [
        'context lanes',
        'message search',
        'engine records',
        'lazy search index',
        'message versions',
        'message versions: only versions indexed',
        'live replies',
        'live replies: ended replies kept',
      ],
    });
    expect((await store.getContext('old')).revision).toBe(0);
  });

  it('keeps the lane byte for byte across reopening, and deletes it with the chat', async () => {
    const path = temp.file();
    const fragments = [{ type: 'hint', text: 'é ✓', nested: { list: [1, 2.5, null] } }, 'x'];
    {
      await using store = new SqliteContextStore(path);
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.saveContext({ chatId: 'c', fragments });
    }
    const database = new Database(path, { readonly: true });
    expect(database.prepare('SELECT fragments FROM ctxgraph_context_lanes').pluck().get()).toBe(
      JSON.stringify(fragments),
    );
    database.close();
    await using store = new SqliteContextStore(path);
    expect(await store.getContext('c')).toMatchObject({ fragments, revision: 1 });
    expect(await store.deleteChat('c')).toBe(true);
    await store.openChat({ chatId: 'c', userId: 'u' });
    expect((await store.getContext('c')).revision).toBe(0);
  });

  it('refuses a stale revision saved through another connection, writing nothing', async () => {
    const path = temp.file();
    await using first = new SqliteContextStore(path);
    await using second = new SqliteContextStore(path);
    await first.openChat({ chatId: 'c', userId: 'u' });
    const read = await second.getContext('c');
    await first.saveContext({ chatId: 'c', fragments: ['first'], expectedRevision: 0 });
    const error = await second
      .saveContext({ chatId: 'c', fragments: ['second'], expectedRevision: read.revision })
      .catch((caught: unknown) => caught);
    expect(ContextConflictError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ expectedRevision: 0, currentRevision: 1 });
    expect(await second.getContext('c')).toMatchObject({ fragments: ['first'], revision: 1 });
    // The lane moves the chat's updatedAt, never its revision.
    expect((await second.getChat('c'))?.revision).toBe(0);
  });
});
