import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateMessages } from '@ctxgraph/codecs';
import * as ai from 'ai';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { aiMajor, majorSpecifier } from './major.mjs';

const tooling = fileURLToPath(new URL('..', import.meta.url));
const register = fileURLToPath(new URL('./register.mjs', import.meta.url));
const majorSource = fileURLToPath(new URL('./major.mjs', import.meta.url));
const majorDeclarations = fileURLToPath(new URL('./major.d.mts', import.meta.url));

/** The declarations TypeScript derives from major.mjs's code and JSDoc. */
function declarationsOfMajorSource(): string {
  const program = ts.createProgram([majorSource], {
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

/** The `ai` version a plain Node process resolves from tooling/, with the major's hooks. */
function aiVersionInNode(major: '6' | '7'): string {
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      register,
      '--input-type=module',
      '-e',
      "const { default: manifest } = await import('ai/package.json', { with: { type: 'json' } }); console.log(manifest.version);",
    ],
    { cwd: tooling, encoding: 'utf8', env: { ...process.env, CTXGRAPH_AI_MAJOR: major } },
  );
  expect(result.stderr).toBe('');
  return result.stdout.trim();
}

describe('the AI SDK major', () => {
  it('follows CTXGRAPH_AI_MAJOR, else the Node major', () => {
    expect(aiMajor({ CTXGRAPH_AI_MAJOR: '6' }, '24.1.0')).toBe('6');
    expect(aiMajor({ CTXGRAPH_AI_MAJOR: '7' }, '20.19.0')).toBe('7');
    expect(aiMajor({}, '20.19.0')).toBe('6');
    expect(aiMajor({ CTXGRAPH_AI_MAJOR: '' }, '22.0.0')).toBe('7');
    expect(aiMajor({}, '24.3.0')).toBe('7');
  });

  it('refuses a major that is not an AI SDK major it knows', () => {
    expect(() => aiMajor({ CTXGRAPH_AI_MAJOR: '5' })).toThrow(
      'CTXGRAPH_AI_MAJOR must be 6 or 7 (the AI SDK major), received "5".',
    );
    expect(() => aiMajor({ CTXGRAPH_AI_MAJOR: 'latest' })).toThrow('must be 6 or 7');
  });

  it('swaps ai, @ai-sdk/openai and @ai-sdk/react (subpaths kept) on AI SDK 6 only', () => {
    expect(majorSpecifier('ai', '6')).toBe('ai-v6');
    expect(majorSpecifier('ai/test', '6')).toBe('ai-v6/test');
    expect(majorSpecifier('@ai-sdk/openai', '6')).toBe('@ai-sdk/openai-v3');
    expect(majorSpecifier('@ai-sdk/react', '6')).toBe('@ai-sdk/react-v3');
    expect(majorSpecifier('aim', '6')).toBeUndefined();
    expect(majorSpecifier('@ai-sdk/provider', '6')).toBeUndefined();
    expect(majorSpecifier('ai', '7')).toBeUndefined();
  });

  it("puts this vitest run's ai on the major (the plugin)", () => {
    // isCustomContentUIPart came with AI SDK 7.
    expect('isCustomContentUIPart' in ai).toBe(aiMajor() === '7');
  });

  it("reaches the ai that sibling packages' dist imports", async () => {
    // @ctxgraph/codecs (its built dist) validates with its own `ai` import: a `custom` part exists
    // on AI SDK 7 only.
    const custom = { id: 'c', role: 'assistant', parts: [{ type: 'custom', kind: 'acme.note' }] };
    const validated = validateMessages([custom]);
    if (aiMajor() === '7') await expect(validated).resolves.toEqual([custom]);
    else await expect(validated).rejects.toThrow('unknown part type "custom"');
  });

  it('declares in major.d.mts exactly what major.mjs exports (the packages that import it read the .d.mts)', () => {
    expect(declared(readFileSync(majorDeclarations, 'utf8'))).toEqual(
      declared(declarationsOfMajorSource()),
    );
  });

  it('puts a plain Node process on the major (the hooks)', () => {
    expect(aiVersionInNode('6')).toMatch(/^6\./);
    expect(aiVersionInNode('7')).toMatch(/^7\./);
  });
});
