// `pnpm test:lane <6|7> [turbo arguments]`: the whole suite (as `pnpm test`) on one AI SDK lane
// (tooling/ai-lane/lane.mjs). A lane this Node supports runs here, in the checkout (lane 6 on
// Node 20 or newer, lane 7 on Node 22 or newer). Lane 7 on an older Node runs on Node 22 fetched
// from the npm registry, in a second install of the workspace for that Node, in its own folder
// (lane-workspace.mjs): the checkout's install, and its native addons, stay as they are.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lanes } from './ai-lane/lane.mjs';
import { laneWorkspace } from './lane-workspace.mjs';
import { nodeRuntime } from './node-runtime.mjs';
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
  const start = (node, workspace) =>
    spawnSync(node, [join(workspace, script), ...args], {
      cwd: workspace,
      stdio: 'inherit',
      // The workspace's own pnpm (a root devDependency) for turbo, whoever started this script.
      env: {
        ...process.env,
        CTXGRAPH_AI_LANE: lane,
        PATH: [dirname(node), join(workspace, 'node_modules', '.bin'), process.env.PATH ?? ''].join(
          delimiter,
        ),
      },
    }).status ?? 1;
  if (current >= needed) return start(process.execPath, root);
  const runtime = nodeRuntime(needed);
  console.log(
    `AI SDK ${lane} needs Node ${needed}+: running on Node ${runtime.version} (${runtime.node})`,
  );
  return start(runtime.node, laneWorkspace(runtime));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [lane, ...rest] = process.argv.slice(2);
  if (lane !== '6' && lane !== '7') {
    console.error('usage: pnpm test:lane <6|7> [turbo arguments, e.g. --filter=@ctxgraph/engine]');
    process.exit(2);
  }
  process.exitCode = runOnLane(lane, 'tooling/run-tests.mjs', rest);
}
