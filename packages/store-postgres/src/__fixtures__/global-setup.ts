import type { TestProject } from 'vitest/node';
import { pgbouncerRequested, startPostgresServer } from '../../../../tooling/postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The URL of the PostgreSQL server the tests use: DATABASE_URL or an embedded server, behind
     * PgBouncer in transaction mode when CTXGRAPH_PGBOUNCER=1 (then with `?prepare=false`).
     */
    databaseUrl: string;
    /**
     * True when the tests run through PgBouncer in transaction mode, where session-level
     * features (startup parameters such as `statement_timeout`, session advisory locks, LISTEN)
     * do not work: a test of one of them can `it.skipIf(inject('throughPgbouncer'))`.
     */
    throughPgbouncer: boolean;
  }
}

/** Starts (or picks up) the one server every test file of the run shares, and stops it after. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const throughPgbouncer = pgbouncerRequested();
  const server = await startPostgresServer({ pgbouncer: throughPgbouncer });
  console.log(`store-postgres tests use ${server.description}`);
  project.provide('databaseUrl', server.url);
  project.provide('throughPgbouncer', throughPgbouncer);
  return server.stop;
}
