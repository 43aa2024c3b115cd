// An npm project outside the workspace, as the consumer test makes them: npm run on a given Node,
// better-sqlite3 from a local prebuilt archive, and the installed packages read back (which
// copies, and whether every @ctxgraph one came from a tarball).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NodeRuntime } from '../node-runtime.mjs';
import { npmEnvironment } from '../npm-environment.mjs';

let cli: string | undefined;

/** The npm the machine has, as a script to run with any Node. */
export function npmCli(): string {
  if (cli !== undefined) return cli;
  const globalRoot = execFileSync('npm', ['root', '-g'], {
    encoding: 'utf8',
    env: npmEnvironment(),
  }).trim();
  const found = join(globalRoot, 'npm', 'bin', 'npm-cli.js');
  if (!existsSync(found)) throw new Error(`npm's CLI is not at ${found}.`);
  cli = found;
  return found;
}

/**
 * The environment npm runs in for a project: no setting npm does not know (npmEnvironment),
 * `runtime`'s Node first on PATH (install scripts run on it), no update notices.
 */
export function npmProjectEnvironment(
  runtime: NodeRuntime,
  environment: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return npmEnvironment({
    ...process.env,
    ...environment,
    PATH: `${dirname(runtime.node)}:${process.env.PATH ?? ''}`,
    npm_config_nodedir: runtime.home,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  });
}

/** Runs npm with `runtime`'s Node in `cwd`; throws with npm's output when it fails. */
export function npm(runtime: NodeRuntime, args: string[], cwd: string): string {
  const result = spawnSync(runtime.node, [npmCli(), ...args], {
    cwd,
    encoding: 'utf8',
    env: npmProjectEnvironment(runtime),
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/**
 * Lets better-sqlite3's install script in `project` take its addon from `prebuilds` (a folder
 * from betterSqlitePrebuilds) instead of downloading it: prebuild-install reads its
 * `local-prebuilds` setting from a `.prebuild-installrc` in a folder above the package.
 */
export function usePrebuilds(project: string, prebuilds: string): void {
  writeFileSync(join(project, '.prebuild-installrc'), `local-prebuilds=${prebuilds}\n`);
}

/** Installed packages (every folder with a package.json under node_modules, nested ones too). */
export function installedPackageFolders(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const folder = join(nodeModules, entry);
    const candidates = entry.startsWith('@')
      ? readdirSync(folder).map((inner) => join(folder, inner))
      : [folder];
    for (const candidate of candidates) {
      if (!existsSync(join(candidate, 'package.json'))) continue;
      found.push(candidate);
      found.push(...installedPackageFolders(join(candidate, 'node_modules')));
    }
  }
  return found;
}

/** Each installed copy of package `name` in `project`: its folder and version. */
export function installedCopies(
  project: string,
  name: string,
): { folder: string; version: string }[] {
  return installedPackageFolders(join(project, 'node_modules')).flatMap((folder) => {
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    return manifest.name === name ? [{ folder, version: manifest.version as string }] : [];
  });
}

/**
 * The @ctxgraph packages `project`'s lockfile has from anywhere but a tarball (the registry: an
 * install line that left one out, once a version of it is published), as `name from where`.
 */
export function ctxgraphNotFromTarballs(project: string): string[] {
  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { resolved?: string }>;
  };
  return Object.entries(lock.packages).flatMap(([path, entry]) =>
    /(^|\/)node_modules\/@ctxgraph\//.test(path) && !(entry.resolved ?? '').startsWith('file:')
      ? [`${path.replace(/^.*node_modules\//, '')} from ${entry.resolved ?? 'nowhere'}`]
      : [],
  );
}
