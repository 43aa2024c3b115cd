import type { JsonObject } from '../../json';
import type {
  AppendResult,
  ChainPage,
  ChatPointerInput,
  CommitResult,
  ContextLaneRecord,
  ContextStoreCapabilities,
  GetHeadInput,
  GetMessageInput,
  HeadState,
  OpenChatResult,
} from '../context-store';
import type {
  BranchRecord,
  ChatGraph,
  ChatRecord,
  CheckpointRecord,
  MessageNodeRecord,
} from '../records';
import type { PruneResult } from '../retention';
import type {
  LiveReplyDriver,
  PreparedCommitEndReply,
  PreparedCommitStartReply,
} from './live-reply-input';
import type { PreparedPrune } from './retention-input';
import type { PreparedSearch, SearchMatch } from './search-input';
import type { ChatListQuery, PreparedCommitMessage } from './store-input';

/** A value, or a promise of it: a driver may answer synchronously or asynchronously. */
export type Awaitable<T> = T | PromiseLike<T>;

/** `openChat` input, checked. */
export interface PreparedOpenChat {
  /** The chat id. */
  readonly chatId: string;
  /** The user opening it (the owner of a new chat). */
  readonly userId: string;
  /** The title of a new chat (null when none was given). An existing chat's title is kept. */
  readonly title: string | null;
  /**
   * The metadata given, as a fresh copy the driver may keep, or undefined when none was given.
   * For an existing chat, merge it with `mergeMetadata(current, metadata)`; when undefined, an
   * existing chat is loaded without any write.
   */
  readonly metadata: JsonObject | undefined;
  /** The JSON text of a new chat's metadata (`'{}'` when none was given). */
  readonly metadataJson: string;
}

/** `updateChat` input, checked. */
export interface PreparedUpdateChat {
  /** The chat id. */
  readonly chatId: string;
  /** The new title, null to clear it, or undefined to leave it as is. */
  readonly title: string | null | undefined;
  /** Keys to merge shallowly into the metadata (a fresh copy), or undefined to leave it. */
  readonly metadata: JsonObject | undefined;
}

/** `commit` input, checked, with every message already serialized. */
export interface PreparedCommit {
  /** The chat id. */
  readonly chatId: string;
  /** The branch whose head moves. */
  readonly branch: string;
  /** The head the caller expects; anything else is a `HeadConflictError`. */
  readonly expectedHeadId: string | null;
  /**
   * At least one message, no id twice, each with its JSON text. Only when the driver declares
   * `capabilities.messageVersions`, entries may ask for a new version (`newVersion`): give them
   * their node ids with `assignVersionIds` inside the write's transaction, under the lock that
   * serializes the chat's writers, and return each node under the id it got.
   */
  readonly messages: readonly PreparedCommitMessage[];
  /**
   * Only when the driver declares `capabilities.messageVersions`: write on a new branch named
   * `forkBranchName(fork.from, names)` whose head starts at `expectedHeadId` (which must be a
   * node of the chat, or null), created in the same transaction as the messages; return its name
   * as `CommitResult.branch`. `branch` is not used. Undefined for a plain commit.
   */
  readonly fork: { readonly from: string; readonly activate: boolean } | undefined;
  /**
   * Only when the driver declares `capabilities.liveReplies`: start this live reply in the
   * commit's transaction (branch: the branch written; after: the head the commit leaves), or
   * throw `LiveReplyConflictError` having written nothing when the chat has a live reply of that
   * id (an ended one of that id is replaced, its chunks deleted). Absent for a plain commit.
   */
  readonly startReply?: PreparedCommitStartReply;
  /**
   * Only when the driver declares `capabilities.liveReplies`: end this live reply (mark it ended,
   * its chunks kept for the grace period, and delete the replies whose grace is over) in the
   * commit's transaction, or throw `LiveReplyLostError` having written nothing unless its owner
   * is `owner` (checked before the head). Absent for a plain commit.
   */
  readonly endReply?: PreparedCommitEndReply;
}

/** `findMessageNodes` input, checked. */
export interface PreparedFindMessageNodes {
  /** The chat id. */
  readonly chatId: string;
  /** The message id (`message.id`) to look for. */
  readonly messageId: string;
  /** The most nodes to return (1 to 100, defaulted to 20). */
  readonly limit: number;
}

/** `append` input, checked, with every message already serialized. */
export interface PreparedAppend {
  /** The chat id. */
  readonly chatId: string;
  /** The branch to append to, at whatever head it has when the driver takes the write. */
  readonly branch: string;
  /** At least one message, no id twice, each with its JSON text (`newVersion` as in a commit). */
  readonly messages: readonly PreparedCommitMessage[];
}

