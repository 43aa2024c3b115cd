import { env, runInDurableObject } from 'cloudflare:test';
import type { ContextStore } from '@ctxgraph/fragments-core';
import type {
  DurableObjectContextStore,
  DurableObjectContextStoreOptions,
} from '../durable-object-context-store';
import type { TestChatObject } from './test-worker';

/** The binding of the test object, as the vitest config declares it. */
interface TestEnv {
  readonly TEST_CHATS: DurableObjectNamespace<TestChatObject>;
}

const bindings = env as unknown as TestEnv;

/** Where a store lives: its object and its slot there. */
export interface ObjectStoreAddress {
  readonly stub: DurableObjectStub<TestChatObject>;
  readonly slot: number;
}

const addresses = new WeakMap<ContextStore, ObjectStoreAddress>();

/** Runs `action` inside the object, on the store of `address`. */
function inObject<T>(
  address: ObjectStoreAddress,
  action: (store: DurableObjectContextStore, object: TestChatObject) => T | Promise<T>,
): Promise<T> {
  return runInDurableObject(address.stub, (object: TestChatObject) => {
    const store = object.stores[address.slot];
    if (store === undefined) throw new Error(`no store in slot ${address.slot} of the test object`);
    return action(store, object);
  });
}

/**
 * A `ContextStore` whose every call runs inside the Durable Object, on the store there: the
 * object's storage can only be reached from the object's own context (workerd refuses I/O on
 * behalf of another object), so the conformance suites, which run in the test's context, reach
 * the store through `runInDurableObject` as the object's own RPC methods would. Values and errors
 * come back as they are (same isolate): nothing is serialized on the way.
 *
 * `watchChat` is the exception: the contract has it answer synchronously (the unsubscribe
 * function), and it does no I/O (it adds the listener to the store's watchers, in the object's
 * memory), so it is called on the store itself. The notices come from inside the object, right
 * after each write there, as they would to a stream the object's RPC method returned.
 */
async function storeAt(address: ObjectStoreAddress): Promise<ContextStore> {
  const real = await inObject(address, (store) => store);
  const shape = await inObject(address, (store) => {
    const methods: string[] = [];
    for (
      let prototype: object | null = store;
      prototype !== null && prototype !== Object.prototype;
      prototype = Object.getPrototypeOf(prototype)
    ) {
      for (const key of Object.getOwnPropertyNames(prototype)) {
        const value: unknown = (store as unknown as Record<string, unknown>)[key];
        if (key !== 'constructor' && typeof value === 'function' && !methods.includes(key))
          methods.push(key);
      }
    }
    return {
      methods,
      specificationVersion: store.specificationVersion,
      capabilities: store.capabilities,
    };
  });
  const proxy: Record<string, unknown> = {
    specificationVersion: shape.specificationVersion,
    capabilities: shape.capabilities,
  };
  for (const method of shape.methods) {
    if (method === 'watchChat') {
      proxy[method] = (...args: Parameters<NonNullable<ContextStore['watchChat']>>) =>
        real.watchChat(...args);
      continue;
    }
    proxy[method] = (...args: unknown[]) =>
      inObject(address, (store) =>
        (store as unknown as Record<string, (...input: unknown[]) => unknown>)[method]?.(...args),
      );
  }
  const store = proxy as unknown as ContextStore;
  addresses.set(store, address);
  return store;
}

/**
 * A store in a new object (fresh storage): the constructor's, or, with `options` (the kit's
 * clock, a function of this isolate), one built in the object with them.
 */
export async function createObjectStore(
  name: string,
  options?: DurableObjectContextStoreOptions,
): Promise<ContextStore> {
  const stub = bindings.TEST_CHATS.get(bindings.TEST_CHATS.idFromName(name));
  if (options === undefined) return storeAt({ stub, slot: 0 });
  const slot = await inObject({ stub, slot: 0 }, (_store, object) => object.reopen(options));
  return storeAt({ stub, slot });
}

/** A second store over the storage of `store`'s object, as a restarted object would open it. */
export async function reopenObjectStore(
  store: ContextStore,
  options?: DurableObjectContextStoreOptions,
): Promise<ContextStore> {
  const address = addresses.get(store);
  if (address === undefined) throw new Error('reopenObjectStore: not a store of createObjectStore');
  const slot = await inObject(address, (_store, object) => object.reopen(options));
  return storeAt({ stub: address.stub, slot });
}
