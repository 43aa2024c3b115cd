import type { ContextStore } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';

/** The store the app runs on, chosen from its environment, and a line saying which. */
export interface ChosenStore {
  readonly store: ContextStore;
  /** For the start banner: never a password. */
  readonly description: string;
}

/**
 * `CTXGRAPH_POSTGRES` (a connection string) uses PostgreSQL, in the schema `CTXGRAPH_PG_SCHEMA`
 * (default `public`, created when missing); it wins over `CTXGRAPH_SQLITE` when both are set.
 * Otherwise the SQLite file `CTXGRAPH_SQLITE` (default `./chat.db`). Several app processes may
 * share one SQLite file or one PostgreSQL schema. PostgreSQL is reached (and its schema brought up
 * to date) before this returns, so a wrong connection string stops the app at start.
 */
export async function openStore(env: NodeJS.ProcessEnv): Promise<ChosenStore> {
  const postgres = env.CTXGRAPH_POSTGRES;
  if (postgres !== undefined && postgres !== '') {
    const schema =
      env.CTXGRAPH_PG_SCHEMA === undefined || env.CTXGRAPH_PG_SCHEMA === ''
        ? 'public'
        : env.CTXGRAPH_PG_SCHEMA;
    let where: string;
    try {
      const url = new URL(postgres);
      where = `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
    } catch {
      throw new Error(
        'CTXGRAPH_POSTGRES must be a PostgreSQL connection string such as postgres://user@host:5432/db.',
      );
    }
    const store = new PostgresContextStore({ connectionString: postgres, schema });
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    return { store, description: `postgres (${where}, schema ${schema})` };
  }
  const sqlitePath =
    env.CTXGRAPH_SQLITE === undefined || env.CTXGRAPH_SQLITE === ''
      ? './chat.db'
      : env.CTXGRAPH_SQLITE;
  return { store: new SqliteContextStore(sqlitePath), description: `sqlite (${sqlitePath})` };
}
