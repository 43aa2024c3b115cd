// Runs every benchmark script in sequence. Each prints its own figures; nothing here asserts timings.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const scripts = [
  'render-bench.ts',
  'engine-bench.ts',
  'budget-bench.ts',
  'calibration-bench.ts',
  'cache-sim-bench.ts',
  'sqlite-bench.ts',
  'postgres-bench.ts',
  'compaction-bench.ts',
  'drop-bench.ts',
  'search-cost-bench.ts',
  'branch-ops-bench.ts',
  'live-reply-bench.ts',
  'durable-object-bench.ts',
];
let failed = false;
for (const script of scripts) {
  const path = fileURLToPath(new URL(script, import.meta.url));
  if (!existsSync(path)) continue;
  console.log(`\n=== ${script} ===`);
  // This process's own flags (tsx, the AI SDK major's hooks), so each script runs as `bench:*` does.
  const result = spawnSync(process.execPath, [...process.execArgv, path], { stdio: 'inherit' });
  if (result.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
