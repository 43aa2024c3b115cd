// `pnpm test:major <6|7> [turbo arguments]`: the whole suite (as `pnpm test`) on one AI SDK major
// (tooling/ai-major/major.mjs). A major this Node supports runs here, in the checkout (AI SDK 6 on
// Node 20 or newer, AI SDK 7 on Node 22 or newer). AI SDK 7 on an older Node runs on Node 22 fetched
// from the npm registry, in a second install of the workspace for that Node, in its own folder
// (major-workspace.mjs): the checkout's install, and its native addons, stay as they are.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { majors } from './ai-major/major.mjs';
import { majorWorkspace } from './major-workspace.mjs';
import { nodeRuntime } from './node-runtime.mjs';
import { root } from './workspace.mjs';

/**
 * Runs `script` (a file under the repository) with `args` on the AI SDK major `major`, on a Node
 * that major supports; returns its exit status.
 * @param {'6' | '7'} major
 * @param {string} script
 * @param {string[]} args
 * @returns {number}
 */
export function runOnMajor(major, script, args) {
  const needed = majors[major].node;
  const current = Number(process.versions.node.split('.')[0]);
  const start = (node, workspace) =>
    spawnSync(node, [join(workspace, script), ...args], {
      cwd: workspace,
      stdio: 'inherit',
      // The workspace's own pnpm (a root devDependency) for turbo, whoever started this script.
      env: {
        ...process.env,
        CTXGRAPH_AI_MAJOR: major,
        PATH: [dirname(node), join(workspace, 'node_modules', '.bin'), process.env.PATH ?? ''].join(
          delimiter,
        ),
      },
    }).status ?? 1;
  if (current >= needed) return start(process.execPath, root);
  const runtime = nodeRuntime(needed);
  console.log(
    `AI SDK ${major} needs Node ${needed}+: running on Node ${runtime.version} (${runtime.node})`,
  );
  return start(runtime.node, majorWorkspace(runtime));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [major, ...rest] = process.argv.slice(2);
  if (major !== '6' && major !== '7') {
    console.error('usage: pnpm test:major <6|7> [turbo arguments, e.g. --filter=@ctxgraph/engine]');
    process.exit(2);
  }
  process.exitCode = runOnMajor(major, 'tooling/run-tests.mjs', rest);
}
