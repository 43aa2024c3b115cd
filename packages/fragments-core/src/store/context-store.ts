import type { JsonObject, JsonValue } from '../json';
import type { ContextStoreCapabilities } from './capabilities';
import type { CommitEndReply, CommitStartReply, LiveReplyMethods } from './live-replies';
import type {
  BranchRecord,
  ChatGraph,
  ChatRecord,
  CheckpointRecord,
  EngineRecord,
  MessageNodeRecord,
  Page,
  StoredMessage,
} from './records';
import type { PruneInput, PruneResult } from './retention';
import type { SearchHit, SearchMessagesInput } from './search';

/** Input of {@link ContextStore.openChat}. */
export interface OpenChatInput {
  /** The chat id. */
  readonly chatId: string;
  /** The user opening it; becomes the owner of a new chat. */
  readonly userId: string;
  /** Metadata for a new chat; merged into an existing chat's metadata when given. */
  readonly metadata?: JsonObject;
  /** Title of a new chat. */
  readonly title?: string;
}

/** What {@link ContextStore.openChat} returns: everything an engine needs to start. */
export interface OpenChatResult {
  /** The chat (its `revision` and `activeBranch` included). */
  readonly chat: ChatRecord;
  /** The chat's active branch. */
  readonly branch: BranchRecord;
  /** True when this call created the chat. */
  readonly created: boolean;
}

/** Input of {@link ContextStore.getHead}. */
export interface GetHeadInput {
  /** The chat. */
  readonly chatId: string;
  /** The branch whose head is wanted. */
  readonly branch: string;
}

/** What {@link ContextStore.getHead} returns: the cheap read behind a warm `resolve()`. */
export interface HeadState {
  /** The chat's revision (see {@link ChatRecord.revision}). */
  readonly revision: number;
  /** The branch's head node id, or null while it is empty. */
  readonly headMessageId: string | null;
  /** The chat's `rewrittenAt` (see {@link ChatRecord.rewrittenAt}). */
  readonly rewrittenAt: number;
}

/** One message to write in a {@link ContextStore.commit}. */
export interface CommitMessage {
  /**
   * The node id, unique in the chat. Usually `message.id`; it may differ (both must be valid
   * ids), so one message id can have a node on each of several branches (message versions).
   */
  readonly id: string;
  /** The message. */
  readonly message: StoredMessage;
  /**
   * The engine's record of the node (a JSON object, stored byte-for-byte beside the message and
   * returned as `MessageNodeRecord.engineRecord` by every read). Absent: a new node has none, a
   * node replaced in place keeps the one it had (give `{}` to clear it), so a message a chat
   * client sends back cannot drop what the engine recorded.
   */
  readonly engineRecord?: EngineRecord;
  /**
   * The entry is a **new version** of its message, a new node that never
   * replaces one, whose node id the store allocates inside the write (`id` must equal
   * `message.id`; it names the message, not the node). The id is `<message.id>~<n>`, n one
   * above the version number of the message's newest node (the n of an id `<message.id>~<n>`
   * or `~<n>~…`, 1 for any other id; 2 when the chat has no node of the message), raised past
   * every id a node of the chat or another entry of the write has; when `<message.id>~<n>` is no valid id (too long), it is
   * `~<n>~<tag>`, the tag 8 hex digits of the message id's FNV-1a hash (the kit's
   * `versionNodeIdCandidates` gives the ids in this order). Allocated under the write's lock,
   * so concurrent writes of versions of one message all succeed, each with its own id, and
   * there is no limit to how many versions a message has. The node, with the id it got, is in
   * {@link CommitResult.nodes} at the entry's place.
   * @default false
   */
  readonly newVersion?: boolean;
}

