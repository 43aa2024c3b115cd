import { defineStoreConformance } from '@ctxgraph/conformance';
import { createObjectStore, reopenObjectStore } from './__fixtures__/object-store';

let objects = 0;

// Inside workerd: each store is a new Durable Object (fresh SQLite storage), its calls run in
// the object. The kit's clock is a function of this isolate: the object's store calls it there.
defineStoreConformance({
  name: 'DurableObjectContextStore (in workerd)',
  createStore: ({ clock }) => {
    objects += 1;
    return createObjectStore(`conformance-${objects}-${crypto.randomUUID()}`, { clock });
  },
  reopenStore: (store, { clock }) => reopenObjectStore(store, { clock }),
});
