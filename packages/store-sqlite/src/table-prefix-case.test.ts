import { ValidationError } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runWorker } from './__fixtures__/run-workers';
import { tempDirectory } from './__fixtures__/temp-files';
import {
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SCHEMA_VERSION,
} from './migrations/migrations';
import { SqliteContextStore } from './sqlite-context-store';

// SQLite compares table names ignoring (ASCII) case, so `App_chats` and `app_chats` are one table.
// Two prefixes that differ only by case would address the same tables: the second spelling is
// refused with a message naming the first, whatever the order or the way the store is opened.

const temp = tempDirectory('prefix-case');
afterAll(() => temp.remove());

function caseError(error: unknown): void {
  expect(ValidationError.isInstance(error)).toBe(true);
  expect((error as Error).message).toContain(
    'tablePrefix "app_" differs only by case from the prefix "App_" whose tables are already in',
  );
  expect((error as ValidationError).issues).toEqual([
    { path: 'tablePrefix', message: 'differs only by case from the existing prefix "App_"' },
  ]);
}

function catchError(body: () => unknown): unknown {
  try {
    body();
  } catch (error) {
    return error;
  }
  return expect.fail('expected a throw');
}

describe('table prefixes that differ only by case', () => {
  it('a store refuses a prefix that differs only by case from one already in the file, changing nothing', async () => {
    const path = temp.file();
    const first = new SqliteContextStore({ path, tablePrefix: 'App_' });
    await first.openChat({ chatId: 'c', userId: 'ada' });
    const schema = () =>
      new Database(path, { readonly: true })
        .prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name')
        .all();
    const before = schema();
    caseError(catchError(() => new SqliteContextStore({ path, tablePrefix: 'app_' })));
    // Without migrating, the check on first use says the same (not "has no app_ tables").
    const unmigrated = new SqliteContextStore({ path, tablePrefix: 'app_', migrate: false });
    caseError(await unmigrated.getChat('c').catch((error: unknown) => error));
    caseError(await unmigrated.migrate().catch((error: unknown) => error));
    await unmigrated.close();
    expect(schema()).toEqual(before);
    // The spelling that created the tables still opens them, and so does a prefix of its own.
    const again = new SqliteContextStore({ path, tablePrefix: 'App_' });
    expect((await again.getChat('c'))?.userId).toBe('ada');
    const other = new SqliteContextStore({ path, tablePrefix: 'App_two_' });
    expect(await other.getChat('c')).toBeNull();
    for (const store of [first, again, other]) await store.close();
  });

  it('readSqliteSchemaVersion and migrateSqliteDatabase refuse it on a database you opened', () => {
    const database = new Database(temp.file());
    migrateSqliteDatabase(database, { tablePrefix: 'App_' });
    caseError(catchError(() => readSqliteSchemaVersion(database, { tablePrefix: 'app_' })));
    caseError(catchError(() => migrateSqliteDatabase(database, { tablePrefix: 'app_' })));
    expect(readSqliteSchemaVersion(database, { tablePrefix: 'App_' })).toBe(SCHEMA_VERSION);
    database.close();
  });

  it('two processes creating a new file under App_ and app_ at once: one gets the tables, the other the error', async () => {
    const path = temp.file();
    const startAt = Date.now() + 1500;
    const results = await Promise.allSettled(
      ['App_', 'app_'].map((prefix) => runWorker(['open', path, String(startAt), prefix])),
    );
    const failed = results.filter((result) => result.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(String((failed[0] as PromiseRejectedResult).reason)).toMatch(
      /ValidationError: SqliteContextStore: tablePrefix "(App_|app_)" differs only by case/,
    );
    const database = new Database(path, { readonly: true });
    const tables = database
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all() as string[];
    // Ten tables, and the search index with its five shadow tables.
    expect(tables).toHaveLength(16);
    expect(new Set(tables.map((name) => name.slice(0, 4))).size).toBe(1);
    database.close();
  }, 60_000);
});
