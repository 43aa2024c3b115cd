// `pnpm test:lane <6|7> [turbo arguments]`: the whole suite (as `pnpm test`) on one AI SDK lane
// (tooling/ai-lane/lane.mjs). Lane 6 runs on this Node (20 or newer). Lane 7 needs Node 22 or
// newer: on an older Node it runs on Node 22 fetched from the npm registry, with the workspace's
// better-sqlite3 built for it (compiled once and cached; swapped in for the run and back after).
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lanes } from './ai-lane/lane.mjs';
import { nodeRuntime, withNativeAddonsFor } from './node-runtime.mjs';
import { root } from './workspace.mjs';

/**
 * Runs `script` (a file under the repository) with `args` on the AI SDK lane `lane`, on a Node
 * that lane supports; returns its exit status.
 * @param {'6' | '7'} lane
 * @param {string} script
 * @param {string[]} args
 * @returns {number}
 */
export function runOnLane(lane, script, args) {
  const needed = lanes[lane].node;
  const current = Number(process.versions.node.split('.')[0]);
  const environment = { ...process.env, CTXGRAPH_AI_LANE: lane };
  const start = (node) =>
    spawnSync(node, [join(root, script), ...args], {
      cwd: root,
      stdio: 'inherit',
      // The workspace's own pnpm (a root devDependency) for turbo, whoever started this script.
      env: {
        ...environment,
        PATH: [dirname(node), join(root, 'node_modules', '.bin'), process.env.PATH ?? ''].join(
          delimiter,
        ),
      },
    }).status ?? 1;
  if (current >= needed) return start(process.execPath);
  const runtime = nodeRuntime(needed);
  console.log(
    `AI SDK ${lane} needs Node ${needed}+: running on Node ${runtime.version} (${runtime.node})`,
  );
  environment.npm_config_nodedir = runtime.home;
  return withNativeAddonsFor(runtime, () => start(runtime.node));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [lane, ...rest] = process.argv.slice(2);
  if (lane !== '6' && lane !== '7') {
    console.error('usage: pnpm test:lane <6|7> [turbo arguments, e.g. --filter=@ctxgraph/engine]');
    process.exit(2);
  }
  process.exitCode = runOnLane(lane, 'tooling/run-tests.mjs', rest);
}
