import { defineStoreConformance } from '@ctxgraph/conformance';
import { createObjectStore, reopenObjectStore } from './__fixtures__/object-store';

let objects = 0;

// Inside workerd: each store is a new Durable Object (fresh SQLite storage), its calls run in
// the object.
defineStoreConformance({
  name: 'DurableObjectContextStore (in workerd)',
  createStore: () => {
    objects += 1;
    return createObjectStore(`conformance-${objects}-${crypto.randomUUID()}`);
  },
  reopenStore: (store) => reopenObjectStore(store),
});
