import { afterAll, describe, expect, it } from 'vitest';
import { runWorker } from './__fixtures__/run-workers';
import { tempDirectory } from './__fixtures__/temp-files';
import { MIGRATIONS } from './migrations/migrations';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('processes');
afterAll(() => temp.remove());

describe('several processes on one file', () => {
  it('never lose a turn: 4 processes appending to one chat through head conflicts and retries', async () => {
    const path = temp.file();
    const setup = new SqliteContextStore(path);
    await setup.openChat({ chatId: 'shared', userId: 'ada' });
    await setup.close();

    const workers = 4;
    const turns = 25;
    const startAt = Date.now() + 1500;
    const results = await Promise.all(
      Array.from({ length: workers }, (_, worker) =>
        runWorker(['append', path, 'shared', String(worker), String(turns), String(startAt)]),
      ),
    );
    expect(results.map((result) => result.turns)).toEqual(Array(workers).fill(turns));

    const store = new SqliteContextStore(path);
    const head = await store.getHead({ chatId: 'shared', branch: 'main' });
    expect(head.revision).toBe(workers * turns);
    const chain = await store.getChain({
      chatId: 'shared',
      headMessageId: head.headMessageId ?? '',
    });
    const ids = chain.nodes.map((node) => node.id);
    expect(ids).toHaveLength(workers * turns * 2);
    expect(new Set(ids).size).toBe(ids.length);
    for (let worker = 0; worker < workers; worker += 1) {
      const own = ids.filter((id) => id.startsWith(`w${worker}-`));
      // Each process's turns appear in its own order, each user message right before its reply.
      const expected = Array.from({ length: turns }, (_, turn) => [
        `w${worker}-t${turn}-user`,
        `w${worker}-t${turn}-reply`,
      ]).flat();
      expect(own).toEqual(expected);
    }
    for (let index = 0; index < ids.length; index += 2) {
      expect(ids[index + 1]).toBe(ids[index]?.replace('-user', '-reply'));
    }
    // The chain and the whole graph agree: no node was written off the chain.
    expect((await store.getGraph('shared')).nodes).toHaveLength(ids.length);
    await store.close();
  }, 60_000);

  it('migrate a new file exactly once when several processes open it at the same moment', async () => {
    const path = temp.file();
    const startAt = Date.now() + 1500;
    await Promise.all(Array.from({ length: 4 }, () => runWorker(['open', path, String(startAt)])));
    const store = new SqliteContextStore({ path, migrate: false });
    expect((await store.openChat({ chatId: 'c', userId: 'u' })).created).toBe(true);
    await store.close();
    const { default: Database } = await import('better-sqlite3');
    const database = new Database(path, { readonly: true });
    expect(database.prepare('SELECT version, name FROM ctxgraph_migrations').all()).toEqual([
      { version: 1, name: 'initial' },
      { version: 2, name: 'context lanes' },
      { version: 3, name: 'message search' },
      { version: 4, name: 'engine records' },
      { version: 5, name: 'lazy search index' },
      { version: 6, name: 'message versions' },
      { version: 7, name: 'message versions: only versions indexed' },
      { version: 8, name: 'live replies' },
      { version: 9, name: 'live replies: ended replies kept' },
    ]);
    database.close();
  }, 60_000);

  it('two processes opening one new file at once, each under its own prefix, both succeed (6 rounds)', async () => {
    // Both switch the new file to WAL; SQLite may answer one with SQLITE_BUSY at once (a deadlock:
    // the busy handler is not called), which the store must retry instead of failing the
    // constructor. A pair hits it about every other round, so six rounds almost always do.
    const { default: Database } = await import('better-sqlite3');
    for (let round = 0; round < 6; round += 1) {
      const path = temp.file();
      const startAt = Date.now() + 1200;
      const prefixes = ['first_', 'second_'];
      const results = await Promise.allSettled(
        prefixes.map((prefix) => runWorker(['open', path, String(startAt), prefix])),
      );
      expect(
        results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : [])),
      ).toEqual([]);
      const database = new Database(path, { readonly: true });
      expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
      for (const prefix of prefixes)
        expect(database.prepare(`SELECT version FROM ${prefix}migrations`).pluck().all()).toEqual(
          MIGRATIONS.map((_, index) => index + 1),
        );
      database.close();
    }
  }, 120_000);
});
