// The README's examples, taken from README.md at test time and run as written: each ```ts block
// (with the blocks that continue it) in a child Node process, from a fresh working directory, with
// `@ctxgraph/store-sqlite` pointing at this package's source. What a `console.log(...); // text`
// line says it prints is what it must print. Each program must also be plain JavaScript that this
// Node parses (`node --check`: no `await using`, no type syntax), so it runs as written on Node
// 20.19, and type-check as strict TypeScript.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expectedOutput,
  readmePrograms,
  runReadmeProgram,
  typecheckReadmeProgram,
} from '../../../tooling/readme-examples.ts';

const packageFolder = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(join(packageFolder, 'README.md'), 'utf8');
const programs = readmePrograms(readme);
const options = {
  packageFolder,
  // The source, so the test needs no build; `.js` resolves to the `.ts` file in tsx and tsc.
  replaceImports: { '@ctxgraph/store-sqlite': join(packageFolder, 'src', 'index.js') },
};

const scratch = mkdtempSync(join(tmpdir(), 'ctxgraph-sqlite-readme-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('README.md', () => {
  it('has runnable examples, and every ```ts block imports or continues one', () => {
    expect(programs.length).toBeGreaterThanOrEqual(2);
    const blocks = readme.match(/^```ts\s*$/gm) ?? [];
    const joined = programs.map((program) => program.code).join('\n');
    expect(joined.match(/\/\/ README line \d+/g)?.length ?? 0).toBe(
      blocks.length - programs.length,
    );
    for (const program of programs) expect(program.imports).toContain('@ctxgraph/store-sqlite');
  });

  for (const program of programs) {
    it(`the example at line ${program.line} is plain JavaScript this Node parses`, () => {
      const file = join(scratch, `line-${program.line}.mjs`);
      writeFileSync(file, program.code);
      const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
      expect(check.stderr).toBe('');
      expect(check.status).toBe(0);
    });

    it(`the example at line ${program.line} runs as written`, async () => {
      const run = await runReadmeProgram(program, options);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      expect(run.stdout.trim().split('\n').filter(Boolean)).toEqual(expectedOutput(program));
    }, 60_000);

    it(`the example at line ${program.line} type-checks (strict)`, async () => {
      const check = await typecheckReadmeProgram(program, options);
      expect(check.stdout + check.stderr).toBe('');
      expect(check.exitCode).toBe(0);
    }, 60_000);
  }
});
