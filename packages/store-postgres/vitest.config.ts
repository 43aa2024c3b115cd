import { packageTests } from '../../tooling/vitest.base.ts';

// Every test file gets its own random schemas on one server: the one DATABASE_URL names, or an
// embedded PostgreSQL the global setup starts and removes (tooling/postgres-server.ts), with
// PgBouncer in transaction mode in front when CTXGRAPH_PGBOUNCER=1.
export default packageTests({
  globalSetup: ['src/__fixtures__/global-setup.ts'],
});