/** `getChain` input, checked. */
export interface PreparedGetChain {
  /** The chat id. */
  readonly chatId: string;
  /** The node to walk back from. */
  readonly headMessageId: string;
  /** Stop before this node, or undefined to walk to the root. */
  readonly until: string | undefined;
  /** The most nodes to return (a positive safe integer), or undefined for all of them. */
  readonly limit: number | undefined;
}

/** `createBranch` input, checked. */
export interface PreparedCreateBranch {
  /** The chat id. */
  readonly chatId: string;
  /** The new branch's name. */
  readonly name: string;
  /** The node it starts at, or null for an empty branch. */
  readonly headMessageId: string | null;
  /** Make it the active branch in the same write. */
  readonly activate: boolean;
}

/** `renameBranch` input, checked: valid names, `to` other than `from`. */
export interface PreparedRenameBranch {
  /** The chat id. */
  readonly chatId: string;
  /** The branch's current name. */
  readonly from: string;
  /** Its new name. */
  readonly to: string;
}

/** `forkBranch` input, checked. Pick the name with `forkBranchName(from, names)`. */
export interface PreparedForkBranch {
  /** The chat id. */
  readonly chatId: string;
  /** The branch the fork is named after (need not exist). */
  readonly from: string;
  /** The node it starts at, or null for an empty branch. */
  readonly headMessageId: string | null;
  /** Make it the active branch in the same write. */
  readonly activate: boolean;
}

/** `createCheckpoint` input, checked. */
export interface PreparedCreateCheckpoint {
  /** The chat id. */
  readonly chatId: string;
  /** The checkpoint's name. */
  readonly name: string;
  /** The node it points at. */
  readonly messageId: string;
  /** Move an existing checkpoint of that name instead of refusing. */
  readonly replace: boolean;
}

/** `saveContext` input, checked and serialized. */
export interface PreparedSaveContext {
  /** The chat id. */
  readonly chatId: string;
  /** The JSON text of the whole lane (an array); store it as is, byte for byte. */
  readonly fragmentsJson: string;
  /** The revision the caller read, or undefined for last-writer-wins. */
  readonly expectedRevision: number | undefined;
}

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
 * `defineContextStore`), which does everything else: it checks every input once and hands
 * the driver prepared values (ids checked, messages and JSON serialized, flags defaulted), refuses
 * every call after `close()`, turns synchronous throws into rejections, passes ctxgraph errors
 * through and wraps any other error in a `StoreError`, and exposes each optional method exactly
 * when its capability is declared.
 *
 * What is left to the driver is what only storage can do: atomic reads and writes, and the
 * contract's storage errors (`ChatNotFoundError`, `BranchNotFoundError`, `MessageNotFoundError`,
 * `HeadConflictError`, `MessageIdConflictError`, `BranchExistsError`, `CheckpointExistsError`,
 * `OwnershipError`, `ContextConflictError`), thrown from `@ctxgraph/fragments-core`. The JSDoc of
 * `ContextStore` is the specification of each method; `@ctxgraph/conformance` checks it.
 *
 * Methods may return values or promises, and may be called with `this` bound to the driver.
 */
export interface ContextStoreDriver extends LiveReplyDriver {
  /** The store's name in error messages and in `toJSON()`: `'InMemoryContextStore'`. */
  readonly name: string;
  /**
   * What the store offers. The wrapper exposes `append`, `forkBranch` and
   * `getContext`/`saveContext` exactly when declared here, and refuses a declaration whose
   * method is missing.
   */
  readonly capabilities: ContextStoreCapabilities;
  /**
   * The largest JSON text (a message, metadata, a context lane) and title the store accepts, in
   * UTF-8 bytes; larger ones are refused with a `ValidationError` before the driver is called.
   * @default no limit
   */
  readonly maxJsonBytes?: number;

