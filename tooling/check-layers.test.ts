// The layer check: this repository passes it, and a workspace that breaks each rule fails it with
// a line that names the file, the import and the rule.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLayers, folderOrder, layerMap } from './check-layers.mjs';
import { root } from './workspace.mjs';

describe('check-layers on this repository', () => {
  it('finds no problem', () => {
    const result = checkLayers();
    expect(result.problems).toEqual([]);
    expect(result.packages).toBe(Object.keys(layerMap).length);
    expect(result.files).toBeGreaterThan(50);
  });
});

describe('check-layers on a workspace that breaks the map', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'ctxgraph-layers-'));
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), text);
  };
  const manifest = (name: string, fields: Record<string, unknown> = {}): string =>
    JSON.stringify({ name, type: 'module', ...fields });
  const core = { peerDependencies: { '@ctxgraph/fragments-core': 'workspace:^' } };

  write('pnpm-workspace.yaml', 'packages:\n  - packages/*\n  - apps/*\n');
  write('packages/fragments-core/package.json', manifest('@ctxgraph/fragments-core'));
  write('packages/fragments-core/tsconfig.json', '{ "compilerOptions": { "types": [] } }');
  // Upward: L0 → L2.
  write(
    'packages/fragments-core/src/index.ts',
    "export const a = 1;\nimport { ContextEngine } from '@ctxgraph/engine';\n",
  );
  write('packages/store-memory/package.json', manifest('@ctxgraph/store-memory', core));
  write(
    'packages/store-memory/src/index.ts',
    "import { role } from '@ctxgraph/fragments-core';\nexport { role };\n",
  );
  // Tests and fixtures may import sideways and upward: none of these is a problem.
  write(
    'packages/store-memory/src/store.test.ts',
    "import { XmlRenderer } from '@ctxgraph/renderer-xml';\nimport { ContextEngine } from '@ctxgraph/engine';\n",
  );
  write(
    'packages/store-memory/src/__fixtures__/kit.ts',
    "import { readFileSync } from 'node:fs';\nimport '@ctxgraph/engine';\n",
  );
  write('packages/renderer-xml/package.json', manifest('@ctxgraph/renderer-xml', core));
  write(
    'packages/renderer-xml/tsconfig.json',
    '{ "compilerOptions": { "types": ["node"] } }', // runtime-neutral: no Node types
  );
  write(
    'packages/renderer-xml/src/xml-renderer.ts',
    [
      "import type { InMemoryContextStore } from '@ctxgraph/store-memory';", // sideways, type-only
      "import { readFile } from 'node:fs/promises';", // Node built-in in a runtime-neutral package
      "import path from 'path';", // the same, without the prefix
      "export * from '../../store-memory/src/index.ts';", // another package's file by path
      "const lazy = () => import('@xmldom/xmldom');", // an external the map does not allow
      '// import { ContextEngine } from "@ctxgraph/engine"; (a comment is not an import)',
    ].join('\n'),
  );
  write(
    'packages/engine/package.json',
    manifest('@ctxgraph/engine', {
      dependencies: { '@ctxgraph/store-memory': 'workspace:^' }, // L2 → L1, but not in its list
      peerDependencies: { '@ctxgraph/fragments-core': 'workspace:^', ai: '^6.0.0' },
      devDependencies: { '@ctxgraph/codecs': 'workspace:*' },
    }),
  );
  write(
    'packages/engine/src/index.ts',
    // Allowed, but declared only as a devDependency: an installed copy could not resolve it.
    "import { user } from '@ctxgraph/codecs';\nimport { generateText } from 'ai';\nexport { user, generateText };\n",
  );
  write('packages/codecs/package.json', manifest('@ctxgraph/codecs', core));
  write(
    'packages/codecs/src/index.ts',
    // The store kit is for stores: codecs takes the data rules from the main entry.
    "import { prepareCommit } from '@ctxgraph/fragments-core/store-kit';\nexport const user = 1;\n",
  );
  write(
    'apps/playground/package.json',
    manifest('@ctxgraph/playground', { private: true, dependencies: { '@ctxgraph/engine': '*' } }),
  );
  write(
    'apps/playground/src/main.ts',
    "import '@ctxgraph/engine';\nimport '@ctxgraph/store-memory';\nimport 'node:http';\n",
  );
  // A package the map does not know.
  write('packages/store-redis/package.json', manifest('@ctxgraph/store-redis', core));

  // The real entries of the packages this workspace has, plus conformance, which it lacks.
  const picked = [
    '@ctxgraph/fragments-core',
    '@ctxgraph/codecs',
    '@ctxgraph/store-memory',
    '@ctxgraph/renderer-xml',
    '@ctxgraph/engine',
    '@ctxgraph/playground',
    '@ctxgraph/conformance',
  ];
  const map = Object.fromEntries(
    Object.entries(layerMap).filter(([name]) => picked.includes(name)),
  );

  it('reports each broken rule once, with the file, the line and the reason, and nothing else', () => {
    const { problems } = checkLayers({ workspaceRoot: workspace, map, order: {} });
    expect(problems).toEqual([
      'tooling/check-layers.mjs: the layer map names @ctxgraph/conformance, which no workspace package is',
      "packages/codecs/src/index.ts:1: imports @ctxgraph/fragments-core/store-kit, an entry only for @ctxgraph/store-memory, @ctxgraph/store-sqlite, @ctxgraph/store-postgres, @ctxgraph/store-durable-object, @ctxgraph/conformance (import what @ctxgraph/codecs needs from the package's main entry)",
      'packages/engine/package.json: dependencies lists @ctxgraph/store-memory: downward but not listed (L2 → L1); @ctxgraph/engine may use @ctxgraph/codecs, @ctxgraph/serialization, @ctxgraph/fragments-core',
      'packages/engine/src/index.ts:1: imports @ctxgraph/codecs, which packages/engine/package.json does not list in dependencies or peerDependencies (an installed copy could not resolve it)',
      'packages/fragments-core/src/index.ts:2: imports @ctxgraph/engine: upward (L0 → L2); @ctxgraph/fragments-core may use no workspace package',
      'packages/renderer-xml/tsconfig.json: @ctxgraph/renderer-xml is runtime-neutral, so its compilerOptions.types must not include "node"',
      'packages/renderer-xml/src/xml-renderer.ts:1: imports @ctxgraph/store-memory: sideways (L1 → L1); @ctxgraph/renderer-xml may use @ctxgraph/fragments-core',
      'packages/renderer-xml/src/xml-renderer.ts:2: imports node:fs/promises, but @ctxgraph/renderer-xml is runtime-neutral (no Node built-ins outside tests)',
      'packages/renderer-xml/src/xml-renderer.ts:3: imports path, but @ctxgraph/renderer-xml is runtime-neutral (no Node built-ins outside tests)',
      'packages/renderer-xml/src/xml-renderer.ts:4: imports ../../store-memory/src/index.ts by path, outside packages/renderer-xml: import @ctxgraph/store-memory by its name instead',
      'packages/renderer-xml/src/xml-renderer.ts:5: imports @xmldom/xmldom, which the layer map does not allow @ctxgraph/renderer-xml (allowed: none)',
      'packages/store-redis/package.json: @ctxgraph/store-redis has no place in the layer map: add it to tooling/check-layers.mjs and docs/architecture.md',
    ]);
  });

  it('exits 1 from the command line and prints the problems', () => {
    const run = spawnSync(
      process.execPath,
      [join(root, 'tooling', 'check-layers.mjs'), workspace],
      {
        encoding: 'utf8',
      },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'packages/fragments-core/src/index.ts:2: imports @ctxgraph/engine: upward (L0 → L2)',
    );
  });
});

