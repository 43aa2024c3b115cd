import type {
  AppendInput,
  AppendResult,
  BranchRecord,
  ContextLaneRecord,
  FindMessageNodesInput,
  ForkBranchInput,
  MessageNodeRecord,
  Page,
  PruneInput,
  PruneResult,
  RenameBranchInput,
  SaveContextInput,
  SearchHit,
  SearchMessagesInput,
} from '@ctxgraph/fragments-core';
import { CheckedContextStore, type ContextStoreDriver } from '@ctxgraph/fragments-core/store-kit';
import { branchAndCheckpointOperations } from './driver/branch-and-checkpoint-operations';
import { chatOperations } from './driver/chat-operations';
import { contextLaneOperations } from './driver/context-lane-operations';
import type { MemoryChats } from './driver/memory-state';
import { messageOperations } from './driver/message-operations';
import { searchAndPruneOperations } from './driver/search-and-prune-operations';

const NAME = 'InMemoryContextStore';

/** The storage of one store: a map of chats, and the operations over it, by concern. */
function memoryDriver(): ContextStoreDriver {
  const chats: MemoryChats = new Map();
  return {
    name: NAME,
    capabilities: {
      persistent: false,
      multiProcess: false,
      append: true,
      forkBranch: true,
      contextLane: true,
      search: true,
      searchPrefix: true,
      renameBranch: true,
      retention: true,
      engineRecords: true,
      messageVersions: true,
    },
    ...chatOperations(chats),
    ...messageOperations(chats),
    ...branchAndCheckpointOperations(chats),
    ...contextLaneOperations(chats),
    ...searchAndPruneOperations(chats),
    close() {
      chats.clear();
    },
  };
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
 * Serves every optional ability of the contract: `append`, `forkBranch`, the context lane
 * (`getContext` / `saveContext`), `search` (a plain scan, prefix matching included), `renameBranch`, `retention` (`prune`), engine
 * records and message versions (`findMessageNodes`, fork-commits).
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

  /** An empty store. */
  constructor() {
    super(memoryDriver());
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
