/// <reference types="node" />
// The "Writing a store" example of the fragments-core README is this fixture, verbatim, and it
// passes the whole suite: proof that a store on the kit needs nothing beyond its storage.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMapContextStore } from './__fixtures__/map-context-store';
import { defineStoreConformance } from './define-store-conformance';

defineStoreConformance({
  name: 'MapContextStore (the store-kit example)',
  createStore: createMapContextStore,
});

describe('the fragments-core README', () => {
  it('shows the example store verbatim', () => {
    const read = (path: string): string => readFileSync(new URL(path, import.meta.url), 'utf8');
    const readme = read('../../../fragments-core/README.md');
    const example = read('./__fixtures__/map-context-store.ts').trim();
    expect(readme.includes(example), 'packages/fragments-core/README.md is out of date').toBe(true);
  });
});
