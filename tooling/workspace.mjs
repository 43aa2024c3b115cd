// The workspace's package folders, read from pnpm-workspace.yaml (its `packages:` list of folders
// and `folder/*` globs), for the scripts in this folder that visit every package.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
