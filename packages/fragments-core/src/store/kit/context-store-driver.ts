import type { RequiredStoreMethod } from '../capabilities';
import type {
  ChatPointerInput,
  ContextStore,
  GetHeadInput,
  GetMessageInput,
} from '../context-store';
import type { ChatChangeListener } from '../live-replies';
import type { ChatRecord } from '../records';
import type {
  ChatListQuery,
  PreparedOpenChat,
  PreparedSaveContext,
  PreparedUpdateChat,
} from './chat-input';
import type { PreparedAppend, PreparedCommit } from './commit-input';
import type {
  PreparedAppendReplyChunks,
  PreparedEndReply,
  PreparedReadReply,
  PreparedStartReply,
  PreparedStopReply,
  PreparedTakeOverReply,
} from './live-reply-input';
import type {
  PreparedCreateBranch,
  PreparedCreateCheckpoint,
  PreparedForkBranch,
  PreparedRenameBranch,
} from './pointer-input';
import type { PreparedFindMessageNodes, PreparedGetChain } from './read-input';
import type { PreparedPrune } from './retention-input';
import type { PreparedSearch, SearchMatch } from './search-input';

/** A value, or a promise of it: a driver may answer synchronously or asynchronously. */
export type Awaitable<T> = T | PromiseLike<T>;

/**
 * What each driver method receives: the contract method's input, checked and prepared by the
 * kit (ids checked, messages and JSON serialized, flags defaulted, each field read once into a
 * fresh object). The driver interface is derived from this map and the contract, so a method is
 * written once: in `ContextStore` (its specification), here (its prepared input) and in the
 * driver (its storage).
 */
export interface PreparedInputs {
  /** Create the chat with an empty active `main` branch, or load it; `OwnershipError` first. */
  readonly openChat: PreparedOpenChat;
  /** The chat, or null. */
  readonly getChat: string;
  /** Set the title when given, merge the metadata when given (`mergeMetadata`), move `updatedAt`. */
  readonly updateChat: PreparedUpdateChat;
  /** The user's chats after `after`; see {@link DriverResults.listChats}. */
  readonly listChats: ChatListQuery;
  /** Delete the chat and everything it owns (its context lane too); false when there was none. */
  readonly deleteChat: string;
  /** The chat's revision and `rewrittenAt`, and the branch's head. */
  readonly getHead: GetHeadInput;
  /**
   * The atomic compare-and-set write of messages; a fork-commit when `fork` is given; version
   * node ids from `assignVersionIds`; the live reply started or ended in the same transaction.
   */
  readonly commit: PreparedCommit;
  /**
   * Optional in a driver: the write of `commit` at the head the driver finds, appenders
   * serialized by the driver. Without it the kit appends with `getHead` and `commit`, again on
   * the head a conflict names.
   */
  readonly append: PreparedAppend;
  /** The chain back from a node, oldest first. */
  readonly getChain: PreparedGetChain;
  /** One node, or null. */
  readonly getMessage: GetMessageInput;
  /**
   * The nodes whose `message.id` is `messageId`, highest sequence first, at most `limit`;
   * `ChatNotFoundError` for an unknown chat. Use an index, not a scan.
   */
  readonly findMessageNodes: PreparedFindMessageNodes;
  /** Create a branch (and activate it when asked) in one write. */
  readonly createBranch: PreparedCreateBranch;
  /**
   * Optional in a driver: a branch named `forkBranchName(from, names)` inside the write. Without
   * it the kit lists the branches and creates the next free name, again on a name clash.
   */
  readonly forkBranch: PreparedForkBranch;
  /**
   * In one atomic write that serializes with commits, appends and branch creation:
   * `BranchNotFoundError` for an unknown `from`, `BranchExistsError` for a taken `to`, else
   * rename (head, `createdAt` and listing order kept, `updatedAt` now) and move the chat's
   * `activeBranch` when it was `from`.
   */
  readonly renameBranch: PreparedRenameBranch;
  /** A branch, or null. */
  readonly getBranch: ChatPointerInput;
  /** Every branch, oldest first. */
  readonly listBranches: string;
  /** Make an existing branch the active one. */
  readonly setActiveBranch: ChatPointerInput;
  /** Name a node (or move the name, with `replace`). */
  readonly createCheckpoint: PreparedCreateCheckpoint;
  /** A checkpoint, or null. */
  readonly getCheckpoint: ChatPointerInput;
  /** Every checkpoint, oldest first. */
  readonly listCheckpoints: string;
  /** Delete a checkpoint (never its node); false when there was none. */
  readonly deleteCheckpoint: ChatPointerInput;
  /** The chat's context lane; revision 0 and `[]` before the first save. */
  readonly getContext: string;
  /** Replace the lane (`fragmentsJson`, kept byte for byte), revision + 1. */
  readonly saveContext: PreparedSaveContext;
  /** The whole graph of a chat. */
  readonly getGraph: string;
  /** `capabilities.search`: see {@link DriverResults.searchMessages}. */
  readonly searchMessages: PreparedSearch;
  /**
   * `capabilities.retention`: in one atomic write that serializes with commits and appends,
   * check the plan with `activeBranchAfterPrune`, delete the branches, then every node no
   * remaining branch head or checkpoint reaches (`unreachableNodes`); with `dryRun`, the same
   * figures and no change.
   */
  readonly prune: PreparedPrune;
  /**
   * `capabilities.liveReplies`: insert the record (chunk count 0), replacing an ended one of that
   * id (its chunks deleted), or `LiveReplyConflictError` for a live one.
   */
  readonly startReply: PreparedStartReply;
  /** `capabilities.liveReplies`: check the owner, then the offset; store the batch, move the lease. */
  readonly appendReplyChunks: PreparedAppendReplyChunks;
  /**
   * `capabilities.liveReplies`: the record and its chunks from `from` in one snapshot: a live
   * reply, or an ended one within the store's grace period (`endedAt + graceMs > now`); else null.
   */
  readonly readReply: PreparedReadReply;
  /** `capabilities.liveReplies`: the change revision and live records in one snapshot. */
  readonly getLiveState: string;
  /** `capabilities.liveReplies`: mark the replies (keeping an earlier mark). */
  readonly stopReply: PreparedStopReply;
  /** `capabilities.liveReplies`: hand over a reply whose lease has passed (one taker wins). */
  readonly takeOverReply: PreparedTakeOverReply;
  /**
   * `capabilities.liveReplies`: mark the record ended (its chunks kept) when `owner` holds it, and
   * delete the replies whose grace period is over.
   */
  readonly endReply: PreparedEndReply;
}

