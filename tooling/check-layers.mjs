// `pnpm check:layers`: keeps the layer map of docs/architecture.md true. Every workspace package
// has a place in the map below; a published package's source (src/, tests and fixtures excluded:
// tests may import sideways) may import only the workspace packages and the external packages
// the map allows it, and must declare each one as a dependency or peer; its manifest's runtime
// dependencies must be allowed too; and the runtime-neutral packages import no Node built-in
// and do not type-check against Node's types. Inside a package with a folder order (the engine's,
// `folderOrder` below), a source file imports no folder above its own. Exits 1 with one line per
// problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { root, workspacePackages } from './workspace.mjs';

/**
 * @typedef {object} LayerEntry
 * @property {number | 'tooling'} layer L0 (the contracts) up to L3 (apps); `tooling` for the
 *   repository's own scripts, which sit outside the layers.
 * @property {string[] | '*'} uses The workspace packages its source may import.
 * @property {string[] | '*'} external The npm packages its source may import and its manifest
 *   may list as dependencies or peers (drivers, `ai`, `zod`, …).
 * @property {boolean} [runtimeNeutral] No Node built-ins, no Node types: runs on edge runtimes.
 */

const core = '@ctxgraph/fragments-core';

/**
 * The layer map. Arrows point downward only: a package uses packages of lower layers, never one
 * of its own layer (sideways) or of a higher one (upward). A new package, or a new runtime
 * dependency of a library, is a change to this map and to docs/architecture.md.
 * @type {Readonly<Record<string, LayerEntry>>}
 */
export const layerMap = {
  '@ctxgraph/fragments-core': { layer: 0, uses: [], external: [], runtimeNeutral: true },
  '@ctxgraph/codecs': { layer: 1, uses: [core], external: ['ai'], runtimeNeutral: true },
  '@ctxgraph/serialization': { layer: 1, uses: [core], external: ['zod'], runtimeNeutral: true },
  '@ctxgraph/store-memory': { layer: 1, uses: [core], external: [] },
  // @types/better-sqlite3: the store's declarations use better-sqlite3's Database type.
  '@ctxgraph/store-sqlite': {
    layer: 1,
    uses: [core],
    external: ['better-sqlite3', '@types/better-sqlite3'],
  },
  '@ctxgraph/store-postgres': { layer: 1, uses: [core], external: ['postgres'] },
  // Runs inside a Cloudflare Durable Object: no Node built-ins, and no dependency (the storage
  // it uses is typed structurally); its tests import workerd's `cloudflare:` modules.
  '@ctxgraph/store-durable-object': {
    layer: 1,
    uses: [core],
    external: [],
    runtimeNeutral: true,
  },
  '@ctxgraph/renderer-xml': { layer: 1, uses: [core], external: [], runtimeNeutral: true },
  '@ctxgraph/renderer-markdown': { layer: 1, uses: [core], external: [], runtimeNeutral: true },
  '@ctxgraph/renderer-toon': {
    layer: 1,
    uses: [core],
    external: ['@toon-format/toon'],
    runtimeNeutral: true,
  },
  '@ctxgraph/tokenizer-o200k': {
    layer: 1,
    uses: [core],
    external: ['gpt-tokenizer'],
    runtimeNeutral: true,
  },
  '@ctxgraph/tokenizer-cl100k': {
    layer: 1,
    uses: [core],
    external: ['gpt-tokenizer'],
    runtimeNeutral: true,
  },
  '@ctxgraph/engine': {
    layer: 2,
    uses: ['@ctxgraph/codecs', '@ctxgraph/serialization', core],
    // zod: a peer because serialization's schemas are zod schemas.
    external: ['ai', 'zod'],
    runtimeNeutral: true,
  },
  // vitest: the kits are vitest suites; Node APIs only in the `./golden` subpath's helper (files)
  // and the `./process` subpath's (child processes, for tests across processes).
  '@ctxgraph/conformance': { layer: 2, uses: [core], external: ['vitest', 'ai'] },
  // The AI SDK request cycle: a library above the engine (L3), used by the apps.
  '@ctxgraph/ai-sdk': {
    layer: 3,
    uses: ['@ctxgraph/engine', '@ctxgraph/codecs', core],
    external: ['ai'],
    runtimeNeutral: true,
  },
  // The browser side of the chat contract: it talks to ai-sdk's handler over HTTP, imports none
  // of it (only the AI SDK's types).
  '@ctxgraph/client': { layer: 1, uses: [], external: ['ai'], runtimeNeutral: true },
  // React bindings over the client and the AI SDK's useChat.
  '@ctxgraph/react': {
    layer: 2,
    uses: ['@ctxgraph/client'],
    external: ['ai', '@ai-sdk/react', 'react'],
    runtimeNeutral: true,
  },
  '@ctxgraph/playground': { layer: 3, uses: '*', external: '*' },
  '@ctxgraph/chat-app': { layer: 3, uses: '*', external: '*' },
  '@ctxgraph/benchmarks': { layer: 3, uses: '*', external: '*' },
  '@ctxgraph/tooling': { layer: 'tooling', uses: '*', external: '*' },
  // Runs the runtime-neutral packages (and the stores that can) inside workerd.
  '@ctxgraph/edge-runtime-test': { layer: 'tooling', uses: '*', external: '*' },
};

