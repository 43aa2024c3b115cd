import { defineStoreConformance } from '@ctxgraph/conformance';
import { type ChatChangeListener, type ContextStore, StoreError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from './in-memory-context-store';

defineStoreConformance({
  name: 'InMemoryContextStore',
  createStore: ({ clock }) => new InMemoryContextStore({ clock }),
});

// The kit's persistence and cross-object tests only run for stores that declare those abilities.
// Handles over one shared InMemoryContextStore (closing a handle leaves the data, like closing a
// database connection) let them run here too, so the kit's own reopen paths are exercised
// against the reference implementation before a database store depends on them.
const backingOf = new WeakMap<ContextStore, InMemoryContextStore>();

function handleOver(backing: InMemoryContextStore): ContextStore {
  let closed = false;
  // A handle's watchers stop when it closes, as a database store's listening connection does.
  const watching = new Set<() => void>();
  const handle = new Proxy(backing, {
    get(target, property) {
      if (property === 'capabilities')
        return { ...target.capabilities, persistent: true, multiProcess: true };
      if (property === 'close') {
        return async () => {
          closed = true;
          for (const unsubscribe of watching) unsubscribe();
          watching.clear();
        };
      }
      if (property === 'watchChat') {
        return (chatId: string, listener: ChatChangeListener) => {
          if (closed) throw new StoreError('watchChat: this handle is closed.');
          const unsubscribe = target.watchChat(chatId, listener);
          watching.add(unsubscribe);
          return () => {
            watching.delete(unsubscribe);
            unsubscribe();
          };
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (closed)
          return Promise.reject(new StoreError(`${String(property)}: this handle is closed.`));
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  backingOf.set(handle, backing);
  return handle;
}

defineStoreConformance({
  name: 'handles over one InMemoryContextStore',
  createStore: ({ clock }) => handleOver(new InMemoryContextStore({ clock })),
  reopenStore: (store) => handleOver(backingOf.get(store) as InMemoryContextStore),
  destroyStore: (store) => backingOf.get(store)?.close(),
});
