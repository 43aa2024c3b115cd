// The READMEs' examples run as written: their ```ts blocks are taken from the README at test time
// and run in a child Node process (a fresh working directory, the packages as built, a mock model
// from `ai/test`), so a README fails the tests whenever it drifts from the code. The packages
// themselves cannot host these tests: most are runtime-neutral and have no Node types.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  expectedOutput,
  installedPackages,
  packageOf,
  readmePrograms,
  runReadmeProgram,
  typecheckReadmeProgram,
} from './readme-examples.ts';
import { checkoutFiles } from './workspace.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const declared = Object.keys(
  JSON.parse(readFileSync(join(root, 'tooling', 'package.json'), 'utf8')).devDependencies,
);

/** READMEs whose examples run, and whether their install lines must cover the imports. */
const readmes = [
  { path: 'README.md', checkInstallLine: false },
  { path: 'packages/engine/README.md', checkInstallLine: true },
  ...[
    'budget',
    'prompt-cache',
    'compaction',
    'provider-compaction',
    'continue-from',
    'branches',
  ].map((page) => ({ path: `packages/engine/docs/${page}.md`, checkInstallLine: false })),
  { path: 'packages/tokenizer-o200k/README.md', checkInstallLine: true },
  { path: 'packages/tokenizer-cl100k/README.md', checkInstallLine: true },
];

for (const { path, checkInstallLine } of readmes) {
  const readme = readFileSync(join(root, path), 'utf8');
  const programs = readmePrograms(readme);

  describe(path, () => {
    it('has at least one runnable example', () => {
      expect(programs.length).toBeGreaterThan(0);
    });

    for (const program of programs) {
      it(`the example at line ${program.line} runs as written`, async () => {
        const run = await runReadmeProgram(program, { packageFolder: join(root, 'tooling') });
        expect(run.stderr).toBe('');
        expect(run.exitCode).toBe(0);
        expect(run.stdout.trim().split('\n').filter(Boolean)).toEqual(expectedOutput(program));
      });

      it(`the example at line ${program.line} type-checks (strict)`, async () => {
        const check = await typecheckReadmeProgram(program, {
          packageFolder: join(root, 'tooling'),
        });
        expect(check.stdout + check.stderr).toBe('');
        expect(check.exitCode).toBe(0);
      });
    }

    it('imports only packages tooling declares (so the test runs them as a user would)', () => {
      const imported = programs.flatMap((program) => program.imports.map(packageOf));
      expect(imported.filter((name) => name !== undefined && !declared.includes(name))).toEqual([]);
    });

    if (checkInstallLine) {
      it('the install lines name every package the examples import', () => {
        const installed = installedPackages(readme);
        const imported = programs.flatMap((program) => program.imports.map(packageOf));
        expect(imported.filter((name) => name !== undefined && !installed.includes(name))).toEqual(
          [],
        );
      });
    }
  });
}

/**
 * Where a Markdown file's ```ts blocks take `systemPrompt` from a `format: 'model'` resolve, or
 * hand `systemPrompt` to a model as `system`: `system` is what the model format gives the model
 * (the rendered context and the history's folded system messages; `systemPrompt` is the context
 * alone), as the root README passes it. One `file:line` each.
 */
function systemPromptForTheModel(path: string, markdown: string): string[] {
  const found: string[] = [];
  for (const program of readmePrograms(markdown)) {
    const destructured =
      /\{[^}]*\bsystemPrompt\b[^}]*\}\s*=\s*await\s+[\w.]+\.resolve\(\{[^}]*format:\s*'model'/;
    const handed = /\bsystem:\s*[\w.?]+\.systemPrompt\b/;
    for (const [offset, line] of program.code.split('\n').entries()) {
      if (destructured.test(line) || handed.test(line))
        found.push(`${path}:${program.line + offset + 1}`);
    }
  }
  return found;
}

describe("every Markdown file's examples", () => {
  it('hand the model `system` from a model-format resolve, never `systemPrompt`', () => {
    const markdownFiles = checkoutFiles(root).filter(
      (path) =>
        path.endsWith('.md') && !path.startsWith('.changeset/') && !path.endsWith('CHANGELOG.md'),
    );
    expect(markdownFiles).toContain('packages/store-postgres/README.md');
    const found = markdownFiles.flatMap((path) =>
      systemPromptForTheModel(path, readFileSync(join(root, path), 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('the check finds both forms', () => {
    const markdown = [
      '```ts',
      "import { x } from 'y';",
      "const { systemPrompt, messages } = await context.resolve({ format: 'model' });",
      'await generateText({ model, system: resolved.systemPrompt, messages });',
      "const { system } = await context.resolve({ format: 'model' });",
      '```',
    ].join('\n');
    expect(systemPromptForTheModel('example.md', markdown)).toEqual([
      'example.md:3',
      'example.md:4',
    ]);
  });
});

describe('readme-examples helpers', () => {
  it('a block without imports continues the program before it; other fences are not run', () => {
    const markdown = [
      '```ts',
      "import { a } from 'x';",
      'const b = a;',
      '```',
      '```sh',
      'npm install x @scope/y --save',
      '```',
      '```ts',
      'console.log(b); // 1',
      '```',
      '```ts',
      "import 'z/sub';",
      '```',
    ].join('\n');
    const found = readmePrograms(markdown);
    expect(found.map((program) => program.imports)).toEqual([['x'], ['z/sub']]);
    expect(found[0]?.code).toContain('console.log(b); // 1');
    expect(found[0] && expectedOutput(found[0])).toEqual(['1']);
    expect(installedPackages(markdown)).toEqual(['x', '@scope/y']);
    expect(['ai/test', '@ctxgraph/engine', 'node:fs'].map(packageOf)).toEqual([
      'ai',
      '@ctxgraph/engine',
      undefined,
    ]);
  });
});
