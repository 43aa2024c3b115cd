import type { ContextStore } from '@ctxgraph/fragments-core';

/** A store that records every method called on it and can be told to fail the next call. */
export interface CountingStore {
  /** Use this where a store is expected. */
  readonly store: ContextStore;
  /** The names of the methods called, in order, since the last `reset()`. */
  readonly calls: string[];
  /** Forgets the calls so far. */
  reset(): void;
  /** Makes the next call of `method` reject with `error` (once). */
  failNext(method: keyof ContextStore, error: Error): void;
}

/**
 * Wraps `store` to count its calls: tests use it to show which reads a request needed (a warm
 * engine reads the branch head, not the whole chat) and to make one write fail.
 */
export function countingStore(store: ContextStore): CountingStore {
  const calls: string[] = [];
  const failures = new Map<PropertyKey, Error>();
  const wrapped = new Proxy(store, {
    get(target, property) {
      // Read from the real store so its private fields work; call methods on it, too.
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...parameters: unknown[]) => {
        calls.push(String(property));
        const failure = failures.get(property);
        if (failure !== undefined) {
          failures.delete(property);
          return Promise.reject(failure);
        }
        return (value as (...parameters: unknown[]) => unknown).apply(target, parameters);
      };
    },
  });
  return {
    store: wrapped,
    calls,
    reset: () => {
      calls.length = 0;
    },
    failNext: (method, error) => {
      failures.set(method, error);
    },
  };
}
