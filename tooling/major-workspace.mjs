// The workspace installed a second time, for another Node, in a folder of its own: what
// `pnpm test:major 7` runs in on a Node older than 22. A native addon (better-sqlite3) loads only
// in the Node it was built for, so a run on another Node needs its own install; this one is a copy
// of the checkout's files (tracked and new, not ignored, as they are now), refreshed at each run
// and installed with pnpm on that Node, in the user's cache folder
// (`~/.cache/ctxgraph/majors/<checkout>-<hash of its path>/node-<major>`, or under
// $XDG_CACHE_HOME): outside the checkout, so no tool of the checkout sees it, and not under a
// node_modules folder, where Node 22 refuses to strip the types of the tsdown configs. The
// checkout's own install is never touched, so anything may run on it meanwhile.
//
// The copy is a git repository of its own (one commit per refresh), as turbo hashes a task's
// inputs through git. Its node_modules, dist folders and turbo cache stay between runs, so a
// later run installs and builds only what changed; delete the folder to start over.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { betterSqlitePrebuilds } from './node-runtime.mjs';
import { checkoutFiles, root } from './workspace.mjs';

/**
 * The folder of the second install for `runtime`'s Node major.
 * @param {import('./node-runtime.mjs').NodeRuntime} runtime
 * @param {string} [source] the checkout (default: this one)
 * @returns {string}
 */
function majorWorkspaceFolder(runtime, source = root) {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const checkout = `${basename(resolve(source))}-${createHash('sha256').update(resolve(source)).digest('hex').slice(0, 8)}`;
  return join(cache, 'ctxgraph', 'majors', checkout, `node-${runtime.version.split('.')[0]}`);
}

function git(args, cwd) {
  return execFileSync(
    'git',
    ['-c', 'user.name=major workspace', '-c', 'user.email=majors@invalid', ...args],
    { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 },
  );
}

/**
 * Makes `target` hold the checkout's files as they are now: copies what differs, deletes what the
 * checkout no longer has (the copy's ignored files, node_modules and build output, stay), and
 * commits. Returns how many files it copied or deleted.
 * @param {string} source
 * @param {string} target
 * @returns {number}
 */
export function refreshCopy(source, target) {
  mkdirSync(target, { recursive: true });
  if (!existsSync(join(target, '.git'))) git(['init', '-q'], target);
  const files = checkoutFiles(source);
  let changes = 0;
  for (const path of files) {
    const from = join(source, path);
    const to = join(target, path);
    if (
      existsSync(to) &&
      statSync(to).mode === statSync(from).mode &&
      readFileSync(to).equals(readFileSync(from))
    ) {
      continue;
    }
    mkdirSync(dirname(to), { recursive: true });
    rmSync(to, { force: true });
    copyFileSync(from, to);
    changes += 1;
  }
  const wanted = new Set(files);
  for (const path of checkoutFiles(target)) {
    if (wanted.has(path)) continue;
    rmSync(join(target, path));
    changes += 1;
  }
  git(['add', '-A'], target);
  git(['commit', '-q', '--no-verify', '--allow-empty', '-m', 'the checkout as it is now'], target);
  return changes;
}

/**
 * The workspace installed for `runtime` in its own folder (see the file's header): refreshed from
 * the checkout and installed with the workspace's pnpm on that Node (`--frozen-lockfile`, from
 * pnpm's store when it can), better-sqlite3 from a build for that Node (compiled once, cached).
 * @param {import('./node-runtime.mjs').NodeRuntime} runtime
 * @returns {string} the folder
 */
export function majorWorkspace(runtime) {
  const folder = majorWorkspaceFolder(runtime);
  const changes = refreshCopy(root, folder);
  console.log(
    `the workspace for Node ${runtime.version}: ${folder} (${changes} files refreshed from the checkout)`,
  );
  const prebuilds = mkdtempSync(join(tmpdir(), 'ctxgraph-major-prebuilds-'));
  try {
    const { folder: local } = betterSqlitePrebuilds(runtime, prebuilds);
    const pnpm = join(root, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
    execFileSync(
      runtime.node,
      [pnpm, 'install', '--frozen-lockfile', '--prefer-offline', '--reporter=append-only'],
      {
        cwd: folder,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: {
          ...process.env,
          // Install scripts (better-sqlite3's prebuild-install, node-gyp) run on this Node.
          PATH: [dirname(runtime.node), process.env.PATH ?? ''].join(delimiter),
          npm_config_nodedir: runtime.home,
          npm_config_better_sqlite3_local_prebuilds: local,
        },
      },
    );
  } finally {
    rmSync(prebuilds, { recursive: true, force: true });
  }
  return folder;
}
