// The README's examples, taken from README.md at test time and run as written in a child Node
// process, with `@ctxgraph/client` pointing at this package's source; what a
// `console.log(...); // text` line says it prints is what it must print. Each also type-checks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
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
  replaceImports: { '@ctxgraph/client': join(packageFolder, 'src', 'index.js') },
};

describe('README.md', () => {
  it('has a runnable example', () => {
    expect(programs.length).toBeGreaterThanOrEqual(1);
    for (const program of programs) expect(program.imports).toContain('@ctxgraph/client');
  });

  for (const program of programs) {
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
