// What the store contract (v1) requires of every store, and what it leaves optional. The engine,
// the store kit and the conformance kit all read these two tables, so the three never disagree on
// which methods a capability brings.

/**
 * What a store declares about itself. Two descriptive facts, always given, and the **optional
 * capabilities** of contract v1: the abilities a small store may reasonably lack. Everything else
 * the contract asks (`append`, `forkBranch`, `renameBranch`, the context lane, engine records,
 * message versions) is required of every store and has no flag.
 *
 * An optional capability is declared `true` exactly when the store serves every method of it
 * ({@link OPTIONAL_CAPABILITY_METHODS}); those methods are absent otherwise, and the engine
 * refuses what needs them with `UnsupportedCapabilityError` naming the capability. Optional
 * capabilities are how v1 grows without a v2: a new one is added as an optional flag with its
 * methods (as `liveReplies` was, after the contract was frozen), so every store written before
 * it keeps working unchanged.
 */
export interface ContextStoreCapabilities {
  /** Data outlives the store object (a file, a database server). */
  readonly persistent: boolean;
  /**
   * Several processes (or servers) may use the same data at once and the atomic writes still
   * hold across them.
   */
  readonly multiProcess: boolean;
  /**
   * The store serves `searchMessages`: full-text search over message text, scoped to a branch,
   * a chat or a user's chats. Optional: without it, the engine's `search()` rejects with
   * `UnsupportedCapabilityError`.
   */
  readonly search?: boolean;
  /**
   * `searchMessages` honours `SearchMessagesInput.prefix`: the last word of the query matches
   * every word that starts with it (`fib` finds `fibonacci`), with the same rule and the same
   * scores in every store. Optional, and only with `search`: without it, a search with
   * `prefix: true` is refused with `ValidationError`, and the engine's `search()` with
   * `{ prefix: true }` rejects with `UnsupportedCapabilityError`.
   */
  readonly searchPrefix?: boolean;
  /**
   * The store serves `prune`: deleting branches and the nodes no branch head and no checkpoint
   * reaches, with a dry run. Optional: without it, the engine's `deleteBranch()` and `prune()`
   * reject with `UnsupportedCapabilityError`.
   */
  readonly retention?: boolean;
  /**
   * The store keeps **live replies** and a **change feed** (see `live-replies.ts`): a reply's
   * stream chunks appended in batches while it is generated, read from any offset by any process
   * sharing the store, a stop mark, a lease its writer renews and another process may take over
   * once it has run out, and the end of the reply in the same write as its final save
   * (`CommitInput.startReply` / `endReply`, and the methods of
   * `OPTIONAL_CAPABILITY_METHODS.liveReplies`). Optional: without it, those methods are absent
   * and a commit with `startReply` or `endReply` is refused with `ValidationError`.
   */
  readonly liveReplies?: boolean;
}

/** The optional capabilities of contract v1: the flags of {@link ContextStoreCapabilities} that bring methods. */
export type OptionalCapability = 'search' | 'searchPrefix' | 'retention' | 'liveReplies';

/** The methods each optional capability brings (see {@link OPTIONAL_CAPABILITY_METHODS}). */
export interface OptionalCapabilityMethods {
  /** Full-text search. */
  readonly search: readonly ['searchMessages'];
  /** Search as you type: `searchMessages` with `prefix: true` (and `search` declared). */
  readonly searchPrefix: readonly ['searchMessages'];
  /** Deleting branches and unreachable nodes. */
  readonly retention: readonly ['prune'];
  /** Live replies and the change feed. */
  readonly liveReplies: readonly [
    'startReply',
    'appendReplyChunks',
    'readReply',
    'getLiveState',
    'stopReply',
    'takeOverReply',
    'endReply',
    'watchChat',
  ];
}

/** A method of the store contract that only a store declaring its capability has. */
export type OptionalStoreMethod = OptionalCapabilityMethods[OptionalCapability][number];

/**
 * Each optional capability and the `ContextStore` methods it brings: a store that declares the
 * capability has every one of them, a store that does not has none (`searchPrefix` brings no
 * method of its own: it widens `searchMessages`, and needs `search`). The one table the engine,
 * the store kit and the conformance kit read.
 */
export const OPTIONAL_CAPABILITY_METHODS: OptionalCapabilityMethods = Object.freeze({
  search: Object.freeze(['searchMessages'] as const),
  searchPrefix: Object.freeze(['searchMessages'] as const),
  retention: Object.freeze(['prune'] as const),
  liveReplies: Object.freeze([
    'startReply',
    'appendReplyChunks',
    'readReply',
    'getLiveState',
    'stopReply',
    'takeOverReply',
    'endReply',
    'watchChat',
  ] as const),
});

/** The optional capabilities, in the order of {@link OPTIONAL_CAPABILITY_METHODS}. */
export const OPTIONAL_CAPABILITIES: readonly OptionalCapability[] = Object.freeze(
  Object.keys(OPTIONAL_CAPABILITY_METHODS) as OptionalCapability[],
);

/** A method every v1 store has. */
export type RequiredStoreMethod = (typeof REQUIRED_STORE_METHODS)[number];

/**
 * The methods every v1 store has, whatever it declares: the chats, the cheap head read, the
 * message writes (`commit`, `append`), the reads of nodes and chains (`findMessageNodes`
 * included: message versions are required), branches (`forkBranch` and `renameBranch`
 * included), checkpoints, the context lane, the graph and `close`.
 */
export const REQUIRED_STORE_METHODS: readonly [
  'openChat',
  'getChat',
  'updateChat',
  'listChats',
  'deleteChat',
  'getHead',
  'commit',
  'append',
  'getChain',
  'getMessage',
  'findMessageNodes',
  'createBranch',
  'forkBranch',
  'renameBranch',
  'getBranch',
  'listBranches',
  'setActiveBranch',
  'createCheckpoint',
  'getCheckpoint',
  'listCheckpoints',
  'deleteCheckpoint',
  'getContext',
  'saveContext',
  'getGraph',
  'close',
] = Object.freeze([
  'openChat',
  'getChat',
  'updateChat',
  'listChats',
  'deleteChat',
  'getHead',
  'commit',
  'append',
  'getChain',
  'getMessage',
  'findMessageNodes',
  'createBranch',
  'forkBranch',
  'renameBranch',
  'getBranch',
  'listBranches',
  'setActiveBranch',
  'createCheckpoint',
  'getCheckpoint',
  'listCheckpoints',
  'deleteCheckpoint',
  'getContext',
  'saveContext',
  'getGraph',
  'close',
] as const);
