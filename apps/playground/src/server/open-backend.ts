import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { importLegacyPostgresContexts, importLegacySqliteContexts } from './legacy-contexts';
import type { StoreChoice } from './playground-config';

/** What the page shows about the store in use. */
export interface StoreDescription {
  /** `sqlite`, `memory` or `postgres`. */
  readonly kind: 'sqlite' | 'memory' | 'postgres';
  /** The file, the database (password hidden), or where memory lives. */
  readonly location: string;
}

/**
 * A store and how to close it. Chats and their contexts both live in the store: the context of a
 * chat is the store's context lane (`getContext` / `saveContext`), which every store the
 * playground opens serves.
 */
export interface PlaygroundBackend {
  readonly store: ContextStore;
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
 * Opens the chosen store: a SQLite file (its folder created when missing), memory, or Postgres.
 * Contexts an older playground kept in its own `playground_context` table are moved into the
 * store's context lane once, here (see `legacy-contexts.ts`).
 *
 * @example
 * ```ts
 * const backend = await openBackend({ kind: 'sqlite', path: './data/playground.db' });
 * ```
 */
export async function openBackend(choice: StoreChoice): Promise<PlaygroundBackend> {
  if (choice.kind === 'memory') {
    const store = new InMemoryContextStore();
    return {
      store,
      description: { kind: 'memory', location: 'in memory (gone when the server stops)' },
      close: () => store.close(),
    };
  }
  if (choice.kind === 'sqlite') {
    mkdirSync(dirname(choice.path), { recursive: true });
    const store = new SqliteContextStore({ path: choice.path });
    await closeOnFailure(store, importLegacySqliteContexts(choice.path, store));
    return {
      store,
      description: { kind: 'sqlite', location: choice.path },
      close: () => store.close(),
    };
  }
  const store = new PostgresContextStore(choice.url);
  await closeOnFailure(store, importLegacyPostgresContexts(choice.url, store));
  return {
    store,
    description: { kind: 'postgres', location: hidePassword(choice.url) },
    close: () => store.close(),
  };
}

async function closeOnFailure(store: ContextStore, work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (error) {
    await store.close();
    throw error;
  }
}
