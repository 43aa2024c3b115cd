import type { TestProject } from 'vitest/node';
import {
  type PostgresServer,
  PostgresServerError,
  pgbouncerRequested,
  startPostgresServer,
} from '../../../../tooling/postgres-server.ts';

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
  let server: PostgresServer;
  try {
    server = await startPostgresServer({ pgbouncer: throughPgbouncer });
  } catch (error) {
    if (!(error instanceof PostgresServerError)) throw error;
    // The sentence says what to do; vitest would wrap it as an "Unhandled Error" with a banner.
    console.error(`\n${error.message}\n`);
    process.exit(1);
  }
  console.log(`store-postgres tests use ${server.description}`);
  project.provide('databaseUrl', server.url);
  project.provide('throughPgbouncer', throughPgbouncer);
  return server.stop;
}
