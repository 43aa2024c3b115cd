import { packageTests } from '../../tooling/vitest.base.ts';

// Every test file gets its own random schemas on one server: the one DATABASE_URL names, or an
// embedded PostgreSQL the global setup starts and removes.
export default packageTests({
  globalSetup: ['src/__fixtures__/global-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
});
