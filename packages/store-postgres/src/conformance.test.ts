import { defineStoreConformance } from '@ctxgraph/conformance';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { afterAll } from 'vitest';
import { adminClient, databaseUrl, dropSchema, randomSchema } from './__fixtures__/test-database';
import { PostgresContextStore } from './postgres-context-store';

// Each store the kit asks for gets a fresh schema; a reopened store shares its schema, as a
// second server would.
const admin = adminClient();
afterAll(() => admin.end());

defineStoreConformance({
  name: 'PostgresContextStore',
  createStore: () =>
    new PostgresContextStore({ connectionString: databaseUrl(), schema: randomSchema() }),
  reopenStore: (store: ContextStore) => {
    const original = store as PostgresContextStore;
    return new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: original.schema,
      tablePrefix: original.tablePrefix,
    });
  },
  destroyStore: (store: ContextStore) => dropSchema(admin, (store as PostgresContextStore).schema),
  timeoutMs: 20_000,
});
