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
      applied: ['initial', 'context lanes'],
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
      'ctxgraph_messages',
      'ctxgraph_migrations',
    ]);
    database.close();
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
      applied: ['initial', 'context lanes'],
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
