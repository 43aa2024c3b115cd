import { defineStoreConformance } from '@ctxgraph/conformance';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { afterAll, inject } from 'vitest';
import { adminClient, databaseUrl, dropSchema, randomSchema } from './__fixtures__/test-database';
import { PostgresContextStore } from './postgres-context-store';

// Each store the kit asks for gets a fresh schema; a reopened store shares its schema, as a
// second server would. Through PgBouncer in transaction mode LISTEN does not work: the change
// feed polls alone there, as the README tells such deployments to configure it.
const admin = adminClient();
const changeFeed = { listen: !inject('throughPgbouncer') };
afterAll(() => admin.end());

defineStoreConformance({
  name: 'PostgresContextStore',
  createStore: ({ clock }) =>
    new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: randomSchema(),
      clock,
      changeFeed,
    }),
  reopenStore: (store: ContextStore, { clock }) => {
    const original = store as PostgresContextStore;
    return new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: original.schema,
      tablePrefix: original.tablePrefix,
      clock,
      changeFeed,
    });
  },
  destroyStore: (store: ContextStore) => dropSchema(admin, (store as PostgresContextStore).schema),
  timeoutMs: 20_000,
});
