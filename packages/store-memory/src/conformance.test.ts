import { defineStoreConformance } from '@ctxgraph/conformance';
import { InMemoryContextStore } from './in-memory-context-store';

defineStoreConformance({
  name: 'InMemoryContextStore',
  createStore: () => new InMemoryContextStore(),
});