/**
 * Subpath entries with one audience: only these packages' source may import them (tests, fixtures
 * and the apps, whose `uses` is `*`, may import any). The store kit is for stores (and the
 * conformance kit's example store); codecs' `./internal` is the engine's fast path, not for users.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const subpathAudience = {
  '@ctxgraph/fragments-core/store-kit': [
    '@ctxgraph/store-memory',
    '@ctxgraph/store-sqlite',
    '@ctxgraph/store-postgres',
    '@ctxgraph/store-durable-object',
    '@ctxgraph/conformance',
  ],
  '@ctxgraph/codecs/internal': ['@ctxgraph/engine'],
  // The request cycle's building blocks, for the apps of this repository and its own tests; apps
  // elsewhere import what they call from the package's main entry.
  '@ctxgraph/ai-sdk/internal': ['@ctxgraph/chat-app', '@ctxgraph/playground'],
};

/**
 * The folder order inside a package, from the ground up. A place is a folder of the package's
 * src/ (`'cache/'`) or a file right in src/ (`'model-prices.ts'`); a source file may import its
 * own place and the places below it, never one above (tests and fixtures may import any). Every
 * source file has a place. The engine's order is the one docs/architecture.md describes ("The
 * engine's folders"): the pure parts first, then the open chat (`session/`), then the features
 * that take it, then the facade.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const folderOrder = {
  '@ctxgraph/engine': [
    'model-prices.ts',
    'cache/',
    'budget/',
    'usage/',
    'session/',
    'context-lane/',
    'compaction/',
    'messages/',
    'conversation/',
    'resolve/',
    'branches/',
    'context-engine-options.ts',
    'chat-usage.ts',
    'engine-parts.ts',
    'inspect.ts',
    'context-engine.ts',
    'index.ts',
  ],
};

/**
 * The place of a file of src/ in a folder order: its folder (`'cache/'`), or the file itself when
 * it stands right in src/ (an import names it without its extension). -1 when it has none.
 */
function placeIndex(order, inSource) {
  const slash = inSource.indexOf('/');
  if (slash >= 0) return order.indexOf(inSource.slice(0, slash + 1));
  const bare = inSource.replace(/\.[cm]?[jt]sx?$/, '');
  return order.findIndex(
    (place) => !place.endsWith('/') && place.replace(/\.[cm]?[jt]sx?$/, '') === bare,
  );
}

/** Files that are tests or test helpers: they may import sideways (engine tests use a store). */
const testFile = /\.test(-d)?\.[cm]?[jt]sx?$|(^|\/)__(fixtures|tests|mocks)__\//;
const sourceFile = /\.[cm]?[jt]sx?$/;
const nodeBuiltins = new Set(builtinModules);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function isInside(folder, path) {
  const between = relative(folder, path);
  return (
    between === '' ||
    (!between.startsWith('..') && !between.startsWith(sep) && !/^[a-zA-Z]:/.test(between))
  );
}

function layerName(entry) {
  return entry.layer === 'tooling' ? 'tooling' : `L${entry.layer}`;
}