/** A contract method a driver serves (all but `close` and `watchChat`, which the driver gets as they are). */
export type DriverMethodName = keyof PreparedInputs;

/** What a driver method answers where it differs from what the contract method returns. */
export interface DriverResults {
  /**
   * **Up to `query.limit + 1`** chats after `query.after` (exclusive), `updatedAt` descending
   * then id ascending in code-unit order, so the kit can tell whether another page follows: it
   * cuts the page and makes the cursor.
   */
  readonly listChats: readonly ChatRecord[];
  /**
   * The messages matching every one of `query.terms`, in ranking order (score descending, then
   * chat id in code-unit order, then sequence), after `query.after`, **up to
   * `query.limit + 1`**. Ownership first: `OwnershipError` when `query.chatId` belongs to
   * another user. The kit adds role and snippet and makes the cursor.
   */
  readonly searchMessages: readonly SearchMatch[];
}

/** What the driver method `Name` answers. */
export type DriverResult<Name extends DriverMethodName> = Name extends keyof DriverResults
  ? DriverResults[Name]
  : Awaited<ReturnType<NonNullable<ContextStore[Name]>>>;

/** The driver method `Name`: the prepared input in, the contract's result (or a promise of it) out. */
export type DriverMethod<Name extends DriverMethodName> = (
  input: PreparedInputs[Name],
) => Awaitable<DriverResult<Name>>;

/** The methods the kit provides when a driver has none (`kit-defaults.ts`). */
export type KitDefaultedMethod = 'append' | 'forkBranch';

/** The driver methods every driver has: the contract's required methods but the kit's defaults. */
export type RequiredDriverMethods = {
  readonly [Name in Exclude<RequiredStoreMethod, 'close' | KitDefaultedMethod>]: DriverMethod<Name>;
};

