import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import postgres from 'postgres';
import type { StoreDescription } from '../shared/wire';
import {
  type ContextRepository,
  MemoryContextRepository,
  PostgresContextRepository,
  SqliteContextRepository,
} from './context-repository';
import type { StoreChoice } from './playground-config';

/** A store, the context repository beside it, and how to close both. */
export interface PlaygroundBackend {
  readonly store: ContextStore;
  readonly contexts: ContextRepository;
  readonly description: StoreDescription;
  close(): Promise<void>;
}

/** The database URL with its password replaced, for display. */
export function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres (URL not shown)';
  }
}

/**
 * Opens the chosen store and its context repository: a SQLite file (its folder created when
 * missing), memory, or Postgres.
 *
 * @example
 * ```ts
 * const backend = await openBackend({ kind: 'sqlite', path: './data/playground.db' });
 * ```
 */
export async function openBackend(choice: StoreChoice): Promise<PlaygroundBackend> {
  if (choice.kind === 'memory') {
    const store = new InMemoryContextStore();
    const contexts = new MemoryContextRepository();
    return {
      store,
      contexts,
      description: { kind: 'memory', location: 'in memory (gone when the server stops)' },
      close: async () => {
        await store.close();
        await contexts.close();
      },
    };
  }
  if (choice.kind === 'sqlite') {
    mkdirSync(dirname(choice.path), { recursive: true });
    const store = new SqliteContextStore({ path: choice.path });
    // The store creates its tables on first use; the side table has its own connection.
    const contexts = new SqliteContextRepository(choice.path);
    return {
      store,
      contexts,
      description: { kind: 'sqlite', location: choice.path },
      close: async () => {
        await store.close();
        await contexts.close();
      },
    };
  }
  const store = new PostgresContextStore(choice.url);
  const contexts = new PostgresContextRepository(
    postgres(choice.url, { max: 2, onnotice: () => {} }),
  );
  return {
    store,
    contexts,
    description: { kind: 'postgres', location: hidePassword(choice.url) },
    close: async () => {
      await store.close();
      await contexts.close();
    },
  };
}
