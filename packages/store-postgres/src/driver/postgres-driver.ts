import type {
  AppendReplyChunksResult,
  AppendResult,
  BranchRecord,
  ChainPage,
  ChatChangeListener,
  ChatGraph,
  ChatPointerInput,
  ChatRecord,
  CheckpointRecord,
  CommitResult,
  ContextLaneRecord,
  ContextStoreCapabilities,
  GetHeadInput,
  GetMessageInput,
  HeadState,
  LiveChatState,
  LiveReplyRead,
  LiveReplyRecord,
  MessageNodeRecord,
  OpenChatResult,
  PruneResult,
} from '@ctxgraph/fragments-core';
import type {
  ChatListQuery,
  ContextStoreDriver,
  PreparedAppend,
  PreparedAppendReplyChunks,
  PreparedCommit,
  PreparedCreateBranch,
  PreparedCreateCheckpoint,
  PreparedEndReply,
  PreparedFindMessageNodes,
  PreparedForkBranch,
  PreparedGetChain,
  PreparedOpenChat,
  PreparedPrune,
  PreparedReadReply,
  PreparedRenameBranch,
  PreparedSaveContext,
  PreparedSearch,
  PreparedStartReply,
  PreparedStopReply,
  PreparedTakeOverReply,
  PreparedUpdateChat,
  SearchMatch,
  StoreCall,
} from '@ctxgraph/fragments-core/store-kit';
import type { PostgresClient } from '../options';
import { toStoreError } from '../postgres-store-error';
import type { TableNames } from '../schema/table-names';
import * as branches from './branch-sql';
import * as chain from './chain-sql';
import { PostgresChangeFeed } from './change-feed';
import * as chats from './chat-sql';
import * as checkpoints from './checkpoint-sql';
import type { CommitLive } from './commit-live-sql';
import { PostgresConnection } from './connection';
import * as contextLanes from './context-lane-sql';
import { getGraph } from './graph-sql';
import * as live from './live-replies-sql';
import * as retention from './retention-sql';
import * as search from './search-sql';
import { forkCommit, wordsForWrite, write } from './write-sql';

/** What the driver needs: the client, whether the store owns it, the tables, the migrate option. */
export interface PostgresDriverOptions {
  readonly sql: PostgresClient;
  readonly ownsClient: boolean;
  readonly names: TableNames;
  readonly migrate: boolean;
  /** The clock of live replies. */
  readonly clock: () => number;
  /** How long an ended reply stays readable, in milliseconds of the clock. */
  readonly endedReplyGraceMs: number;
  /** How the change feed learns of changes. */
  readonly changeFeed: { readonly listen: boolean; readonly pollIntervalMs: number };
}

/**
 * The storage of `PostgresContextStore`: one method per contract method, each one transaction
 * (or one statement), over inputs the store kit has already checked. The SQL lives in a module
 * per use case: chats, the write of `commit`/`append`, the chain, branches, checkpoints, the
 * context lane, search, retention.
 */
export class PostgresDriver implements ContextStoreDriver {
  readonly name = 'PostgresContextStore';
  /** Data lives in the database; any number of processes may share it. */
  readonly capabilities: ContextStoreCapabilities = {
    persistent: true,
    multiProcess: true,
    search: true,
    searchPrefix: true,
    retention: true,
    liveReplies: true,
  };
  /** True when the store opened the pool (and so closes it). */
  readonly ownsClient: boolean;
  readonly #sql: PostgresClient;
  readonly #db: PostgresConnection;
  readonly #clock: () => number;
  /** How long an ended reply stays readable, in milliseconds of the clock. */
  readonly #endedReplyGraceMs: number;
  readonly #feed: PostgresChangeFeed;

  constructor(options: PostgresDriverOptions) {
    this.#sql = options.sql;
    this.ownsClient = options.ownsClient;
    this.#db = new PostgresConnection(options.sql, options.names, options.migrate);
    this.#clock = options.clock;
    this.#endedReplyGraceMs = options.endedReplyGraceMs;
    this.#feed = new PostgresChangeFeed(this.#db, options.sql, options.changeFeed);
  }

  /** Brings the schema to the version this code needs; the version before and after. */
  migrate(): Promise<{ readonly from: number; readonly to: number }> {
    return this.#db.migrate();
  }

