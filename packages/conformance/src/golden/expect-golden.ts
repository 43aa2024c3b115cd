/// <reference types="node" />
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * Compares `output` byte for byte with the golden file at `file`, or (re)writes the file when
 * the environment variable `UPDATE_GOLDEN` is `1`. A missing golden file fails with a message
 * saying how to create it. Node only (it reads and writes files), so it lives at
 * `@ctxgraph/conformance/golden`, apart from the runtime-neutral kits.
 *
 * @example
 * ```ts
 * import { expectGolden } from '@ctxgraph/conformance/golden';
 * expectGolden(new URL('./__fixtures__/sample.golden.xml', import.meta.url), renderer.render(sample));
 * ```
 */
export function expectGolden(file: URL, output: string): void {
  const name = file.pathname.split('/').at(-1) ?? file.pathname;
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(file, output);
    return;
  }
  if (!existsSync(file)) {
    throw new Error(
      `Golden file ${name} is missing: run the tests with UPDATE_GOLDEN=1 to create it.`,
    );
  }
  const expected = readFileSync(file);
  expect(
    Buffer.from(output, 'utf8').equals(expected),
    `${name} differs; UPDATE_GOLDEN=1 rewrites it`,
  ).toBe(true);
}
