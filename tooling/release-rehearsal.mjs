// `pnpm release:rehearse`: the release, rehearsed in a temporary copy of the repository (its
// files as they are now, the built `dist` folders included), never touching the repository's
// files or git state. In the copy it runs `changeset version`, checks that every published
// package came out at a real version (0.1.0 for the first release) with a CHANGELOG, then packs
// each package as `pnpm publish` would (`pnpm pack`: `workspace:` ranges replaced by real ones)
// and checks each tarball: no tests, no fixtures, no source map pointing at a file the tarball
// lacks, a manifest with repository, license, engines and sideEffects, the LICENSE, README and
// CHANGELOG. Prints one row per package (version, files, packed and unpacked size) and exits 1
// with one line per problem. Nothing is published. Run the build first (the script does).
//
// `--out <folder>` leaves every tarball in that folder (made when missing) and prints the
// `npm install` line that takes the root README's packages from it: the root README's "Try it
// before the first release". `--keep` leaves the temporary copy on disk and prints where;
// `--files` lists each tarball's files.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rootInstallLine } from './readme-install.mjs';
import { checkoutFiles, root, workspacePackages } from './workspace.mjs';

/**
 * @typedef {object} PackedPackage
 * @property {string} name
 * @property {string} folder The package's folder, relative to the repository root.
 * @property {string} before Its version in the repository.
 * @property {string} version Its version after `changeset version`.
 * @property {number} files Entries in its tarball.
 * @property {number} packedBytes The tarball's size.
 * @property {number} unpackedBytes The files' total size.
 * @property {string[]} entries The tarball's paths, without the leading `package/`.
 * @property {string[]} siblings The published packages it needs installed beside it (its
 *   dependencies and peers among them).
 * @property {string | undefined} tarball With `packInto`: the tarball's copy there.
 */

/**
 * @typedef {object} Rehearsal
 * @property {PackedPackage[]} packages One per published package, in workspace order.
 * @property {string[]} problems One sentence each; empty when the release would be sound.
 */

const testFile = /\.test(-d)?\.[cm]?[jt]sx?$/;
const fixtureFolder = /(^|\/)__(fixtures|tests|mocks)__\//;
const dependencyFields = [
  'dependencies',
  'peerDependencies',
  'optionalDependencies',
  'devDependencies',
];

