import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SchemaVersionError, StoreError } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory, textMessage } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('files');
afterAll(() => temp.remove());

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

async function seededFile(): Promise<string> {
  const path = temp.file();
  const store = new SqliteContextStore(path);
  await store.openChat({ chatId: 'kept', userId: 'ada' });
  await store.commit({
    chatId: 'kept',
    branch: 'main',
    expectedHeadId: null,
    messages: [{ id: 'a', message: textMessage('a') }],
  });
  // Closing the last connection checkpoints the WAL into the main file.
  await store.close();
  return path;
}

describe('files that are not usable databases', () => {
  it('refuses a file of garbage bytes with StoreError naming the path, and leaves the file as it was', () => {
    const path = temp.file('garbage.db');
    const garbage = Buffer.from(Array.from({ length: 8192 }, (_, index) => (index * 7919) % 251));
    writeFileSync(path, garbage);
    const error = thrown(() => new SqliteContextStore(path));
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('not a SQLite database');
    expect(readFileSync(path).equals(garbage)).toBe(true);
  });

  it('refuses a corrupt database with StoreError naming the path, writing nothing', async () => {
    const path = await seededFile();
    const bytes = readFileSync(path);
    // Keep the 100-byte header valid, scramble the schema page behind it.
    for (let index = 100; index < 4096; index += 1) bytes[index] = (index * 31) % 256;
    writeFileSync(path, bytes);
    const error = thrown(() => new SqliteContextStore(path));
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('corrupt');
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('reports a missing directory, a directory in place of the file, and an unwritable directory', () => {
    const missing = `${temp.path}/no/such/dir/store.db`;
    const directory = `${temp.path}/a-directory.db`;
    mkdirSync(directory);
    // /proc refuses new files even to root (chmod does not stop root, and the tests run as root).
    const unwritable = '/proc/ctxgraph-store.db';
    for (const path of [missing, directory, unwritable]) {
      const error = thrown(() => new SqliteContextStore(path));
      expect(StoreError.isInstance(error), path).toBe(true);
      expect((error as Error).message).toContain(path);
    }
    expect(existsSync(missing)).toBe(false);
  });
});

describe('read-only databases', () => {
  // The tests run as root, for whom chmod 0444 does not stop writes; `readonly: true` opens the
  // file with SQLITE_OPEN_READONLY, which SQLite enforces for every user.
  it('reads, refuses every write with StoreError, and changes nothing', async () => {
    const path = await seededFile();
    const before = readFileSync(path);
    const store = new SqliteContextStore({ path, readonly: true });
    expect((await store.getChain({ chatId: 'kept', headMessageId: 'a' })).nodes).toHaveLength(1);
    const writes: Array<() => Promise<unknown>> = [
      () => store.openChat({ chatId: 'new', userId: 'ada' }),
      () =>
        store.commit({
          chatId: 'kept',
          branch: 'main',
          expectedHeadId: 'a',
          messages: [{ id: 'b', message: textMessage('b') }],
        }),
      () => store.updateChat({ chatId: 'kept', title: 'x' }),
      () => store.createCheckpoint({ chatId: 'kept', name: 'c', messageId: 'a' }),
      () => store.deleteChat('kept'),
    ];
    for (const write of writes) {
      const error = await rejection(write());
      expect(StoreError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('read-only');
      expect((error as Error).message).toContain(path);
    }
    expect((await store.getHead({ chatId: 'kept', branch: 'main' })).headMessageId).toBe('a');
    await store.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('gives SchemaVersionError when a read-only file has no schema, and StoreError when it does not exist', () => {
    const empty = temp.file();
    writeFileSync(empty, '');
    const error = thrown(() => new SqliteContextStore({ path: empty, readonly: true }));
    expect(SchemaVersionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('read-only');
    const absent = temp.file();
    expect(
      StoreError.isInstance(thrown(() => new SqliteContextStore({ path: absent, readonly: true }))),
    ).toBe(true);
    expect(existsSync(absent)).toBe(false);
  });
});

describe('locks held by another connection', () => {
  it('gives up after busyTimeout with StoreError, writing nothing', async () => {
    const path = await seededFile();
    const store = new SqliteContextStore({ path, busyTimeout: 50 });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const error = await rejection(
      store.commit({
        chatId: 'kept',
        branch: 'main',
        expectedHeadId: 'a',
        messages: [{ id: 'b', message: textMessage('b') }],
      }),
    );
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('busyTimeout');
    expect((error as Error).message).toContain(path);
    // Reads are not blocked by a writer in WAL mode.
    expect((await store.getHead({ chatId: 'kept', branch: 'main' })).headMessageId).toBe('a');
    other.exec('ROLLBACK');
    other.close();
    expect((await store.getGraph('kept')).nodes.map((node) => node.id)).toEqual(['a']);
    await store.close();
  });
});
