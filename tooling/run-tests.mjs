// `pnpm test`: every workspace package's suite through turbo (which builds what they import
// first), one failing suite never stopping the others, then one closing line with the totals.
// Extra arguments go to turbo (`pnpm test --filter=@ctxgraph/engine`).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { aiMajor } from './ai-major/major.mjs';
import { runTurbo } from './turbo.mjs';
import { root, workspacePackages } from './workspace.mjs';

const packages = workspacePackages();

// `pnpm install-test` installs only the root project, so every package import fails later with
// an error that does not say why: say it here, once.
const notInstalled = packages.filter(({ folder, manifest }) => {
  const declares =
    Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).length > 0;
  return declares && !existsSync(join(folder, 'node_modules'));
});
if (notInstalled.length > 0) {
  console.error(
    `The workspace packages are not installed (${notInstalled[0].relative} has no node_modules): run \`npx -y pnpm@10.34.9 install && npx -y pnpm@10.34.9 test\` (install-test installs only the root project).`,
  );
  process.exit(1);
}

// Totals must come from this run only.
for (const { folder } of packages) rmSync(join(folder, '.vitest-report.json'), { force: true });

const major = aiMajor();
console.log(
  `AI SDK ${major} on Node ${process.versions.node} (pnpm test:major 6|7 runs the other)`,
);
const extra = process.argv.slice(2);
const status = runTurbo(
  ['run', 'test', '--continue=dependencies-successful', '--concurrency=3', ...extra],
  { CTXGRAPH_TEST_REPORT: '1', CTXGRAPH_AI_MAJOR: major },
);

console.log('');
const summary = spawnSync(
  process.execPath,
  [join(root, 'tooling', 'test-summary.mjs'), ...(extra.length > 0 ? ['--partial'] : [])],
  { stdio: 'inherit' },
);
process.exitCode = status === 0 && summary.status === 0 ? 0 : 1;