function run(command, args, cwd) {
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true', TURBO_TELEMETRY_DISABLED: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The repository's files as they are now (tracked and new, not ignored), then each `dist`. */
function copyRepository(source, target, packages) {
  for (const path of checkoutFiles(source)) {
    mkdirSync(dirname(join(target, path)), { recursive: true });
    copyFileSync(join(source, path), join(target, path));
  }
  for (const { relative } of packages) {
    const dist = join(source, relative, 'dist');
    if (existsSync(dist)) cpSync(dist, join(target, relative, 'dist'), { recursive: true });
  }
}

/** `{ path, bytes }` for every file of a tarball, paths without the leading `package/`. */
function tarballEntries(tarball) {
  return run('tar', ['-tvzf', tarball], dirname(tarball))
    .split('\n')
    .filter((line) => line.startsWith('-'))
    .map((line) => {
      const fields = line.trim().split(/\s+/);
      const path = fields.slice(5).join(' ');
      return { path: path.replace(/^package\//, ''), bytes: Number(fields[2]) };
    });
}

function readFromTarball(tarball, path) {
  return run('tar', ['-xzOf', tarball, `package/${path}`], dirname(tarball));
}

/** Every string target of an `exports` map. */
function exportTargets(exportsField) {
  if (typeof exportsField === 'string') return [exportsField];
  if (exportsField === null || typeof exportsField !== 'object') return [];
  return Object.values(exportsField).flatMap(exportTargets);
}

/** Whether a version has the `x.y.z` form of a release (no pre-release tag). */
function isRelease(version) {
  return /^\d+\.\d+\.\d+$/.test(version);
}

/**
 * Rehearses the release in a temporary copy; see the file's header.
 * @param {{ repository?: string, keep?: boolean, packInto?: string }} [options] `repository`: the
 *   checkout to copy (default: this one); `keep`: leave the copy on disk and print where;
 *   `packInto`: an existing folder to copy the tarballs into (the consumer test installs them).
 * @returns {Rehearsal}
 */
export function rehearseRelease(options = {}) {
  const source = options.repository ?? root;
  const published = workspacePackages(source).filter(({ manifest }) => manifest.private !== true);
  const problems = [];
  const copy = mkdtempSync(join(tmpdir(), 'ctxgraph-release-'));
  try {
    copyRepository(source, copy, published);
    // changesets reads git for the commit each changeset came in; the copy gets one commit.
    const git = ['-c', 'user.name=release rehearsal', '-c', 'user.email=rehearsal@invalid'];
    run('git', ['init', '-q'], copy);
    run('git', [...git, 'add', '-A'], copy);
    run('git', [...git, 'commit', '-q', '--no-verify', '-m', 'release rehearsal'], copy);
    const changesetBin = join(source, 'node_modules', '@changesets', 'cli', 'bin.js');
    run(process.execPath, [changesetBin, 'version'], copy);

    // pnpm pack reads the version a `workspace:` range stands for from the installed sibling:
    // link each one (an install of the copy would take far longer and change nothing packed).
    const folders = new Map(published.map(({ relative, manifest }) => [manifest.name, relative]));
    for (const { relative, manifest } of published) {
      for (const field of dependencyFields) {
        for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
          const sibling = folders.get(dependency);
          if (!String(range).startsWith('workspace:') || sibling === undefined) continue;
          const link = join(copy, relative, 'node_modules', dependency);
          if (existsSync(link)) continue;
          mkdirSync(dirname(link), { recursive: true });
          symlinkSync(join(copy, sibling), link, 'dir');
        }
      }
    }

    const tarballs = join(copy, '.tarballs');
    mkdirSync(tarballs);
    const pnpmBin = join(source, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
    const packages = [];
    for (const { relative, manifest: before } of published) {
      const folder = join(copy, relative);
      const after = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
      const where = `${after.name} (${relative})`;
      if (!isRelease(after.version)) {
        problems.push(
          `${where}: changeset version left ${after.version}, not a release; add a changeset for it.`,
        );
      }
      const placeholder = /^(\d+\.\d+\.\d+)-0$/.exec(before.version);
      if (placeholder !== null && after.version !== placeholder[1]) {
        problems.push(
          `${where}: ${before.version} stands for the unreleased ${placeholder[1]}, but changeset version made it ${after.version}.`,
        );
      }
      const changelog = join(folder, 'CHANGELOG.md');
      if (
        !existsSync(changelog) ||
        !readFileSync(changelog, 'utf8').includes(`## ${after.version}`)
      ) {
        problems.push(`${where}: CHANGELOG.md has no "## ${after.version}" section.`);
      }

      const packed = run(
        process.execPath,
        [pnpmBin, 'pack', '--pack-destination', tarballs, '--json'],
        folder,
      );
      const { filename } = JSON.parse(packed);
      const tarball = filename.startsWith('/') ? filename : join(tarballs, filename);
      const entries = tarballEntries(tarball);
      const paths = new Set(entries.map(({ path }) => path));

      for (const { path } of entries) {
        if (testFile.test(path)) problems.push(`${where}: ships a test, ${path}.`);
        if (fixtureFolder.test(path)) problems.push(`${where}: ships a fixture, ${path}.`);
        if (!path.endsWith('.map')) continue;
        const map = JSON.parse(readFromTarball(tarball, path));
        for (const mapped of map.sources ?? []) {
          const target = posix.normalize(
            posix.join(posix.dirname(path), map.sourceRoot ?? '', mapped),
          );
          if (!paths.has(target)) {
            problems.push(`${where}: ${path} maps ${mapped}, which the package does not ship.`);
          }
        }
      }
      for (const needed of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) {
        if (!paths.has(needed)) problems.push(`${where}: the tarball has no ${needed}.`);
      }

      const manifest = JSON.parse(readFromTarball(tarball, 'package.json'));
      for (const field of dependencyFields) {
        for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
          if (String(range).startsWith('workspace:')) {
            problems.push(`${where}: ${field}.${dependency} is still ${range}.`);
          }
        }
      }
      if (manifest.version !== after.version) {
        problems.push(`${where}: the tarball says ${manifest.version}, not ${after.version}.`);
      }
      const repository = manifest.repository;
      if (typeof repository?.url !== 'string' || repository.directory !== relative) {
        problems.push(`${where}: repository needs a url and directory "${relative}".`);
      }
      if (manifest.license !== 'MIT') problems.push(`${where}: license is not MIT.`);
      if (typeof manifest.engines?.node !== 'string') problems.push(`${where}: no engines.node.`);
      if (manifest.sideEffects === undefined) problems.push(`${where}: sideEffects is not set.`);
      for (const target of exportTargets(manifest.exports)) {
        if (!paths.has(posix.normalize(target))) {
          problems.push(`${where}: exports points at ${target}, which the tarball lacks.`);
        }
      }

      let kept;
      if (options.packInto !== undefined) {
        kept = join(options.packInto, basename(tarball));
        copyFileSync(tarball, kept);
      }
      packages.push({
        tarball: kept,
        siblings: ['dependencies', 'peerDependencies'].flatMap((field) =>
          Object.keys(before[field] ?? {}).filter((name) => folders.has(name)),
        ),
        name: after.name,
        folder: relative,
        before: before.version,
        version: after.version,
        files: entries.length,
        packedBytes: statSync(tarball).size,
        unpackedBytes: entries.reduce((sum, { bytes }) => sum + bytes, 0),
        entries: [...paths].sort(),
      });
    }
    return { packages, problems };
  } finally {
    if (options.keep === true) console.log(`the rehearsal's copy: ${copy}`);
    else rmSync(copy, { recursive: true, force: true });
  }
}

/**
 * `names` with every published package they need (dependencies and peers, transitively), in
 * order: `names` first, then what they need, in the order found. Names that are not published
 * packages (`ai`, `zod`) are left out.
 * @param {readonly string[]} names
 * @param {readonly PackedPackage[]} packages
 * @returns {string[]}
 */
export function withSiblings(names, packages) {
  const byName = new Map(packages.map((item) => [item.name, item]));
  const needed = names.filter((name) => byName.has(name));
  for (let index = 0; index < needed.length; index += 1) {
    for (const sibling of byName.get(needed[index])?.siblings ?? []) {
      if (!needed.includes(sibling)) needed.push(sibling);
    }
  }
  return needed;
}

/** A word a POSIX shell reads as written. */
function shellWord(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The `npm install` line that installs `names` (the root README's install line, say) from the
 * tarballs in `folder`: each published package by its tarball's path there, with every published
 * package it needs (npm would look for a missing one on the registry), then the other names as
 * they are.
 * @param {readonly string[]} names
 * @param {readonly PackedPackage[]} packages
 * @param {string} folder where the tarballs are (as the line should spell it)
 * @returns {string}
 */
export function tarballInstallLine(names, packages, folder) {
  const byName = new Map(packages.map((item) => [item.name, item]));
  const tarballs = withSiblings(names, packages).map((name) => {
    const tarball = byName.get(name)?.tarball;
    if (tarball === undefined) throw new Error(`${name} was not packed into a folder.`);
    return `${folder}/${basename(tarball)}`;
  });
  const others = names.filter((name) => !byName.has(name));
  return ['npm', 'install', ...tarballs, ...others].map(shellWord).join(' ');
}

function kilobytes(bytes) {
  return `${(bytes / 1024).toFixed(1)} kB`;
}

/**
 * The rehearsal as a Markdown table: package, version, files, packed and unpacked size.
 * @param {PackedPackage[]} packages
 * @returns {string}
 */
export function releaseTable(packages) {
  const rows = packages.map(
    (item) =>
      `| ${item.name} | ${item.before} → ${item.version} | ${item.files} | ${kilobytes(item.packedBytes)} | ${kilobytes(item.unpackedBytes)} |`,
  );
  return [
    '| Package | Version | Files | Packed | Unpacked |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/**
 * `--out <folder>`: the folder to leave the tarballs in, made when missing; the tarballs of an
 * earlier run there are replaced.
 */
function outFolder(argv) {
  const flag = argv.indexOf('--out');
  if (flag === -1) return undefined;
  const value = argv[flag + 1];
  if (value === undefined || value.startsWith('--')) {
    console.error('usage: pnpm release:rehearse [--out <folder>] [--files] [--keep]');
    process.exit(2);
  }
  const folder = resolve(value);
  mkdirSync(folder, { recursive: true });
  for (const entry of readdirSync(folder)) {
    if (/^ctxgraph-.*\.tgz$/.test(entry)) rmSync(join(folder, entry));
  }
  return folder;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const out = outFolder(argv);
  const { packages, problems } = rehearseRelease({
    keep: argv.includes('--keep'),
    ...(out === undefined ? {} : { packInto: out }),
  });
  console.log(releaseTable(packages));
  if (argv.includes('--files')) {
    for (const item of packages)
      console.log(`\n${item.name}@${item.version}\n  ${item.entries.join('\n  ')}`);
  }
  for (const problem of problems) console.error(problem);
  console.log(
    problems.length === 0
      ? `release rehearsal: ${packages.length} packages would publish cleanly (nothing was published).`
      : `release rehearsal: ${problems.length} problems.`,
  );
  if (out !== undefined && problems.length === 0) {
    console.log(`\nThe ${packages.length} tarballs are in ${out}.`);
    console.log("To install the root README's packages from them, in your project:");
    console.log(`  ${tarballInstallLine(rootInstallLine(), packages, out)}`);
  }
  process.exitCode = problems.length === 0 ? 0 : 1;
}