  /** Create the chat with an empty active `main` branch, or load it; `OwnershipError` first. */
  openChat(input: PreparedOpenChat): Awaitable<OpenChatResult>;
  /** The chat, or null. */
  getChat(chatId: string): Awaitable<ChatRecord | null>;
  /** Set the title when given, merge the metadata when given, move `updatedAt`. */
  updateChat(input: PreparedUpdateChat): Awaitable<ChatRecord>;
  /**
   * The user's chats after `query.after` (exclusive), `updatedAt` descending then id ascending in
   * code-unit order: **up to `query.limit + 1`** of them, so the wrapper can tell whether another
   * page follows. The wrapper cuts the page and makes the cursor.
   */
  listChats(query: ChatListQuery): Awaitable<readonly ChatRecord[]>;
  /** Delete the chat and everything it owns (its context lane too); false when there was none. */
  deleteChat(chatId: string): Awaitable<boolean>;
  /** The chat's version and `rewrittenAt`, and the branch's head. */
  getHead(input: GetHeadInput): Awaitable<HeadState>;
  /** The atomic compare-and-set write of messages (see `ContextStore.commit`). */
  commit(input: PreparedCommit): Awaitable<CommitResult>;
  /** Optional (`capabilities.append`): the write of `commit` at the head the driver finds. */
  append?(input: PreparedAppend): Awaitable<AppendResult>;
  /** The chain back from a node, oldest first. */
  getChain(input: PreparedGetChain): Awaitable<ChainPage>;
  /** One node, or null. */
  getMessage(input: GetMessageInput): Awaitable<MessageNodeRecord | null>;
  /**
   * Optional (`capabilities.messageVersions`): the nodes whose `message.id` is
   * `input.messageId`, highest sequence first, at most `input.limit`; `ChatNotFoundError` for an
   * unknown chat. Use an index, not a scan.
   */
  findMessageNodes?(input: PreparedFindMessageNodes): Awaitable<readonly MessageNodeRecord[]>;
  /** Create a branch (and activate it when asked) in one write. */
  createBranch(input: PreparedCreateBranch): Awaitable<BranchRecord>;
  /** Optional (`capabilities.forkBranch`): name it with `forkBranchName` inside the write. */
  forkBranch?(input: PreparedForkBranch): Awaitable<BranchRecord>;
  /**
   * Optional (`capabilities.renameBranch`): in one atomic write that serializes with commits,
   * appends and branch creation, `BranchNotFoundError` for an unknown `from`, `BranchExistsError`
   * for a taken `to`, else rename (head, `createdAt` and listing order kept, `updatedAt` now) and
   * move the chat's `activeBranch` when it was `from`.
   */
  renameBranch?(input: PreparedRenameBranch): Awaitable<BranchRecord>;
  /** A branch, or null. */
  getBranch(input: ChatPointerInput): Awaitable<BranchRecord | null>;
  /** Every branch, oldest first. */
  listBranches(chatId: string): Awaitable<BranchRecord[]>;
  /** Make an existing branch the active one. */
  setActiveBranch(input: ChatPointerInput): Awaitable<BranchRecord>;
  /** Name a node (or move the name, with `replace`). */
  createCheckpoint(input: PreparedCreateCheckpoint): Awaitable<CheckpointRecord>;
  /** A checkpoint, or null. */
  getCheckpoint(input: ChatPointerInput): Awaitable<CheckpointRecord | null>;
  /** Every checkpoint, oldest first. */
  listCheckpoints(chatId: string): Awaitable<CheckpointRecord[]>;
  /** Delete a checkpoint (never its node); false when there was none. */
  deleteCheckpoint(input: ChatPointerInput): Awaitable<boolean>;
  /** The whole graph of a chat. */
  getGraph(chatId: string): Awaitable<ChatGraph>;
  /** Optional (`capabilities.contextLane`, with `saveContext`): the chat's context lane. */
  getContext?(chatId: string): Awaitable<ContextLaneRecord>;
  /** Optional (`capabilities.contextLane`, with `getContext`): replace the lane, revision + 1. */
  saveContext?(input: PreparedSaveContext): Awaitable<ContextLaneRecord>;
  /**
   * Optional (`capabilities.search`): the messages matching every one of `query.terms`, in
   * ranking order (score descending, then chat id in code-unit order, then sequence), skipping
   * `query.offset` of them and returning **up to `query.limit + 1`**, so the wrapper can tell
   * whether another page follows. Ownership first: `OwnershipError` when `query.chatId` belongs
   * to another user. Tokenize with `searchTokens` semantics (words of letters, digits and marks,
   * case-insensitive). The wrapper adds role and snippet and makes the cursor.
   */
  searchMessages?(query: PreparedSearch): Awaitable<readonly SearchMatch[]>;
  /**
   * Optional (`capabilities.retention`): in one atomic write that serializes with commits and
   * appends, check the plan with `activeBranchAfterPrune`, delete the branches, then every node
   * no remaining branch head or checkpoint reaches (`unreachableNodes`); with `dryRun`, the same
   * figures and no change.
   */
  prune?(input: PreparedPrune): Awaitable<PruneResult>;

  /**
   * Release what the store opened. Called once, by the first `close()`, after the calls already
   * under way have settled.
   */
  close?(): Awaitable<void>;
  /**
   * Turns an error the driver threw that is not a ctxgraph error (a database driver's error)
   * into one, typically a `StoreError` subclass that says what to do. Whatever it returns that is
   * not a ctxgraph error is wrapped in a plain `StoreError`.
   * @default wrap in a `StoreError` naming the call, with the error as `cause`
   */
  mapError?(error: unknown, call: StoreCall): Error;
}