/** Input of {@link ContextStore.commit}. */
export interface CommitInput {
  /** The chat. */
  readonly chatId: string;
  /** The branch whose head moves. */
  readonly branch: string;
  /**
   * The head the caller last saw (null for an empty branch). When the branch head is anything
   * else, nothing is written and a `HeadConflictError` reports the current head.
   */
  readonly expectedHeadId: string | null;
  /**
   * The messages, oldest first (at least one, no id twice). A message whose id is new to the chat
   * becomes a node whose parent is the head before it (the expected head for the first); the
   * head moves to the last new node. A message whose id already exists **on the branch** (the
   * head or one of its ancestors) replaces that node's content in place (keeping its parent and
   * sequence) and does not move the head. A message whose id exists in the chat but not on the
   * branch is refused with `MessageIdConflictError` and nothing is written: a save never changes
   * a node the branch does not show (replacing a shared ancestor changes every branch through it,
   * as it should). When the expected head is stale too, the `HeadConflictError` comes first.
   * An entry with {@link CommitMessage.newVersion} is always a new node, under the id the store
   * allocates.
   */
  readonly messages: readonly CommitMessage[];
  /**
   * Write the messages on a **new branch** (a fork-commit), created in the same transaction.
   * `branch` is then not read for the head check: the store names the branch
   * `nextBranchName(fork.from, names in the chat)` (the naming of `forkBranch`), starts its head
   * at `expectedHeadId` (a node of the chat, else `MessageNotFoundError`; null starts a new root),
   * writes the messages on it with the usual rules (a node id already in the chat must be on the
   * new branch's chain, i.e. `expectedHeadId` or an ancestor) and returns its name in
   * {@link CommitResult.branch}. Any refusal leaves neither the branch nor a node behind.
   * Concurrent fork-commits from the same node all succeed, each with its own name.
   */
  readonly fork?: CommitFork;
  /**
   * Only for a store that declares `capabilities.liveReplies` (others refuse it with
   * `ValidationError`): start the reply that answers these messages in the same write (its
   * branch is the branch written, fork-commits included; it follows the head the commit leaves).
   * When the chat already has a live reply of that id, `LiveReplyConflictError` and nothing is
   * written (an ended reply of that id is replaced). Not together with `endReply`.
   */
  readonly startReply?: CommitStartReply;
  /**
   * Only for a store that declares `capabilities.liveReplies` (others refuse it with
   * `ValidationError`): the commit is the final save of this live reply, which ends in the same
   * write (marked ended; its chunks stay readable for the store's grace period). Unless `owner`
   * holds the reply, `LiveReplyLostError`
   * and nothing is written (checked before the head). Not together with `startReply`.
   */
  readonly endReply?: CommitEndReply;
}

/** {@link CommitInput.fork}: the commit starts a branch of its own. */
export interface CommitFork {
  /** The branch the new one is named after (need not exist): `main` → `main-v2`, … */
  readonly from: string;
  /** Make the new branch the chat's active one in the same transaction. @default false */
  readonly activate?: boolean;
}

/** Input of {@link ContextStore.findMessageNodes}. */
export interface FindMessageNodesInput {
  /** The chat. */
  readonly chatId: string;
  /** The message id (`message.id`) to look for. */
  readonly messageId: string;
  /** The most nodes to return (1 to 100). @default 20 */
  readonly limit?: number;
}

/** Input of {@link ContextStore.append}. */
export interface AppendInput {
  /** The chat. */
  readonly chatId: string;
  /** The branch to append to, at whatever its head is when the store takes the write. */
  readonly branch: string;
  /** The messages, with the same rules as {@link CommitInput.messages}. */
  readonly messages: readonly CommitMessage[];
}

/** Input of {@link ContextStore.forkBranch}. */
export interface ForkBranchInput {
  /** The chat. */
  readonly chatId: string;
  /**
   * The branch the fork is named after: the new name is `nextBranchName(from, names in the chat)`
   * (`main` → `main-v2`; `main-v2` with `main-v3` taken → `main-v4`). Need not exist. When the
   * picked name would be longer than an identifier may be, a `ValidationError` naming `from` is
   * thrown and nothing is created.
   */
  readonly from: string;
  /** The node the branch starts at (must exist in the chat), or null for an empty branch. */
  readonly headMessageId: string | null;
  /** Make it the chat's active branch in the same write. @default false */
  readonly activate?: boolean;
}

/** What {@link ContextStore.commit} returns. */
export interface CommitResult {
  /** The branch head after the commit. */
  readonly headMessageId: string | null;
  /** The chat's revision after the commit. */
  readonly revision: number;
  /** The chat's `rewrittenAt` after the commit (equal to `revision` when this commit replaced a node). */
  readonly rewrittenAt: number;
  /**
   * The nodes as stored, in input order (inserted and replaced ones): the node of an entry with
   * {@link CommitMessage.newVersion} carries the id the store allocated.
   */
  readonly nodes: readonly MessageNodeRecord[];
  /**
   * The branch written: the name the store gave the new branch of a fork-commit
   * ({@link CommitInput.fork}); a store may also give it for a plain commit (the branch asked for).
   */
  readonly branch?: string;
}

