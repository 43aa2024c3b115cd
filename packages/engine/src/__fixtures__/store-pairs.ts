import type { ContextStore } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';

// Two store objects over the same data, on each store the machine runs: what a test needs to
// show that a second engine (a second process) sees what the first wrote. PostgreSQL when
// DATABASE_URL is set (one schema per suite; every chat id is new).

// The engine type-checks without Node's types: the environment and file removal go through these.
const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;

/** Makes two store objects over the same data (one store object twice, for memory). */
export type StorePair = () => [ContextStore, ContextStore];

/**
 * The store pairs of a suite named `name` (its SQLite files and PostgreSQL schema are named after
 * it), for `describe.each(pairs)`, and the function that closes every store made and removes the
 * files (`afterAll(closeAll)`).
 */
export function storePairs(name: string): {
  readonly pairs: Array<[string, StorePair]>;
  readonly closeAll: () => Promise<void>;
} {
  const opened: ContextStore[] = [];
  const files: string[] = [];
  const pairs: Array<[string, StorePair]> = [
    [
      'memory',
      () => {
        const store = new InMemoryContextStore();
        opened.push(store);
        return [store, store];
      },
    ],
    [
      'SQLite file, two store objects',
      () => {
        const path = `/tmp/ctxgraph-${name}-${Math.random().toString(36).slice(2)}.db`;
        files.push(path);
        const stores: [ContextStore, ContextStore] = [
          new SqliteContextStore({ path }),
          new SqliteContextStore({ path }),
        ];
        opened.push(...stores);
        return stores;
      },
    ],
  ];
  const databaseUrl = environment?.DATABASE_URL;
  if (databaseUrl !== undefined) {
    pairs.push([
      'PostgreSQL, two store objects (two pools)',
      () => {
        const make = () =>
          new PostgresContextStore({
            connectionString: databaseUrl,
            schema: `ctxgraph_engine_${name.replaceAll('-', '_')}`,
          });
        const stores: [ContextStore, ContextStore] = [make(), make()];
        opened.push(...stores);
        return stores;
      },
    ]);
  }
  const closeAll = async (): Promise<void> => {
    for (const store of opened.splice(0)) await store.close();
    const fs = (await import('node:fs' as string)) as {
      rmSync(path: string, options: { force: boolean }): void;
    };
    for (const path of files.splice(0))
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
  };
  return { pairs, closeAll };
}
