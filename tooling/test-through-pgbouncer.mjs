// `pnpm test:pgbouncer`: the store-postgres suite once more, through PgBouncer in transaction
// mode (CTXGRAPH_PGBOUNCER=1; tooling/postgres-server.ts starts it in front of DATABASE_URL's
// server or an embedded one), as serverless deployments run. Without pgbouncer installed the run
// is skipped with a notice; in CI that is a failure instead.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runTurbo } from './turbo.mjs';

const folders = [
  ...(process.env.PATH ?? '').split(delimiter),
  '/usr/sbin',
  '/usr/local/sbin',
  '/usr/local/bin',
];
const installed = folders.some((folder) => folder !== '' && existsSync(join(folder, 'pgbouncer')));
const ci = process.env.CI === 'true' || process.env.CI === '1';
if (!installed) {
  if (ci) {
    console.error(
      'pgbouncer is not installed and CI must run the PostgreSQL suite through it: install it (apt-get install pgbouncer).',
    );
    process.exit(1);
  }
  console.log(
    'Skipped: pgbouncer is not installed, so the store-postgres suite did not run through PgBouncer (apt-get install pgbouncer, then run this again).',
  );
  process.exit(0);
}
process.exitCode = runTurbo(['run', 'test', '--filter=@ctxgraph/store-postgres'], {
  CTXGRAPH_PGBOUNCER: '1',
});
