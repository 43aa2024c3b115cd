// Other Node majors for the majors and the consumer test, from the npm registry (the official
// builds, published as `node-<platform>-<arch>`), and the workspace's native addon
// (better-sqlite3) built for them. A native addon loads only in the Node it was built for: an
// install for another Node (the major's second install, major-workspace.mjs; the consumer test's
// projects) takes that Node's build as a local prebuilt archive (`betterSqlitePrebuilds`), and the
// workspace's own install is never changed. Builds are kept in node_modules/.cache/, one per Node
// ABI, so each is compiled once.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { npmEnvironment } from './npm-environment.mjs';
import { root } from './workspace.mjs';

const cache = join(root, 'node_modules', '.cache');

/**
 * @typedef {object} NodeRuntime
 * @property {string} node The `node` binary.
 * @property {string} home Its install folder (headers under `include/node`, for node-gyp).
 * @property {string} version e.g. `22.23.3`
 * @property {string} abi `process.versions.modules` of that Node (its native-addon ABI).
 */

function run(command, args, options = {}) {
  return execFileSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
}

function describe(node, home) {
  const [version, abi] = run(node, ['-p', 'process.versions.node + " " + process.versions.modules'])
    .trim()
    .split(' ');
  return { node, home, version, abi };
}

/**
 * A Node of the given major: this process's when it is that major, else the newest release of
 * that major from the npm registry (`node-<platform>-<arch>@<major>`), installed once under
 * node_modules/.cache/ctxgraph-node/<major>.
 * @param {number} major
 * @returns {NodeRuntime}
 */
export function nodeRuntime(major) {
  if (Number(process.versions.node.split('.')[0]) === major) {
    return describe(process.execPath, dirname(dirname(process.execPath)));
  }
  const name = `node-${process.platform}-${process.arch}`;
  const prefix = join(cache, 'ctxgraph-node', String(major));
  const home = join(prefix, 'node_modules', name);
  const node = join(home, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(node)) {
    console.log(`fetching Node ${major} from the npm registry (${name}@${major})`);
    mkdirSync(prefix, { recursive: true });
    const result = spawnSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        `${name}@${major}`,
      ],
      { stdio: 'inherit', shell: process.platform === 'win32', env: npmEnvironment() },
    );
    if (result.status !== 0 || !existsSync(node)) {
      throw new Error(`Could not install ${name}@${major} from the npm registry.`);
    }
  }
  return describe(node, home);
}

/** The workspace's better-sqlite3 folders (one per installed version). */
function betterSqliteFolders() {
  const store = join(root, 'node_modules', '.pnpm');
  if (!existsSync(store)) return [];
  return readdirSync(store)
    .filter((entry) => entry.startsWith('better-sqlite3@'))
    .map((entry) => join(store, entry, 'node_modules', 'better-sqlite3'))
    .filter((folder) => existsSync(join(folder, 'binding.gyp')));
}

/** node-gyp: npm's own copy when npm has one, else from the registry through npx. */
function nodeGyp() {
  try {
    const bundled = join(
      run('npm', ['root', '-g']).trim(),
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    );
    if (existsSync(bundled)) return [bundled];
  } catch {}
  return undefined;
}

/**
 * better-sqlite3's addon built for `runtime`: from the cache, or compiled once (in a temporary
 * copy of the package, so the workspace's own build is never touched) and cached.
 * @param {string} folder a better-sqlite3 package folder
 * @param {NodeRuntime} runtime
 * @returns {string} the built `.node` file
 */
function betterSqliteBuild(folder, runtime) {
  const { version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  const cached = join(
    cache,
    'ctxgraph-native',
    `better-sqlite3@${version}`,
    `abi${runtime.abi}-${process.platform}-${process.arch}`,
    'better_sqlite3.node',
  );
  if (existsSync(cached)) return cached;
  const own = join(folder, 'build', 'Release', 'better_sqlite3.node');
  if (runtime.abi === process.versions.modules && existsSync(own)) {
    return own; // installed by the workspace's install, for this Node
  }
  console.log(
    `building better-sqlite3@${version} for Node ${runtime.version} (once; cached in ${dirname(cached)})`,
  );
  const copy = mkdtempSync(join(tmpdir(), 'ctxgraph-better-sqlite3-'));
  try {
    cpSync(folder, copy, {
      recursive: true,
      dereference: true,
      filter: (source) =>
        !source.startsWith(join(folder, 'build')) &&
        !source.startsWith(join(folder, 'node_modules')),
    });
    const gyp = nodeGyp();
    const [command, args] =
      gyp === undefined
        ? ['npx', ['-y', 'node-gyp', 'rebuild', '--release', `--nodedir=${runtime.home}`]]
        : [runtime.node, [...gyp, 'rebuild', '--release', `--nodedir=${runtime.home}`]];
    const result = spawnSync(command, args, {
      cwd: copy,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        PATH: `${dirname(runtime.node)}:${process.env.PATH ?? ''}`,
        npm_config_nodedir: runtime.home,
        JOBS: 'max',
      },
    });
    const built = join(copy, 'build', 'Release', 'better_sqlite3.node');
    if (result.status !== 0 || !existsSync(built)) {
      // The compiler's output only when it failed: a good build prints pages of warnings.
      throw new Error(
        `Could not build better-sqlite3@${version} for Node ${runtime.version}:\n${result.stdout}\n${result.stderr}`,
      );
    }
    mkdirSync(dirname(cached), { recursive: true });
    copyFileSync(built, `${cached}.partial`);
    renameSync(`${cached}.partial`, cached);
    return cached;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/**
 * A folder holding better-sqlite3's addon for `runtime` as a prebuilt archive, named as
 * prebuild-install looks for it, for an install that should use it instead of downloading one
 * from GitHub (which some machines cannot reach) or compiling: prebuild-install's
 * `local-prebuilds` setting (a `.prebuild-installrc` file in an npm project, the
 * `npm_config_better_sqlite3_local_prebuilds` variable for pnpm). For the better-sqlite3 version
 * the workspace installs (the lockfile's).
 * @param {NodeRuntime} runtime
 * @param {string} into an empty folder to write in
 * @returns {{ version: string, folder: string }} better-sqlite3's version, and the folder
 */
export function betterSqlitePrebuilds(runtime, into) {
  const [packageFolder] = betterSqliteFolders();
  if (packageFolder === undefined)
    throw new Error('the workspace has no better-sqlite3 installed.');
  const { version } = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8'));
  const built = betterSqliteBuild(packageFolder, runtime);
  const staging = join(into, 'staging');
  mkdirSync(join(staging, 'build', 'Release'), { recursive: true });
  copyFileSync(built, join(staging, 'build', 'Release', 'better_sqlite3.node'));
  const folder = join(into, 'prebuilds');
  mkdirSync(folder, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${runtime.abi}-${process.platform}-${process.arch}.tar.gz`;
  run('tar', ['-czf', join(folder, name), '-C', staging, 'build']);
  rmSync(staging, { recursive: true, force: true });
  return { version, folder };
}