/** The driver methods a driver may leave out: the kit's defaults and the optional capabilities'. */
export type OptionalDriverMethods = {
  readonly [Name in Exclude<DriverMethodName, keyof RequiredDriverMethods>]?: DriverMethod<Name>;
};

/**
 * The live-reply methods of a driver (declare `capabilities.liveReplies` and serve all of them):
 * each one atomic write or one consistent read over checked input, throwing `ChatNotFoundError`,
 * `LiveReplyConflictError`, `LiveReplyLostError` and `LiveReplyOffsetError` as `ContextStore`
 * specifies. The driver's `commit` also receives `PreparedCommit.startReply` / `endReply` and
 * writes them in the commit's transaction.
 */
export type LiveReplyDriver = Pick<
  OptionalDriverMethods,
  | 'startReply'
  | 'appendReplyChunks'
  | 'readReply'
  | 'getLiveState'
  | 'stopReply'
  | 'takeOverReply'
  | 'endReply'
> & {
  /**
   * Subscribe to the chat's change feed; return the unsubscribe function (synchronously). Build
   * it on `ChatWatchers` (and `ChangePoller`).
   */
  readonly watchChat?: (chatId: string, listener: ChatChangeListener) => () => void;
};

/** Which store call failed, as {@link ContextStoreDriver.mapError} is told. */
export interface StoreCall {
  /** The contract method: `commit`, `getChat`, … (`close` for `close()`). */
  readonly method: string;
  /** How error messages name the call: `commit(input)`, `getChat(chatId)`, … */
  readonly label: string;
  /** True when the call writes (so a failure may leave a transaction to roll back). */
  readonly writes: boolean;
}

/**
 * The storage half of a `ContextStore`, wrapped by `CheckedContextStore` (or
 * `defineContextStore`), which does everything else: it checks every input once and hands the
 * driver prepared values ({@link PreparedInputs}), refuses every call after `close()`, turns
 * synchronous throws into rejections, passes ctxgraph errors through and wraps any other error in
 * a `StoreError`, exposes each optional capability's methods exactly when it is declared, and
 * provides `append` and `forkBranch` when the driver has none (`kit-defaults.ts`).
 *
 * One method per contract method, derived from the contract: each takes the method's prepared
 * input and answers the contract's result, or a promise of it (`listChats` and `searchMessages`
 * answer one item more than a page: {@link DriverResults}). What is left to the driver is what
 * only storage can do: atomic reads and writes, and the contract's storage errors
 * (`ChatNotFoundError`, `BranchNotFoundError`, `MessageNotFoundError`, `HeadConflictError`,
 * `MessageIdConflictError`, `BranchExistsError`, `CheckpointExistsError`, `OwnershipError`,
 * `ContextConflictError`), thrown from `@ctxgraph/fragments-core`. The JSDoc of `ContextStore`
 * is the specification of each method; `@ctxgraph/conformance` checks it.
 *
 * Methods may be called with `this` bound to the driver.
 */
export interface ContextStoreDriver
  extends RequiredDriverMethods,
    Omit<OptionalDriverMethods, keyof LiveReplyDriver>,
    LiveReplyDriver {
  /** The store's name in error messages and in `toJSON()`: `'InMemoryContextStore'`. */
  readonly name: string;
  /**
   * What the store is and which optional capabilities it serves (`search`, `searchPrefix`,
   * `retention`, `liveReplies`); the kit refuses a declaration whose methods are missing.
   */
  readonly capabilities: ContextStore['capabilities'];
  /**
   * The largest JSON text (a message, an engine record, metadata, a context lane, live-reply data
   * or a batch of chunks) and title the store accepts, in UTF-8 bytes; larger ones are refused
   * with a `ValidationError` before the driver is called.
   * @default no limit
   */
  readonly maxJsonBytes?: number;
  /**
   * Release what the store opened. Called once, by the first `close()`, after the calls already
   * under way have settled.
   */
  readonly close?: () => Awaitable<void>;
  /**
   * Turns an error the driver threw that is not a ctxgraph error (a database driver's error)
   * into one, typically a `StoreError` subclass that says what to do. Whatever it returns that is
   * not a ctxgraph error is wrapped in a plain `StoreError`.
   * @default wrap in a `StoreError` naming the call, with the error as `cause`
   */
  readonly mapError?: (error: unknown, call: StoreCall) => Error;
}
