/// <reference types="node" />
// Golden-file helper for tests (Node only; not shipped). Set UPDATE_GOLDEN=1 to rewrite the files.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';

/** Compares `output` byte for byte with `src/__fixtures__/<file>`, or rewrites it under UPDATE_GOLDEN=1. */
export function expectGolden(file: string, output: string): void {
  const url = new URL(file, import.meta.url);
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(url, output);
    return;
  }
  if (!existsSync(url))
    throw new Error(
      `Golden file ${file} is missing: run the tests with UPDATE_GOLDEN=1 to create it.`,
    );
  expect(
    Buffer.from(output, 'utf8').equals(readFileSync(url)),
    `${file} differs; UPDATE_GOLDEN=1 rewrites it`,
  ).toBe(true);
  expect(output).toBe(readFileSync(url, 'utf8'));
}