function sourceFiles(folder) {
  const files = [];
  const visit = (directory) => {
    if (!existsSync(directory)) return;
    for (const item of readdirSync(directory, { withFileTypes: true })) {
      if (item.name === 'node_modules' || item.name === 'dist') continue;
      const path = join(directory, item.name);
      if (item.isDirectory()) visit(path);
      else if (sourceFile.test(item.name) && !item.name.endsWith('.d.ts')) files.push(path);
    }
  };
  visit(join(folder, 'src'));
  return files.sort();
}

/** The `compilerOptions.types` a tsconfig ends up with, following relative `extends`. */
function tsconfigTypes(file) {
  if (!existsSync(file)) return undefined;
  const { config } = ts.readConfigFile(file, ts.sys.readFile);
  const own = config?.compilerOptions?.types;
  if (own !== undefined) return own;
  const parent = config?.extends;
  if (typeof parent === 'string' && parent.startsWith('.')) {
    const next = resolve(dirname(file), parent);
    return tsconfigTypes(next.endsWith('.json') ? next : `${next}.json`);
  }
  return undefined;
}

/**
 * Checks the workspace at `workspaceRoot` against `map`.
 * @param {{
 *   workspaceRoot?: string,
 *   map?: Readonly<Record<string, LayerEntry>>,
 *   order?: Readonly<Record<string, readonly string[]>>,
 * }} [options]
 * @returns {{ problems: string[], packages: number, files: number }}
 */