/** A chat's context lane as stored: its system-context fragments, serialized. */
export interface ContextLaneRecord {
  /** The chat. */
  readonly chatId: string;
  /**
   * The fragments, in order, as JSON (what `@ctxgraph/serialization`'s `fromFragment` makes).
   * The store keeps each value byte-for-byte as opaque JSON.
   */
  readonly fragments: readonly JsonValue[];
  /** 0 while nothing was ever saved; goes up by exactly one with every `saveContext`. */
  readonly revision: number;
  /** Milliseconds since the epoch of the last save, or null while nothing was ever saved. */
  readonly updatedAt: number | null;
}

/** Input of {@link ContextStore.saveContext}. */
export interface SaveContextInput {
  /** The chat. */
  readonly chatId: string;
  /** The whole lane, in order (it replaces what was stored); JSON-storable values. */
  readonly fragments: readonly JsonValue[];
  /**
   * The revision the caller last read. When given and the stored revision is another one,
   * nothing is written and a `ContextConflictError` reports the stored revision. Omit it for
   * last-writer-wins.
   */
  readonly expectedRevision?: number;
}

/** What {@link ContextStore.append} returns. */
export interface AppendResult extends CommitResult {
  /** The head the messages were attached to: the branch head when the store took the write. */
  readonly previousHeadId: string | null;
}

/** Input of {@link ContextStore.getChain}. */
export interface GetChainInput {
  /** The chat. */
  readonly chatId: string;
  /** The node to walk back from (usually a branch head). */
  readonly headMessageId: string;
  /**
   * Stop before this node: the caller already has it and everything before it. When the walk
   * does not meet it, it goes on to the root and `reachedUntil` is false.
   */
  readonly until?: string;
  /**
   * The most nodes to return: the newest `limit` of the chain. Continue with `nextCursor`.
   * @default unlimited
   */
  readonly limit?: number;
}

/** What {@link ContextStore.getChain} returns. */
export interface ChainPage {
  /** The nodes, oldest first. */
  readonly nodes: readonly MessageNodeRecord[];
  /**
   * When `limit` cut the chain: the id to pass as `headMessageId` for the older part (the parent
   * of the oldest node returned). Null when the walk reached the root or `until`.
   */
  readonly nextCursor: string | null;
  /** True when the walk stopped because it met `until`. */
  readonly reachedUntil: boolean;
}

/** Input of {@link ContextStore.listChats}. */
export interface ListChatsInput {
  /** Whose chats. */
  readonly userId: string;
  /** @default 20 (at most 100) */
  readonly limit?: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: string;
}

/** Input of {@link ContextStore.updateChat}. */
export interface UpdateChatInput {
  /** The chat. */
  readonly chatId: string;
  /** A new title (null clears it); left as is when omitted. */
  readonly title?: string | null;
  /** Keys to merge into the metadata (shallow; a key set to null stays null). */
  readonly metadata?: JsonObject;
}

/** Input of {@link ContextStore.createBranch}. */
export interface CreateBranchInput {
  /** The chat. */
  readonly chatId: string;
  /** The new branch's name; refused with `BranchExistsError` when taken. */
  readonly name: string;
  /** The node the branch starts at (must exist in the chat), or null for an empty branch. */
  readonly headMessageId: string | null;
  /** Make it the chat's active branch in the same write. @default false */
  readonly activate?: boolean;
}

/** Input of {@link ContextStore.renameBranch}. */
export interface RenameBranchInput {
  /** The chat. */
  readonly chatId: string;
  /** The branch's current name; `BranchNotFoundError` when the chat has no such branch. */
  readonly from: string;
  /**
   * Its new name: a valid identifier, other than `from`, that no branch of the chat has
   * (`BranchExistsError` otherwise).
   */
  readonly to: string;
}

/** Names a branch or checkpoint of a chat. */
export interface ChatPointerInput {
  /** The chat. */
  readonly chatId: string;
  /** The branch or checkpoint name. */
  readonly name: string;
}

/** Input of {@link ContextStore.createCheckpoint}. */
export interface CreateCheckpointInput {
  /** The chat. */
  readonly chatId: string;
  /** The checkpoint's name. */
  readonly name: string;
  /** The node it points at (must exist in the chat). */
  readonly messageId: string;
  /** Move an existing checkpoint of that name instead of refusing. @default false */
  readonly replace?: boolean;
}

/** Input of {@link ContextStore.getMessage}. */
export interface GetMessageInput {
  /** The chat. */
  readonly chatId: string;
  /** The node id (the message id, except for a node of a later version of the message). */
  readonly messageId: string;
}

