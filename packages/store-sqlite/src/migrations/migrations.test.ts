import { SchemaVersionError, ValidationError } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory } from '../__fixtures__/temp-files';
import { SqliteContextStore } from '../sqlite-context-store';
import {
  getMigrationSql,
  MIGRATIONS,
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SCHEMA_VERSION,
} from './migrations';

const temp = tempDirectory('migrations');
afterAll(() => temp.remove());

function tableList(database: Database.Database): string[] {
  return (
    database
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all() as string[]
  ).filter((name) => !name.startsWith('sqlite_'));
}

describe('migrateSqliteDatabase', () => {
  it('creates the schema once, records each step, and does nothing the second time', () => {
    const database = new Database(temp.file());
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
    expect(readSqliteSchemaVersion(database)).toBe(0);
    expect(migrateSqliteDatabase(database)).toEqual({
      fromVersion: 0,
      toVersion: SCHEMA_VERSION,
      applied: [
        'initial',
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
    expect(migrateSqliteDatabase(database)).toEqual({
      fromVersion: SCHEMA_VERSION,
      toVersion: SCHEMA_VERSION,
      applied: [],
    });
    expect(tableList(database)).toEqual([
      'ctxgraph_branches',
      'ctxgraph_chats',
      'ctxgraph_checkpoints',
      'ctxgraph_context_lanes',
      'ctxgraph_live_chunks',
      'ctxgraph_live_replies',
      'ctxgraph_live_revisions',
      'ctxgraph_message_search',
      'ctxgraph_message_search_config',
      'ctxgraph_message_search_content',
      'ctxgraph_message_search_data',
      'ctxgraph_message_search_docsize',
      'ctxgraph_message_search_idx',
      'ctxgraph_messages',
      'ctxgraph_migrations',
      'ctxgraph_search_state',
    ]);
    database.close();
  });

  it('version 3 indexes the messages of a version 2 file for search, and keeps the index in step', async () => {
    const path = temp.file();
    const database = new Database(path);
    // The file as version 2 left it, with a chat of two messages.
    database.exec(getMigrationSql().split('-- ctxgraph_ schema step 3')[0] as string);
    database.exec('COMMIT');
    expect(readSqliteSchemaVersion(database)).toBe(2);
    const message = (id: string, text: string) =>
      JSON.stringify({ id, role: 'user', parts: [{ type: 'text', text }, { type: 'step-start' }] });
    database.exec("INSERT INTO ctxgraph_chats VALUES ('old', 'u', NULL, '{}', 'main', 1, 0, 1, 1)");
    const insert = database.prepare(
      'INSERT INTO ctxgraph_messages VALUES (?, ?, ?, ?, ?, ?, 1, 1)',
    );
    insert.run('old', 'm1', null, 1, 'user', message('m1', 'Ελληνικά and emus'));
    insert.run('old', 'm2', 'm1', 2, 'user', message('m2', 'more emus'));
    database.exec("INSERT INTO ctxgraph_branches VALUES ('old', 'main', 'm2', 1, 1)");
    database.close();
    const store = new SqliteContextStore({ path });
    try {
      const find = async (query: string) =>
        (await store.searchMessages({ userId: 'u', query })).items.map((hit) => hit.messageId);
      expect(await find('ελληνικά')).toEqual(['m1']);
      expect((await find('emus')).sort()).toEqual(['m1', 'm2']);
      // Replaced, pruned and deleted messages leave the index in the same write.
      const text = (id: string, words: string) => ({
        id,
        message: { id, role: 'user', parts: [{ type: 'text', text: words }] },
      });
      await store.commit({
        chatId: 'old',
        branch: 'main',
        expectedHeadId: 'm2',
        messages: [text('m2', 'now kiwis')],
      });
      expect(await find('emus')).toEqual(['m1']);
      expect(await find('kiwis')).toEqual(['m2']);
      await store.createBranch({ chatId: 'old', name: 'side', headMessageId: 'm1' });
      await store.commit({
        chatId: 'old',
        branch: 'side',
        expectedHeadId: 'm1',
        messages: [text('m3', 'side kiwis')],
      });
      await store.prune({ chatId: 'old', deleteBranches: ['side'] });
      expect(await find('kiwis')).toEqual(['m2']);
      await store.deleteChat('old');
      expect(await find('kiwis')).toEqual([]);
      const check = new Database(path, { readonly: true });
      expect(check.prepare('SELECT count(*) FROM ctxgraph_message_search').pluck().get()).toBe(0);
      check.close();
    } finally {
      await store.close();
    }
  });

  it('the ended-replies step keeps a live reply of an earlier file live, and ends it readable', async () => {
    const path = temp.file();
    const database = new Database(path);
    const step =
      MIGRATIONS.findIndex((migration) => migration.name === 'live replies: ended replies kept') +
      1;
    expect(step).toBe(9);
    database.exec(getMigrationSql().split(`-- ctxgraph_ schema step ${step}`)[0] as string);
    database.exec('COMMIT');
    expect(readSqliteSchemaVersion(database)).toBe(step - 1);
    database.exec("INSERT INTO ctxgraph_chats VALUES ('old', 'u', NULL, '{}', 'main', 0, 0, 1, 1)");
    database.exec(
      `INSERT INTO ctxgraph_live_replies VALUES ('old', 'r1', 'main', NULL, 'o', 9999999999999, NULL, 1, 1, 1, '{}')`,
    );
    database.exec(`INSERT INTO ctxgraph_live_chunks VALUES ('old', 'r1', 0, 1, '["a"]')`);
    database.close();
    const store = new SqliteContextStore({ path });
    try {
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

  it('the engine-records step keeps every node of an earlier file, each without a record', async () => {
    const path = temp.file();
    const database = new Database(path);
    const step = MIGRATIONS.findIndex((migration) => migration.name === 'engine records') + 1;
    // The file as the step before left it, with a node whose record an earlier engine kept in
    // its metadata (the engine reads that itself; the store leaves the message as it is).
    database.exec(getMigrationSql().split(`-- ctxgraph_ schema step ${step}`)[0] as string);
    database.exec('COMMIT');
    expect(readSqliteSchemaVersion(database)).toBe(step - 1);
    const legacy = {
      id: 'm1',
      role: 'assistant',
      parts: [{ type: 'text', text: 'hi' }],
      metadata: { ctxgraph: { usage: { modelId: 'm' } } },
    };
    database.exec("INSERT INTO ctxgraph_chats VALUES ('old', 'u', NULL, '{}', 'main', 1, 0, 1, 1)");
    database
      .prepare("INSERT INTO ctxgraph_messages VALUES ('old', 'm1', NULL, 1, 'assistant', ?, 1, 1)")
      .run(JSON.stringify(legacy));
    database.exec("INSERT INTO ctxgraph_branches VALUES ('old', 'main', 'm1', 1, 1)");
    database.close();
    const store = new SqliteContextStore({ path });
    try {
      const node = await store.getMessage({ chatId: 'old', messageId: 'm1' });
      expect(node?.message).toEqual(legacy);
      expect(node?.engineRecord).toBeNull();
      const replaced = {
        id: 'm1',
        message: { id: 'm1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] },
        engineRecord: { usage: { modelId: 'm' } },
      };
      await store.commit({
        chatId: 'old',
        branch: 'main',
        expectedHeadId: 'm1',
        messages: [replaced],
      });
      const chain = await store.getChain({ chatId: 'old', headMessageId: 'm1' });
      expect(chain.nodes[0]?.engineRecord).toEqual({ usage: { modelId: 'm' } });
      expect(chain.nodes[0]?.message).toEqual(replaced.message);
    } finally {
      await store.close();
    }
  });

  it('keeps one version per table prefix and never touches PRAGMA user_version', () => {
    const database = new Database(temp.file());
    database.pragma('user_version = 42');
    migrateSqliteDatabase(database, { tablePrefix: 'one_' });
    expect(readSqliteSchemaVersion(database, { tablePrefix: 'one_' })).toBe(SCHEMA_VERSION);
    expect(readSqliteSchemaVersion(database, { tablePrefix: 'two_' })).toBe(0);
    expect(migrateSqliteDatabase(database, { tablePrefix: 'two_' }).applied).toEqual([
      'initial',
      'context lanes',
      'message search',
      'engine records',
      'lazy search index',
      'message versions',
      'message versions: only versions indexed',
      'live replies',
      'live replies: ended replies kept',
    ]);
    expect(database.pragma('user_version', { simple: true })).toBe(42);
    database.close();
  });

  it('refuses tables newer than the code with SchemaVersionError naming the path, changing nothing', () => {
    const path = temp.file();
    const database = new Database(path);
    migrateSqliteDatabase(database);
    database
      .prepare(
        "INSERT INTO ctxgraph_migrations (version, name, applied_at) VALUES (99, 'from-the-future', 0)",
      )
      .run();
    const tablesBefore = tableList(database);
    expect(() => migrateSqliteDatabase(database)).toThrow(SchemaVersionError);
    expect(() => new SqliteContextStore(path)).toThrow(
      /newer than this @ctxgraph\/store-sqlite understands/,
    );
    expect(() => new SqliteContextStore(path)).toThrow(path);
    expect(tableList(database)).toEqual(tablesBefore);
    database.close();
  });
});

describe('SqliteContextStore and migrations', () => {
  it('with migrate: false, refuses use until migrate() runs, then works', async () => {
    const path = temp.file();
    const store = new SqliteContextStore({ path, migrate: false });
    const error = await store.getChat('c').catch((caught: unknown) => caught);
    expect(SchemaVersionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('migrate()');
    expect(await store.migrate()).toMatchObject({
      fromVersion: 0,
      applied: [
        'initial',
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
    expect((await store.openChat({ chatId: 'c', userId: 'u' })).created).toBe(true);
    expect((await store.migrate()).applied).toEqual([]);
    await store.close();
  });

  it('with migrate: false, reports a newer schema on first use', async () => {
    const path = temp.file();
    const database = new Database(path);
    migrateSqliteDatabase(database);
    database
      .prepare("INSERT INTO ctxgraph_migrations (version, name, applied_at) VALUES (?, 'later', 0)")
      .run(SCHEMA_VERSION + 1);
    database.close();
    const store = new SqliteContextStore({ path, migrate: false });
    await expect(store.getChat('c')).rejects.toThrow(/newer than this/);
    await expect(store.migrate()).rejects.toSatisfy((error) =>
      SchemaVersionError.isInstance(error),
    );
    await store.close();
  });
});

describe('getMigrationSql', () => {
  it('is a script a team can run itself, after which the store accepts the file with migrate: false', async () => {
    const path = temp.file();
    const sql = getMigrationSql({ tablePrefix: 'team_' });
    expect(sql.startsWith('BEGIN IMMEDIATE;')).toBe(true);
    expect(sql.trimEnd().endsWith('COMMIT;')).toBe(true);
    const database = new Database(path);
    database.exec(sql);
    expect(readSqliteSchemaVersion(database, { tablePrefix: 'team_' })).toBe(SCHEMA_VERSION);
    database.close();
    const store = new SqliteContextStore({ path, tablePrefix: 'team_', migrate: false });
    expect((await store.openChat({ chatId: 'c', userId: 'u' })).created).toBe(true);
    await store.close();
  });

  it('emits only the steps after fromVersion and refuses an impossible one', () => {
    expect(getMigrationSql({ fromVersion: SCHEMA_VERSION })).not.toContain(
      'CREATE TABLE ctxgraph_chats',
    );
    expect(() => getMigrationSql({ fromVersion: -1 })).toThrow(ValidationError);
    expect(() => getMigrationSql({ fromVersion: SCHEMA_VERSION + 1 })).toThrow(ValidationError);
    expect(() => getMigrationSql({ tablePrefix: 'x"; DROP TABLE y; --' })).toThrow(ValidationError);
  });
});