export function checkLayers({ workspaceRoot = root, map = layerMap, order = folderOrder } = {}) {
  const problems = [];
  const packages = workspacePackages(workspaceRoot);
  const names = new Set(packages.map(({ manifest }) => manifest.name));
  for (const name of Object.keys(map)) {
    if (!names.has(name)) {
      problems.push(
        `tooling/check-layers.mjs: the layer map names ${name}, which no workspace package is`,
      );
    }
  }
  let files = 0;
  for (const { folder, relative: where, manifest } of packages) {
    const name = manifest.name;
    const entry = map[name];
    if (entry === undefined) {
      problems.push(
        `${where}/package.json: ${name} has no place in the layer map: add it to tooling/check-layers.mjs and docs/architecture.md`,
      );
      continue;
    }
    const allowedPackage = (target) =>
      target === name || entry.uses === '*' || entry.uses.includes(target);
    const allowedExternal = (target) => entry.external === '*' || entry.external.includes(target);
    const describe = (target) => {
      const other = map[target];
      if (
        other === undefined ||
        typeof other.layer !== 'number' ||
        typeof entry.layer !== 'number'
      ) {
        return `not in what ${name} may use`;
      }
      const direction =
        other.layer > entry.layer
          ? 'upward'
          : other.layer === entry.layer
            ? 'sideways'
            : 'downward but not listed';
      return `${direction} (${layerName(entry)} → ${layerName(other)}); ${name} may use ${
        entry.uses.length === 0 ? 'no workspace package' : entry.uses.join(', ')
      }`;
    };

    // The manifest: what an installed copy pulls in at run time.
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const target of Object.keys(manifest[field] ?? {})) {
        if (names.has(target) || target.startsWith('@ctxgraph/')) {
          if (!allowedPackage(target)) {
            problems.push(`${where}/package.json: ${field} lists ${target}: ${describe(target)}`);
          }
        } else if (!allowedExternal(target)) {
          problems.push(
            `${where}/package.json: ${field} lists ${target}, a runtime dependency the layer map does not allow ${name} (${layerName(entry)}; allowed: ${
              entry.external.length === 0 ? 'none' : entry.external.join(', ')
            })`,
          );
        }
      }
    }

    // Runtime-neutral packages type-check without Node's types, so Node globals cannot creep in.
    if (entry.runtimeNeutral) {
      const types = tsconfigTypes(join(folder, 'tsconfig.json'));
      if (Array.isArray(types) && types.includes('node')) {
        problems.push(
          `${where}/tsconfig.json: ${name} is runtime-neutral, so its compilerOptions.types must not include "node"`,
        );
      }
    }

    // The package's folder order: every place named exists, every source file has one.
    const places = order[name];
    const source = join(folder, 'src');
    const inSourceOf = (path) => relative(source, path).split(sep).join('/');
    if (places !== undefined) {
      for (const place of places) {
        if (!existsSync(join(source, place))) {
          problems.push(
            `tooling/check-layers.mjs: the folder order of ${name} names ${place}, which ${where}/src does not have`,
          );
        }
      }
    }

    const declared = new Set(
      Object.keys({
        ...manifest.dependencies,
        ...manifest.peerDependencies,
        ...manifest.optionalDependencies,
      }),
    );
    for (const file of sourceFiles(folder)) {
      const path = relative(workspaceRoot, file).split(sep).join('/');
      if (testFile.test(path)) continue;
      files += 1;
      const place = places === undefined ? -1 : placeIndex(places, inSourceOf(file));
      if (places !== undefined && place < 0) {
        problems.push(
          `${path}: has no place in the folder order of ${name}: add its folder to folderOrder in tooling/check-layers.mjs and to docs/architecture.md`,
        );
      }
      const text = readFileSync(file, 'utf8');
      const lineOf = (position) => text.slice(0, position).split('\n').length;
      for (const { fileName: specifier, pos } of ts.preProcessFile(text, true, true)
        .importedFiles) {
        const location = `${path}:${lineOf(pos)}`;
        if (specifier.startsWith('.') || specifier.startsWith('/')) {
          const target = resolve(dirname(file), specifier);
          if (!isInside(folder, target)) {
            // Only the apps (L3) may reach the repository's own tooling (the test PostgreSQL
            // server) by path; a file of another package is imported by the package's name, so
            // its manifest and this map see the edge.
            const owner = packages.find((other) => isInside(other.folder, target));
            const toTooling = owner?.manifest.name === '@ctxgraph/tooling' && entry.uses === '*';
            if (!toTooling) {
              problems.push(
                `${location}: imports ${specifier} by path, outside ${where}${
                  owner === undefined ? '' : `: import ${owner.manifest.name} by its name instead`
                }`,
              );
            }
          } else if (place >= 0 && isInside(source, target)) {
            const to = placeIndex(places, inSourceOf(target));
            if (to > place) {
              problems.push(
                `${location}: imports ${specifier}: upward in the folder order of ${name} (${places[place]} → ${places[to]}); ${places[place]} may import ${
                  place === 0 ? 'no other place' : places.slice(0, place).join(', ')
                }`,
              );
            }
          }
          continue;
        }
        const builtin = specifier.startsWith('node:') || nodeBuiltins.has(specifier.split('/')[0]);
        if (builtin) {
          if (entry.runtimeNeutral) {
            problems.push(
              `${location}: imports ${specifier}, but ${name} is runtime-neutral (no Node built-ins outside tests)`,
            );
          }
          continue;
        }
        const target = packageName(specifier);
        const workspace = names.has(target) || target.startsWith('@ctxgraph/');
        if (workspace ? !allowedPackage(target) : !allowedExternal(target)) {
          problems.push(
            workspace
              ? `${location}: imports ${specifier}: ${describe(target)}`
              : `${location}: imports ${specifier}, which the layer map does not allow ${name} (allowed: ${
                  entry.external.length === 0 ? 'none' : entry.external.join(', ')
                })`,
          );
        } else if (
          entry.uses !== '*' &&
          subpathAudience[specifier] !== undefined &&
          !subpathAudience[specifier].includes(name)
        ) {
          problems.push(
            `${location}: imports ${specifier}, an entry only for ${subpathAudience[specifier].join(', ')} (import what ${name} needs from the package's main entry)`,
          );
        } else if (target !== name && manifest.private !== true && !declared.has(target)) {
          problems.push(
            `${location}: imports ${specifier}, which ${where}/package.json does not list in dependencies or peerDependencies (an installed copy could not resolve it)`,
          );
        }
      }
    }
  }
  return { problems, packages: packages.length, files };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  // An optional argument names another workspace to check (the tests use one built to fail).
  const workspaceRoot = process.argv[2] === undefined ? root : resolve(process.argv[2]);
  const { problems, packages, files } = checkLayers({ workspaceRoot });
  for (const problem of problems) console.error(problem);
  const took = Math.round(performance.now() - started);
  if (problems.length > 0) {
    console.error(
      `\ncheck:layers: ${problems.length} problem(s) in ${packages} packages (${files} source files, ${took} ms). The layer map: docs/architecture.md.`,
    );
    process.exitCode = 1;
  } else {
    console.log(
      `check:layers: ${packages} packages, ${files} source files, no problems (${took} ms).`,
    );
  }
}
