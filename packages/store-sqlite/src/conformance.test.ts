import { rmSync } from 'node:fs';
import { defineStoreConformance } from '@ctxgraph/conformance';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { afterAll } from 'vitest';
import { tempDirectory } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('conformance');
afterAll(() => temp.remove());

function fileOf(store: ContextStore): string {
  return (store as SqliteContextStore).path;
}

defineStoreConformance({
  name: 'SqliteContextStore (temp file)',
  // A fresh file per store, so every store starts empty.
  createStore: ({ clock }) => new SqliteContextStore({ path: temp.file(), clock }),
  reopenStore: (store, { clock }) => new SqliteContextStore({ path: fileOf(store), clock }),
  destroyStore: (store) => {
    const path = fileOf(store);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  },
});
