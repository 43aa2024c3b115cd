// The workspace's package folders, read from pnpm-workspace.yaml (its `packages:` list of folders
// and `folder/*` globs), for the scripts in this folder that visit every package; and the
// checkout's files, for the scripts that copy it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Every workspace package as `{ folder, relative, manifest }`, in the order the workspace file
 * lists them.
 * @param {string} [workspaceRoot] the folder holding pnpm-workspace.yaml (default: this repository)
 * @returns {{ folder: string, relative: string, manifest: Record<string, any> }[]}
 */
export function workspacePackages(workspaceRoot = root) {
  const text = readFileSync(join(workspaceRoot, 'pnpm-workspace.yaml'), 'utf8');
  const patterns = [];
  let inPackages = false;
  for (const line of text.split('\n')) {
    if (/^packages:\s*$/.test(line)) {
      inPackages = true;
      continue;
    }
    if (inPackages && /^\S/.test(line)) inPackages = false;
    const item = inPackages ? /^\s+-\s+["']?([^"'#\s]+)["']?/.exec(line) : null;
    if (item?.[1] !== undefined) patterns.push(item[1]);
  }
  const relatives = patterns.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    if (!existsSync(join(workspaceRoot, parent))) return [];
    return readdirSync(join(workspaceRoot, parent))
      .sort()
      .map((name) => `${parent}/${name}`);
  });
  return relatives
    .filter((relative) => existsSync(join(workspaceRoot, relative, 'package.json')))
    .map((relative) => ({
      folder: join(workspaceRoot, relative),
      relative,
      manifest: JSON.parse(readFileSync(join(workspaceRoot, relative, 'package.json'), 'utf8')),
    }));
}

/** Every file under `folder` except dependencies and build output, for a checkout without git. */
function filesWithoutGit(folder, prefix = '') {
  return readdirSync(join(folder, prefix), { withFileTypes: true }).flatMap((item) => {
    const path = prefix === '' ? item.name : `${prefix}/${item.name}`;
    if (['node_modules', 'dist', '.turbo', '.git'].includes(item.name)) return [];
    return item.isDirectory() ? filesWithoutGit(folder, path) : [path];
  });
}

/**
 * The checkout's files as they are now: tracked and new ones, not ignored ones (so no
 * node_modules, dist or test output), as paths relative to `folder`, `/`-separated.
 * @param {string} [folder] default: this repository
 * @returns {string[]}
 */
export function checkoutFiles(folder = root) {
  let listed;
  try {
    // safe.directory: CI may run as root on a checkout another user owns.
    listed = execFileSync(
      'git',
      ['-c', 'safe.directory=*', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      { cwd: folder, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 },
    ).split('\0');
  } catch {
    listed = filesWithoutGit(folder);
  }
  // A deleted file stays listed until its deletion is staged.
  return listed.filter(
    (path) =>
      path !== '' && existsSync(join(folder, path)) && statSync(join(folder, path)).isFile(),
  );
}
