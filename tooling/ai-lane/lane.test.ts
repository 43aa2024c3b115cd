import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateMessages } from '@ctxgraph/codecs';
import * as ai from 'ai';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { aiLane, laneSpecifier } from './lane.mjs';

const tooling = fileURLToPath(new URL('..', import.meta.url));
const register = fileURLToPath(new URL('./register.mjs', import.meta.url));
const laneSource = fileURLToPath(new URL('./lane.mjs', import.meta.url));
const laneDeclarations = fileURLToPath(new URL('./lane.d.mts', import.meta.url));

/** The declarations TypeScript derives from lane.mjs's code and JSDoc. */
function declarationsOfLaneSource(): string {
  const program = ts.createProgram([laneSource], {
    allowJs: true,
    declaration: true,
    emitDeclarationOnly: true,
    outDir: fileURLToPath(new URL('./derived/', import.meta.url)), // never written: see below
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    skipLibCheck: true,
  });
  let declarations = '';
  const result = program.emit(undefined, (name, text) => {
    if (name.endsWith('.d.mts')) declarations = text;
  });
  expect(result.diagnostics).toEqual([]);
  return declarations;
}

/**
 * Each top-level declaration of a declaration file, without comments and formatting (quotes,
 * spacing, the optional `declare`), sorted: what a type checker reads from it.
 */
function declared(text: string): string[] {
  const source = ts.createSourceFile('declarations.d.mts', text, ts.ScriptTarget.Latest);
  const printer = ts.createPrinter({ removeComments: true });
  return source.statements
    .map((statement) =>
      printer
        .printNode(ts.EmitHint.Unspecified, statement, source)
        .replace(/"/g, "'")
        .replace(/^export declare /, 'export ')
        .replace(/\s+/g, ' ')
        .replace(/;\s*}/g, ' }')
        .replace(/;$/, ''),
    )
    .sort();
}

/** The `ai` version a plain Node process resolves from tooling/, with the lane's hooks. */
function aiVersionInNode(lane: '6' | '7'): string {
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      register,
      '--input-type=module',
      '-e',
      "const { default: manifest } = await import('ai/package.json', { with: { type: 'json' } }); console.log(manifest.version);",
    ],
    { cwd: tooling, encoding: 'utf8', env: { ...process.env, CTXGRAPH_AI_LANE: lane } },
  );
  expect(result.stderr).toBe('');
  return result.stdout.trim();
}

describe('the AI SDK lane', () => {
  it('follows CTXGRAPH_AI_LANE, else the Node major', () => {
    expect(aiLane({ CTXGRAPH_AI_LANE: '6' }, '24.1.0')).toBe('6');
    expect(aiLane({ CTXGRAPH_AI_LANE: '7' }, '20.19.0')).toBe('7');
    expect(aiLane({}, '20.19.0')).toBe('6');
    expect(aiLane({ CTXGRAPH_AI_LANE: '' }, '22.0.0')).toBe('7');
    expect(aiLane({}, '24.3.0')).toBe('7');
  });

  it('refuses a lane that is not an AI SDK major it knows', () => {
    expect(() => aiLane({ CTXGRAPH_AI_LANE: '5' })).toThrow(
      'CTXGRAPH_AI_LANE must be 6 or 7 (the AI SDK major), received "5".',
    );
    expect(() => aiLane({ CTXGRAPH_AI_LANE: 'latest' })).toThrow('must be 6 or 7');
  });

  it('swaps ai, @ai-sdk/openai and @ai-sdk/react (subpaths kept) on lane 6 only', () => {
    expect(laneSpecifier('ai', '6')).toBe('ai-v6');
    expect(laneSpecifier('ai/test', '6')).toBe('ai-v6/test');
    expect(laneSpecifier('@ai-sdk/openai', '6')).toBe('@ai-sdk/openai-v3');
    expect(laneSpecifier('@ai-sdk/react', '6')).toBe('@ai-sdk/react-v3');
    expect(laneSpecifier('aim', '6')).toBeUndefined();
    expect(laneSpecifier('@ai-sdk/provider', '6')).toBeUndefined();
    expect(laneSpecifier('ai', '7')).toBeUndefined();
  });

  it("puts this vitest run's ai on the lane (the plugin)", () => {
    // isCustomContentUIPart came with AI SDK 7.
    expect('isCustomContentUIPart' in ai).toBe(aiLane() === '7');
  });

  it("reaches the ai that sibling packages' dist imports", async () => {
    // @ctxgraph/codecs (its built dist) validates with its own `ai` import: a `custom` part exists
    // on AI SDK 7 only.
    const custom = { id: 'c', role: 'assistant', parts: [{ type: 'custom', kind: 'acme.note' }] };
    const validated = validateMessages([custom]);
    if (aiLane() === '7') await expect(validated).resolves.toEqual([custom]);
    else await expect(validated).rejects.toThrow('unknown part type "custom"');
  });

  it('declares in lane.d.mts exactly what lane.mjs exports (the packages that import it read the .d.mts)', () => {
    expect(declared(readFileSync(laneDeclarations, 'utf8'))).toEqual(
      declared(declarationsOfLaneSource()),
    );
  });

  it('puts a plain Node process on the lane (the hooks)', () => {
    expect(aiVersionInNode('6')).toMatch(/^6\./);
    expect(aiVersionInNode('7')).toMatch(/^7\./);
  });
});