/**
 * Where ctxgraph keeps conversations: chats, message nodes, branches and checkpoints. Version 1
 * of the contract.
 *
 * Every method is one whole use case, atomic on its own. Every method that takes a `chatId` of a
 * chat that does not exist throws `ChatNotFoundError` (except `getChat` → null, `deleteChat` →
 * false). Bad input throws `ValidationError` before anything is written. `@ctxgraph/conformance`
 * holds the full behavioural suite; run it against any implementation.
 *
 * **Required and optional.** Every store has every method of `REQUIRED_STORE_METHODS`: the chats,
 * the message writes (`commit`, and `append`), chains and nodes (`findMessageNodes` included:
 * every store keeps message versions and the engine's records beside each message), branches
 * (`forkBranch` and `renameBranch` included), checkpoints and the context lane. Optional are only
 * the capabilities a small store may reasonably lack, each declared in `capabilities` with the
 * methods `OPTIONAL_CAPABILITY_METHODS` lists: `search` (with `searchPrefix`), `retention` and
 * `liveReplies`. A thin store built on the store kit gets `append` and `forkBranch` from the kit
 * when its driver has none. Optional capabilities are also how v1 grows: a later ability is a new
 * optional flag with its methods (`liveReplies` is one), never a change to the required part.
 */
export interface ContextStore extends LiveReplyMethods {
  /** The specification version (of this contract) the store implements. */
  readonly specificationVersion: 'v1';
  /** What the store is (`persistent`, `multiProcess`) and which optional capabilities it serves. */
  readonly capabilities: ContextStoreCapabilities;

  /**
   * Creates the chat (with an empty `main` branch, active) or loads it, in one call. Refuses with
   * `OwnershipError` when it exists and belongs to another user, before reading anything else.
   */
  openChat(input: OpenChatInput): Promise<OpenChatResult>;
  /** The chat, or null. */
  getChat(chatId: string): Promise<ChatRecord | null>;
  /** Sets the title and merges metadata; returns the chat as stored. */
  updateChat(input: UpdateChatInput): Promise<ChatRecord>;
  /**
   * A user's chats, most recently updated first, ties by id in binary (code unit, "C" collation)
   * order, by cursor. Never returns an empty page before the last one.
   */
  listChats(input: ListChatsInput): Promise<Page<ChatRecord>>;
  /** Deletes the chat and everything it owns. False when there was no such chat. */
  deleteChat(chatId: string): Promise<boolean>;

  /**
   * The chat's revision and one branch's head: the one read a warm `resolve()` makes.
   * `BranchNotFoundError` for an unknown branch.
   */
  getHead(input: GetHeadInput): Promise<HeadState>;
  /**
   * The only write of messages: inserts / replaces the nodes, moves the head, bumps the revision,
   * all in one transaction, or (when the head is not `expectedHeadId`) writes nothing and throws
   * `HeadConflictError` with the current head. The revision goes up by exactly one per commit
   * (and by nothing else: `updateChat` and branch or checkpoint writes leave it as it is).
   * `BranchNotFoundError` for an unknown branch.
   */
  commit(input: CommitInput): Promise<CommitResult>;
  /**
   * The same write as `commit`, attached at the branch
   * head the store finds instead of one the caller expects. The store serializes appenders on the
   * branch (its row lock or write transaction), so this never fails because another writer moved
   * the head: it is for batches that do not depend on what they attach to. Same validation, same
   * replace-in-place rule (against the head it finds), same +1 revision, one round trip.
   * `BranchNotFoundError` for an unknown branch.
   */
  append(input: AppendInput): Promise<AppendResult>;
  /**
   * The chain from a node back toward the root, oldest first, in one query.
   * `MessageNotFoundError` when `headMessageId` is not in the chat; an `until` that is not in the
   * chat is not an error (the walk goes to the root). When a page ends right before `until`,
   * `reachedUntil` is true and `nextCursor` null.
   */
  getChain(input: GetChainInput): Promise<ChainPage>;
  /** One node, or null. */
  getMessage(input: GetMessageInput): Promise<MessageNodeRecord | null>;
  /**
   * The nodes of the chat whose message has
   * the id `messageId` (`message.id`, which may differ from the node id), newest (highest
   * sequence) first, at most `limit` (default 20, at most 100). An unknown id gives `[]`.
   * Indexed: its cost does not grow with the chat. `ChatNotFoundError` for an unknown chat.
   */
  findMessageNodes(input: FindMessageNodesInput): Promise<readonly MessageNodeRecord[]>;

