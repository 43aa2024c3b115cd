import {
  type ContextStore,
  OPTIONAL_CAPABILITY_METHODS,
  type OptionalCapability,
  type OptionalCapabilityMethods,
  UnsupportedCapabilityError,
} from '@ctxgraph/fragments-core';

// The one place the engine reads `capabilities`. Every required method of the contract is there
// on every store (checked when the engine is made); only an optional capability (search, search
// prefixes, retention, live replies) may be missing, and what needs one refuses without it.

/** A store that serves `Capability`: its methods present. */
export type StoreWith<Capability extends OptionalCapability> = ContextStore &
  Required<Pick<ContextStore, OptionalCapabilityMethods[Capability][number]>>;

/**
 * Whether `store` serves `capability`: declared, with every method the contract's table lists
 * (search prefixes widen search: they need `search` too).
 */
export function serves(store: ContextStore, capability: OptionalCapability): boolean {
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