describe('check-layers on a package whose files break its folder order', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'ctxgraph-folders-'));
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), text);
  };
  write('pnpm-workspace.yaml', 'packages:\n  - packages/*\n');
  write('packages/engine/package.json', JSON.stringify({ name: '@ctxgraph/engine' }));
  const engine = 'packages/engine/src';
  write(`${engine}/prices.ts`, 'export const prices = {};\n');
  // Downward and within its own folder: allowed.
  write(
    `${engine}/session/chat-session.ts`,
    [
      "import { prices } from '../prices';",
      "import { view } from './branch-view';",
      "import { PendingLane } from '../conversation/pending-lane';", // upward: session/ → conversation/
      'export { prices, view, PendingLane };',
    ].join('\n'),
  );
  write(`${engine}/session/branch-view.ts`, 'export const view = 1;\n');
  write(
    `${engine}/conversation/pending-lane.ts`,
    "import type { ChatSession } from '../session/chat-session';\nexport class PendingLane {}\n",
  );
  // A file right in src/ above a folder: upward to the facade.
  write(
    `${engine}/conversation/save-turn.ts`,
    "import type { Options } from '../engine';\nexport type Saved = Options;\n",
  );
  write(`${engine}/engine.ts`, "import './conversation/save-turn';\nexport type Options = {};\n");
  // Tests and fixtures may import any place.
  write(`${engine}/session/chat-session.test.ts`, "import '../engine';\n");
  write(`${engine}/__fixtures__/kit.ts`, "import '../engine';\n");
  // A folder the order does not know.
  write(`${engine}/extras/helper.ts`, 'export const helper = 1;\n');

  const map = Object.fromEntries(
    Object.entries(layerMap).filter(([name]) => name === '@ctxgraph/engine'),
  );
  const order = {
    '@ctxgraph/engine': ['prices.ts', 'session/', 'conversation/', 'cache/', 'engine.ts'],
  };

  it('names the file, the import and the two places of each upward import', () => {
    const { problems } = checkLayers({ workspaceRoot: workspace, map, order });
    expect(problems).toEqual([
      'tooling/check-layers.mjs: the folder order of @ctxgraph/engine names cache/, which packages/engine/src does not have',
      'packages/engine/src/conversation/save-turn.ts:1: imports ../engine: upward in the folder order of @ctxgraph/engine (conversation/ → engine.ts); conversation/ may import prices.ts, session/',
      'packages/engine/src/extras/helper.ts: has no place in the folder order of @ctxgraph/engine: add its folder to folderOrder in tooling/check-layers.mjs and to docs/architecture.md',
      'packages/engine/src/session/chat-session.ts:3: imports ../conversation/pending-lane: upward in the folder order of @ctxgraph/engine (session/ → conversation/); session/ may import prices.ts',
    ]);
  });

  it("holds the engine's own order: every folder of its src/ is placed", () => {
    const engineOrder = folderOrder['@ctxgraph/engine'] ?? [];
    expect(engineOrder.indexOf('session/')).toBeLessThan(engineOrder.indexOf('conversation/'));
    expect(engineOrder.indexOf('cache/')).toBeLessThan(engineOrder.indexOf('resolve/'));
    const { problems } = checkLayers({ map: layerMap, order: folderOrder });
    expect(problems.filter((problem) => problem.includes('folder order'))).toEqual([]);
  });
});