  /** Creates a branch (optionally making it active in the same write). */
  createBranch(input: CreateBranchInput): Promise<BranchRecord>;
  /**
   * Creates a branch whose name the store picks with
   * `nextBranchName(from, every branch name of the chat)` inside the same atomic write, so two
   * concurrent forks get two names and neither fails. `MessageNotFoundError` when
   * `headMessageId` is not in the chat.
   */
  forkBranch(input: ForkBranchInput): Promise<BranchRecord>;
  /**
   * Gives the branch `from` the name `to`, in one
   * atomic write, and returns it as stored. It keeps its head, its `createdAt` and its place in
   * `listBranches`; its `updatedAt` becomes the time of the rename. When `from` is the chat's
   * active branch, the chat's `activeBranch` becomes `to` in the same write. Checkpoints (which
   * point at nodes, not branches) and the chat's `revision` are not changed. A writer that still
   * addresses the branch by its old name gets `BranchNotFoundError` and writes nothing (a commit
   * or append that took the branch before the rename lands on it, and the rename keeps its
   * head): no write is lost. `BranchNotFoundError` for an unknown `from`, `BranchExistsError`
   * when `to` is taken, `ValidationError` for a bad name or `to` equal to `from`.
   */
  renameBranch(input: RenameBranchInput): Promise<BranchRecord>;
  /** A branch, or null. */
  getBranch(input: ChatPointerInput): Promise<BranchRecord | null>;
  /** Every branch of the chat, oldest first. */
  listBranches(chatId: string): Promise<BranchRecord[]>;
  /** Makes an existing branch the chat's active one; `BranchNotFoundError` otherwise. */
  setActiveBranch(input: ChatPointerInput): Promise<BranchRecord>;

  /**
   * Names a node; refuses a taken name with `CheckpointExistsError` unless `replace`, which
   * moves it (its `createdAt` becomes the time of the move).
   */
  createCheckpoint(input: CreateCheckpointInput): Promise<CheckpointRecord>;
  /** A checkpoint, or null. */
  getCheckpoint(input: ChatPointerInput): Promise<CheckpointRecord | null>;
  /** Every checkpoint of the chat, oldest first. */
  listCheckpoints(chatId: string): Promise<CheckpointRecord[]>;
  /** Deletes a checkpoint (never the node). False when there was none. */
  deleteCheckpoint(input: ChatPointerInput): Promise<boolean>;

  /**
   * The chat's context lane; revision 0 and no
   * fragments while none was saved. `ChatNotFoundError` for an unknown chat.
   */
  getContext(chatId: string): Promise<ContextLaneRecord>;
  /**
   * Replaces the chat's context lane in one write
   * and returns it with its new revision (+1). `ContextConflictError` when `expectedRevision` is
   * given and stale; `ChatNotFoundError` for an unknown chat. Does not change the chat's
   * `revision` (that counts message commits).
   */
  saveContext(input: SaveContextInput): Promise<ContextLaneRecord>;

  /**
   * Optional (declare `capabilities.search`): the messages of `userId`'s chats (or of one chat,
   * or of one branch's chain) whose text holds every word of the query under the search rule
   * (`SearchMessagesInput.query`: one tokenization for every store), best first (the score of
   * `SearchHit.score` descending, then chat id in code-unit order, then sequence), by a keyset
   * cursor (the last hit's sort key, never an offset). Every message committed before the call
   * is found, and a message replaced in place is found by its new text only; a pruned or deleted
   * one never. How a store indexes is its own choice, but an app that never searches should not
   * pay for it on every save (the bundled SQL stores index lazily, on the first search of a
   * chat, and then with each save to a chat they have searched). `OwnershipError` when `chatId` belongs to another user, `ChatNotFoundError` /
   * `BranchNotFoundError` for an unknown chat or branch.
   */
  searchMessages?(input: SearchMessagesInput): Promise<Page<SearchHit>>;
  /**
   * Optional (declare `capabilities.retention`): deletes the branches asked for, then every node
   * that no remaining branch head and no checkpoint reaches, in one atomic write that concurrent
   * commits and appends serialize with (a node a writer attaches to is a branch head, so it is
   * never removed, and a writer's new nodes are never removed). Does not change the chat's
   * `revision` (no branch's chain changes). With `dryRun`, reports the same and changes nothing.
   * `BranchNotFoundError` for a branch to delete that does not exist; `ValidationError` when the
   * active branch is deleted without `activate`, or every branch would go.
   */
  prune?(input: PruneInput): Promise<PruneResult>;

  /** The whole graph of a chat, for inspection. */
  getGraph(chatId: string): Promise<ChatGraph>;

  /** Releases what the store opened (never a client it was given). Safe to call twice. */
  close(): Promise<void>;
}