  async openChat(input: PreparedOpenChat): Promise<OpenChatResult> {
    const opened = await chats.openChat(this.#db, input);
    // A chat of a user who searches through this store is indexed with its saves from now on.
    this.#db.indexHints.opened(input.chatId, input.userId);
    return opened;
  }

  getChat(chatId: string): Promise<ChatRecord | null> {
    return chats.getChat(this.#db, chatId);
  }

  updateChat(input: PreparedUpdateChat): Promise<ChatRecord> {
    return chats.updateChat(this.#db, input);
  }

  listChats(query: ChatListQuery): Promise<ChatRecord[]> {
    return chats.listChats(this.#db, query);
  }

  deleteChat(chatId: string): Promise<boolean> {
    return chats.deleteChat(this.#db, chatId);
  }

  getHead(input: GetHeadInput): Promise<HeadState> {
    return chats.getHead(this.#db, input);
  }

  /** The compare-and-set write, in one statement (see `write-sql.ts`). */
  commit(input: PreparedCommit): Promise<CommitResult> {
    const { fork } = input;
    // The words of a chat kept indexed with its saves, read from the messages before any await.
    const request = {
      ...input,
      words: wordsForWrite(this.#db, input.chatId, input.messages),
      live: this.#commitLive(input),
    };
    if (fork !== undefined) return this.#db.run(() => forkCommit(this.#db, request, fork));
    return this.#db.run(async (sql) => {
      const { previousHeadId: _previous, ...result } = await write(
        this.#db,
        sql,
        'commit',
        request,
      );
      return result;
    });
  }

  /** The write of `commit` at the head PostgreSQL finds under the branch row lock: never a conflict. */
  append(input: PreparedAppend): Promise<AppendResult> {
    const words = wordsForWrite(this.#db, input.chatId, input.messages);
    return this.#db.run((sql) =>
      write(this.#db, sql, 'append', { ...input, expectedHeadId: null, words }),
    );
  }

  getChain(input: PreparedGetChain): Promise<ChainPage> {
    return chain.getChain(this.#db, input);
  }

  getMessage(input: GetMessageInput): Promise<MessageNodeRecord | null> {
    return chain.getMessage(this.#db, input);
  }

  /** The nodes holding a message id, newest first, through the `message versions` index. */
  findMessageNodes(input: PreparedFindMessageNodes): Promise<MessageNodeRecord[]> {
    return chain.findMessageNodes(this.#db, input);
  }

  createBranch(input: PreparedCreateBranch): Promise<BranchRecord> {
    return branches.createBranch(this.#db, input);
  }

  forkBranch(input: PreparedForkBranch): Promise<BranchRecord> {
    return branches.forkBranch(this.#db, input);
  }

  renameBranch(input: PreparedRenameBranch): Promise<BranchRecord> {
    return branches.renameBranch(this.#db, input);
  }

  getBranch(input: ChatPointerInput): Promise<BranchRecord | null> {
    return branches.getBranch(this.#db, input);
  }

  listBranches(chatId: string): Promise<BranchRecord[]> {
    return branches.listBranches(this.#db, chatId);
  }

  setActiveBranch(input: ChatPointerInput): Promise<BranchRecord> {
    return branches.setActiveBranch(this.#db, input);
  }

  createCheckpoint(input: PreparedCreateCheckpoint): Promise<CheckpointRecord> {
    return checkpoints.createCheckpoint(this.#db, input);
  }

  getCheckpoint(input: ChatPointerInput): Promise<CheckpointRecord | null> {
    return checkpoints.getCheckpoint(this.#db, input);
  }

  listCheckpoints(chatId: string): Promise<CheckpointRecord[]> {
    return checkpoints.listCheckpoints(this.#db, chatId);
  }

  deleteCheckpoint(input: ChatPointerInput): Promise<boolean> {
    return checkpoints.deleteCheckpoint(this.#db, input);
  }

  getGraph(chatId: string): Promise<ChatGraph> {
    return getGraph(this.#db, chatId);
  }

  getContext(chatId: string): Promise<ContextLaneRecord> {
    return contextLanes.getContext(this.#db, chatId);
  }

  /** Replaces the lane under the chat row lock: revision + 1, or `ContextConflictError`. */
  saveContext(input: PreparedSaveContext): Promise<ContextLaneRecord> {
    return contextLanes.saveContext(this.#db, input);
  }

  /** Full-text search over `search_words` (GIN index, indexed lazily), see `search-sql.ts`. */
  searchMessages(query: PreparedSearch): Promise<SearchMatch[]> {
    return search.searchMessages(this.#db, query);
  }

  /** Deletes branches and the nodes nothing reaches, serialized with writers (`retention-sql.ts`). */
  prune(input: PreparedPrune): Promise<PruneResult> {
    return retention.prune(this.#db, input);
  }

  /** A commit's live reply, for its write statement (undefined for a plain commit). */
  #commitLive(input: PreparedCommit): CommitLive | undefined {
    const { startReply, endReply } = input;
    if (endReply !== undefined) {
      const now = this.#clock();
      return { kind: 'end', ...endReply, now, cutoff: now - this.#endedReplyGraceMs };
    }
    if (startReply === undefined) return undefined;
    const now = this.#clock();
    return {
      kind: 'start',
      replyId: startReply.replyId,
      owner: startReply.owner,
      leaseExpiresAt: now + startReply.leaseMs,
      now,
      dataJson: startReply.dataJson,
    };
  }

  startReply(input: PreparedStartReply): Promise<LiveReplyRecord> {
    return live.startReply(this.#db, input, this.#clock());
  }

  appendReplyChunks(input: PreparedAppendReplyChunks): Promise<AppendReplyChunksResult> {
    return live.appendReplyChunks(this.#db, input, this.#clock());
  }

  readReply(input: PreparedReadReply): Promise<LiveReplyRead | null> {
    return live.readReply(this.#db, input, this.#clock() - this.#endedReplyGraceMs);
  }

  getLiveState(chatId: string): Promise<LiveChatState> {
    return live.getLiveState(this.#db, chatId);
  }

  stopReply(input: PreparedStopReply): Promise<LiveReplyRecord[]> {
    return live.stopReply(this.#db, input, this.#clock());
  }

  takeOverReply(input: PreparedTakeOverReply): Promise<LiveReplyRead | null> {
    return live.takeOverReply(this.#db, input, this.#clock());
  }

  endReply(input: PreparedEndReply): Promise<void> {
    const now = this.#clock();
    return live.endReply(this.#db, input, now, now - this.#endedReplyGraceMs);
  }

  /** The chat's change feed: LISTEN and a poll of the watched chats (`change-feed.ts`). */
  watchChat(chatId: string, listener: ChatChangeListener): () => void {
    return this.#feed.watch(chatId, listener);
  }

  /**
   * Stops the change feed (ending its LISTEN connection), then closes the pool the store opened
   * (never a client it was given).
   */
  async close(): Promise<void> {
    await this.#feed.close();
    if (this.ownsClient) await this.#sql.end({ timeout: 5 });
  }

  /** Database errors become a `PostgresStoreError` that says what happened and what to do. */
  mapError(error: unknown, call: StoreCall): Error {
    return toStoreError(call.method, error, call.writes);
  }
}
