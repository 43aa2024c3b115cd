import {
  type ContextStore,
  type ContextStoreCapabilities,
  UnsupportedCapabilityError,
} from '@ctxgraph/fragments-core';

/**
 * The optional methods a store offers, each bound to the store, or undefined when the store does
 * not declare the capability (or declares it without the method). Found once per store: the one
 * place the engine reads `capabilities`.
 */
export interface StoreAbilities {
  /** `append` (capability `append`): attach at whatever the head is. */
  readonly append: ContextStore['append'];
  /** `forkBranch` (capability `forkBranch`): create a branch with the next free name atomically. */
  readonly forkBranch: ContextStore['forkBranch'];
  /** `getContext` and `saveContext` (capability `contextLane`). */
  readonly contextLane: ContextLaneAbility | undefined;
  /** `searchMessages` (capability `search`). */
  readonly search: ContextStore['searchMessages'];
  /** `searchMessages` with `prefix: true` (capabilities `search` and `searchPrefix`). */
  readonly searchPrefix: ContextStore['searchMessages'];
  /** `renameBranch` (capability `renameBranch`). */
  readonly renameBranch: ContextStore['renameBranch'];
  /** `prune` (capability `retention`). */
  readonly prune: ContextStore['prune'];
  /**
   * `findMessageNodes` (capability `messageVersions`). Its presence also says the store takes a
   * node id apart from its message id and a commit's `fork` (the fork-commit).
   */
  readonly findMessageNodes: ContextStore['findMessageNodes'];
}

/** The stored context lane's two methods. */
export interface ContextLaneAbility {
  readonly getContext: NonNullable<ContextStore['getContext']>;
  readonly saveContext: NonNullable<ContextStore['saveContext']>;
}

/** Which capability each ability stands for, as `UnsupportedCapabilityError` names it. */
const CAPABILITY: { readonly [Name in keyof StoreAbilities]: keyof ContextStoreCapabilities } = {
  append: 'append',
  forkBranch: 'forkBranch',
  contextLane: 'contextLane',
  search: 'search',
  searchPrefix: 'searchPrefix',
  renameBranch: 'renameBranch',
  prune: 'retention',
  findMessageNodes: 'messageVersions',
};

/** What `store` can do beyond the required methods. */
export function abilitiesOf(store: ContextStore): StoreAbilities {
  const { capabilities } = store;
  const bound = <Method extends (...args: never[]) => unknown>(
    declared: boolean | undefined,
    method: Method | undefined,
  ): Method | undefined =>
    declared === true && typeof method === 'function' ? (method.bind(store) as Method) : undefined;
  const getContext = bound(capabilities.contextLane, store.getContext);
  const saveContext = bound(capabilities.contextLane, store.saveContext);
  return {
    append: bound(capabilities.append, store.append),
    forkBranch: bound(capabilities.forkBranch, store.forkBranch),
    contextLane:
      getContext === undefined || saveContext === undefined
        ? undefined
        : { getContext, saveContext },
    search: bound(capabilities.search, store.searchMessages),
    searchPrefix: bound(
      capabilities.search === true && capabilities.searchPrefix === true,
      store.searchMessages,
    ),
    renameBranch: bound(capabilities.renameBranch, store.renameBranch),
    prune: bound(capabilities.retention, store.prune),
    findMessageNodes: bound(capabilities.messageVersions, store.findMessageNodes),
  };
}

/**
 * True when the store keeps the engine's records beside each message itself (capability
 * `engineRecords`); otherwise the engine embeds them (record-keeping-store.ts).
 */
export function keepsEngineRecords(store: ContextStore): boolean {
  return store.capabilities.engineRecords === true;
}

/** The ability, or an `UnsupportedCapabilityError` saying `method` needs its capability. */
export function requireAbility<Name extends keyof StoreAbilities>(
  abilities: StoreAbilities,
  name: Name,
  method: string,
): NonNullable<StoreAbilities[Name]> {
  const ability = abilities[name];
  if (ability === undefined || ability === null)
    throw new UnsupportedCapabilityError(method, CAPABILITY[name]);
  return ability as NonNullable<StoreAbilities[Name]>;
}
