import type {
  AppendInput,
  AppendReplyChunksInput,
  AppendReplyChunksResult,
  AppendResult,
  BranchRecord,
  ChatChangeListener,
  ContextLaneRecord,
  EndReplyInput,
  FindMessageNodesInput,
  ForkBranchInput,
  LiveChatState,
  LiveReplyRead,
  LiveReplyRecord,
  MessageNodeRecord,
  Page,
  PruneInput,
  PruneResult,
  ReadReplyInput,
  RenameBranchInput,
  SaveContextInput,
  SearchHit,
  SearchMessagesInput,
  StartReplyInput,
  StopReplyInput,
  TakeOverReplyInput,
} from '@ctxgraph/fragments-core';
import { ValidationError } from '@ctxgraph/fragments-core';
import {
  CheckedContextStore,
  type ContextStoreDriver,
  endedReplyGraceOption,
} from '@ctxgraph/fragments-core/store-kit';
import { branchAndCheckpointOperations } from './driver/branch-and-checkpoint-operations';
import { chatOperations } from './driver/chat-operations';
import { contextLaneOperations } from './driver/context-lane-operations';
import { liveReplyOperations } from './driver/live-replies';
import type { MemoryChats } from './driver/memory-state';
import { messageOperations } from './driver/message-operations';
import { searchAndPruneOperations } from './driver/search-and-prune-operations';

const NAME = 'InMemoryContextStore';

/** Options of {@link InMemoryContextStore}. */
export interface InMemoryContextStoreOptions {
  /**
   * The clock live replies are stamped with and their leases compared to, in milliseconds since
   * the epoch (a test passes one it can move forward, to expire a lease without waiting).
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * How long an ended reply stays readable (`readReply`, with `endedAt` set), in milliseconds of
   * `clock`: a reader that was behind when the reply ended still reads its last chunks. From
   * `ENDED_REPLY_GRACE.minMs` to `maxMs`.
   * @default 60000 (`ENDED_REPLY_GRACE.defaultMs`)
   */
  readonly endedReplyGraceMs?: number;
}

/** The storage of one store: a map of chats, and the operations over it, by concern. */
function memoryDriver(options: InMemoryContextStoreOptions): ContextStoreDriver {
  const chats: MemoryChats = new Map();
  const clock = options.clock ?? Date.now;
  const live = liveReplyOperations(
    chats,
    clock,
    endedReplyGraceOption(NAME, options.endedReplyGraceMs),
  );
  return live.wrap({
    name: NAME,
    capabilities: {
      persistent: false,
      multiProcess: false,
      search: true,
      searchPrefix: true,
      retention: true,
      liveReplies: true,
    },
    ...chatOperations(chats),
    ...messageOperations(chats),
    ...branchAndCheckpointOperations(chats),
    ...contextLaneOperations(chats),
    ...searchAndPruneOperations(chats),
    close() {
      live.close();
      chats.clear();
    },
  });
}

/**
 * A `ContextStore` that keeps every chat in memory: the reference implementation of the v1
 * contract, for tests, demos and apps that need no persistence. Data lives as long as the
 * object; two instances never share data.
 *
 * Built on the store kit (`@ctxgraph/fragments-core/store-kit`): the kit checks every input,
 * refuses calls after `close()` and keeps the error rules; this package holds only the storage.
 * Every driver operation does its checks and its write in one synchronous stretch (no `await`
 * between reading the head and moving it), so interleaved async callers get exactly the
 * compare-and-set semantics a database transaction gives.
 *
 * Serves the whole contract: its required part (`append` and `forkBranch` of its own, the
 * context lane, engine records, message versions with `findMessageNodes` and fork-commits) and
 * every optional capability: `search` (a plain scan, prefix matching included), `retention`
 * (`prune`) and live replies with a change feed delivered as the writes happen (in this process
 * only: the data is the object's).
 *
 * @example
 * ```ts
 * import { InMemoryContextStore } from '@ctxgraph/store-memory';
 *
 * const store = new InMemoryContextStore();
 * const { branch } = await store.openChat({ chatId: 'chat-1', userId: 'user-1' });
 * await store.commit({
 *   chatId: 'chat-1',
 *   branch: branch.name,
 *   expectedHeadId: branch.headMessageId,
 *   messages: [{ id: 'm1', message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }],
 * });
 * ```
 */
