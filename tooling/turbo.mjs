// Runs the workspace's turbo with its telemetry off, on any OS (an `ENV=1 turbo` prefix in a
// package.json script would need a POSIX shell). `node tooling/turbo.mjs run build` = `turbo run build`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { root } from './workspace.mjs';

/**
 * Runs turbo with `args` in the repository root and returns its exit status (1 when it could
 * not start).
 * @param {string[]} args
 * @param {Record<string, string>} [environment] added to this process's environment
 * @returns {number}
 */
export function runTurbo(args, environment = {}) {
  const local = join(
    root,
    'node_modules',
    '.bin',
    process.platform === 'win32' ? 'turbo.cmd' : 'turbo',
  );
  const result = spawnSync(existsSync(local) ? local : 'turbo', args, {
    cwd: root,
    stdio: 'inherit',
    shell: process.platform === 'win32',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', ...environment },
  });
  if (result.error !== undefined) {
    console.error(
      `Could not run turbo (${result.error.message}): run \`npx -y pnpm@10.34.9 install\` first.`,
    );
    return 1;
  }
  return result.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = runTurbo(process.argv.slice(2));
}
