import {
  type ContextStore,
  OPTIONAL_CAPABILITY_METHODS,
  type OptionalCapability,
  type OptionalCapabilityMethods,
  REQUIRED_STORE_METHODS,
  UnsupportedCapabilityError,
  ValidationError,
} from '@ctxgraph/fragments-core';

// The one place the engine reads `capabilities`. Every required method of the contract is there
// on every store (checked when the engine is made); only an optional capability (search, search
// prefixes, retention, live replies) may be missing, and what needs one refuses without it.

/**
 * Refuses, with a `ValidationError` naming what is missing, a store without every method
 * `REQUIRED_STORE_METHODS` lists (a store written against an earlier draft of the contract).
 */
export function assertWholeStore(store: Partial<ContextStore>, method: string): void {
  const missing = REQUIRED_STORE_METHODS.filter((name) => typeof store[name] !== 'function');
  if (missing.length === 0) return;
  throw new ValidationError(
    `${method}: store is not a whole v1 ContextStore: it has no ${missing.map((name) => `${name}()`).join(', ')}. Every v1 store has every required method; a store built on @ctxgraph/fragments-core/store-kit gets append() and forkBranch() from the kit.`,
    { issues: missing.map((name) => ({ path: `store.${name}`, message: 'expected a function' })) },
  );
}

/** A store that serves `Capability`: its methods present. */
export type StoreWith<Capability extends OptionalCapability> = ContextStore &
  Required<Pick<ContextStore, OptionalCapabilityMethods[Capability][number]>>;

/**
 * Whether `store` serves `capability`: declared, with every method the contract's table lists
 * (search prefixes widen search: they need `search` too).
 */
function serves(store: ContextStore, capability: OptionalCapability): boolean {
  const { capabilities } = store;
  if (capabilities[capability] !== true) return false;
  if (capability === 'searchPrefix' && capabilities.search !== true) return false;
  return OPTIONAL_CAPABILITY_METHODS[capability].every(
    (method) => typeof store[method] === 'function',
  );
}

/**
 * `store`, as a store that serves `capability`, or an `UnsupportedCapabilityError` saying that
 * `method` (the engine's, as the caller named it) needs it.
 */
export function requireCapability<Capability extends OptionalCapability>(
  store: ContextStore,
  capability: Capability,
  method: string,
): StoreWith<Capability> {
  if (!serves(store, capability)) throw new UnsupportedCapabilityError(method, capability);
  return store as StoreWith<Capability>;
}