export class InMemoryContextStore extends CheckedContextStore {
  /**
   * The write of `commit`, attached at the head the branch has now: concurrent appenders are
   * serialized and none fails for a moved head. Returns `previousHeadId`.
   */
  declare readonly append: (input: AppendInput) => Promise<AppendResult>;
  /** A branch named `nextBranchName(from, …)` in the same write: concurrent forks get distinct names. */
  declare readonly forkBranch: (input: ForkBranchInput) => Promise<BranchRecord>;
  /** Gives a branch a new name, its head and place kept, the active branch following (see `ContextStore.renameBranch`). */
  declare readonly renameBranch: (input: RenameBranchInput) => Promise<BranchRecord>;
  /** The chat's context lane: revision 0 and no fragments until the first save. */
  declare readonly getContext: (chatId: string) => Promise<ContextLaneRecord>;
  /** Replaces the chat's context lane (revision + 1), or `ContextConflictError` when stale. */
  declare readonly saveContext: (input: SaveContextInput) => Promise<ContextLaneRecord>;
  /** Full-text search as a plain scan of the chats in scope (see `ContextStore.searchMessages`). */
  declare readonly searchMessages: (input: SearchMessagesInput) => Promise<Page<SearchHit>>;
  /** Deletes branches and the nodes nothing reaches any more, or reports them (see `ContextStore.prune`). */
  declare readonly prune: (input: PruneInput) => Promise<PruneResult>;
  /** The nodes holding a message id, newest first, from an index kept by every write (see `ContextStore.findMessageNodes`). */
  declare readonly findMessageNodes: (
    input: FindMessageNodesInput,
  ) => Promise<readonly MessageNodeRecord[]>;

  /** Starts a live reply without a message write (see `ContextStore.startReply`). */
  declare readonly startReply: (input: StartReplyInput) => Promise<LiveReplyRecord>;
  /** Appends chunks and renews the lease; says whether a stop was asked for. */
  declare readonly appendReplyChunks: (
    input: AppendReplyChunksInput,
  ) => Promise<AppendReplyChunksResult>;
  /** A reply (live, or ended within the grace period) and its chunks from an offset, or null. */
  declare readonly readReply: (input: ReadReplyInput) => Promise<LiveReplyRead | null>;
  /** The chat's live replies and change revision. */
  declare readonly getLiveState: (chatId: string) => Promise<LiveChatState>;
  /** Asks live replies to stop. */
  declare readonly stopReply: (input: StopReplyInput) => Promise<readonly LiveReplyRecord[]>;
  /** Hands a reply whose lease ran out to a new owner. */
  declare readonly takeOverReply: (input: TakeOverReplyInput) => Promise<LiveReplyRead | null>;
  /** Ends a live reply without a save. */
  declare readonly endReply: (input: EndReplyInput) => Promise<void>;
  /** The chat's change feed: notices delivered in this process as the writes happen. */
  declare readonly watchChat: (chatId: string, listener: ChatChangeListener) => () => void;

  /** An empty store. */
  constructor(options: InMemoryContextStoreOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new ValidationError('InMemoryContextStore: options must be an object.', {
        issues: [{ path: 'options', message: 'expected an object' }],
      });
    if (options.clock !== undefined && typeof options.clock !== 'function')
      throw new ValidationError(
        'InMemoryContextStore: clock must be a function returning milliseconds.',
        {
          issues: [{ path: 'clock', message: 'expected a function' }],
        },
      );
    super(memoryDriver(options));
  }

  /** Same as {@link InMemoryContextStore.close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Never serializes the data. */
  override toJSON(): string {
    return `[${NAME}]`;
  }
}
