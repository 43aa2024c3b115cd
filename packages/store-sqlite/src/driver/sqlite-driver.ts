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
import {
  type ChatListQuery,
  type ContextStoreDriver,
  forkBranchName,
  type PreparedAppend,
  type PreparedAppendReplyChunks,
  type PreparedCommit,
  type PreparedCreateBranch,
  type PreparedCreateCheckpoint,
  type PreparedEndReply,
  type PreparedFindMessageNodes,
  type PreparedForkBranch,
  type PreparedGetChain,
  type PreparedOpenChat,
  type PreparedPrune,
  type PreparedReadReply,
  type PreparedRenameBranch,
  type PreparedSaveContext,
  type PreparedSearch,
  type PreparedStartReply,
  type PreparedStopReply,
  type PreparedTakeOverReply,
  type PreparedUpdateChat,
  type SearchMatch,
  type StoreCall,
} from '@ctxgraph/fragments-core/store-kit';
import type { SqliteMigrationResult } from '../migrations/migrations';
import type { ResolvedStoreOptions } from '../options';
import { toStoreError } from '../sqlite-store-error';
import * as branches from './branch-sql';
import * as chain from './chain-sql';
import { SqliteChangeFeed } from './change-feed';
import * as chats from './chat-sql';
import * as checkpoints from './checkpoint-sql';
import { SqliteConnection } from './connection';
import * as contextLanes from './context-lane-sql';
import { getGraph } from './graph-sql';
import * as live from './live-replies';
import { requireChat } from './lookups';
import * as retention from './retention-sql';
import * as search from './search-sql';
import { type MessageWrite, writeMessages } from './write-sql';

/**
 * The storage of `SqliteContextStore`: one method per contract method, each one statement or one
 * transaction (`BEGIN IMMEDIATE` for writes), over inputs the store kit has already checked. The
 * SQL lives in a module per use case: chats, the write of `commit`/`append`, the chain,
 * branches, checkpoints, the context lane, search, retention. Every method answers synchronously,
 * as better-sqlite3 does.
 */
export class SqliteDriver implements ContextStoreDriver {
  readonly name = 'SqliteContextStore';
  /** A file is persistent and shared safely between processes; `:memory:` is neither. */
  readonly capabilities: ContextStoreCapabilities;
  /** The size limit of JSON texts and titles (`maxMessageBytes`). */
  readonly maxJsonBytes: number;
  /** The connection, with the table names and the path. */
  readonly db: SqliteConnection;
  /** The clock of live replies. */
  readonly #clock: () => number;
  /** How long an ended reply stays readable, in milliseconds of the clock. */
  readonly #endedReplyGraceMs: number;
  /** The change feed: polls the file only while something watches. */
  readonly #feed: SqliteChangeFeed;

  /** Opens (or takes) the database and migrates it unless told not to. */
  constructor(options: ResolvedStoreOptions) {
    this.db = new SqliteConnection(options);
    this.maxJsonBytes = options.maxMessageBytes;
    this.#clock = options.clock;
    this.#endedReplyGraceMs = options.endedReplyGraceMs;
    this.#feed = new SqliteChangeFeed(this.db, options.pollIntervalMs);
    const memory = this.db.memory;
    // append, forkBranch, the context lane and prune are served on any connection: their write
    // transaction serializes them. Search reads the FTS5 index the schema keeps. Engine records
    // sit in their own column beside the message, written by the same statements.
    this.capabilities = {
      persistent: !memory,
      multiProcess: !memory,
      search: true,
      searchPrefix: true,
      retention: true,
      liveReplies: true,
    };
  }

  /** Creates or upgrades the tables now. */
  migrate(): SqliteMigrationResult {
    return this.db.migrate();
  }

  openChat(input: PreparedOpenChat): OpenChatResult {
    return chats.openChat(this.db, input);
  }

  getChat(chatId: string): ChatRecord | null {
    return chats.getChat(this.db, chatId);
  }

  updateChat(input: PreparedUpdateChat): ChatRecord {
    return chats.updateChat(this.db, input, this.maxJsonBytes);
  }

  listChats(query: ChatListQuery): ChatRecord[] {
    return chats.listChats(this.db, query);
  }

  deleteChat(chatId: string): boolean {
    return chats.deleteChat(this.db, chatId);
  }

  getHead(input: GetHeadInput): HeadState {
    return chats.getHead(this.db, input);
  }

  /**
   * Inserts / replaces the nodes and moves the head in one `BEGIN IMMEDIATE` transaction, or
   * throws having written nothing (`HeadConflictError` when the head is not `expectedHeadId`).
   */
  commit(input: PreparedCommit): CommitResult {
    const db = this.db;
    const { fork } = input;
    // A live reply started or ended with the messages: checked and written in the same
    // transaction (see `live-replies.ts`).
    const withLive = input.startReply !== undefined || input.endReply !== undefined;
    const now = withLive ? this.#clock() : 0;
    const result = db.run('commit(input)', () =>
      db.write(() => {
        if (withLive) live.commitLive.before(db, input);
        let written: CommitResult;
        if (fork === undefined) {
          // The commit's result, spelled out (`previousHeadId` is the append's alone).
          const result = writeMessages(db, input);
          written = {
            headMessageId: result.headMessageId,
            revision: result.revision,
            rewrittenAt: result.rewrittenAt,
            nodes: result.nodes,
          };
        } else {
          // A fork-commit: the branch and its messages in the one transaction, so a refusal of
          // the messages rolls the branch back too.
          const { chatId, expectedHeadId } = input;
          requireChat(db, chatId);
          branches.assertNode(db, chatId, expectedHeadId);
          const names = branches.branchRows(db, chatId).map((row) => row.name);
          const name = forkBranchName(fork.from, names);
          branches.insertBranch(db, chatId, name, expectedHeadId, fork.activate);
          const { previousHeadId: _previous, ...result } = writeMessages(db, {
            ...input,
            branch: name,
          });
          written = { ...result, branch: name };
        }
        if (withLive) {
          live.commitLive.after(
            db,
            input,
            { branch: written.branch ?? input.branch, headMessageId: written.headMessageId },
            now,
            this.#endedReplyGraceMs,
          );
        }
        return written;
      }),
    );
    if (withLive) this.#feed.changed(input.chatId);
    return result;
  }

  /**
   * The write of `commit` at the head found once the write lock is held: the transaction
   * serializes appenders, in this process and in others, so none fails because another one
   * moved the head.
   */
  append(input: PreparedAppend): AppendResult {
    const db = this.db;
    const write: MessageWrite = {
      chatId: input.chatId,
      branch: input.branch,
      messages: input.messages,
      expectedHeadId: undefined,
    };
    return db.run('append(input)', () => db.write(() => writeMessages(db, write)));
  }

  getChain(input: PreparedGetChain): ChainPage {
    return chain.getChain(this.db, input);
  }

  getMessage(input: GetMessageInput): MessageNodeRecord | null {
    return chain.getMessage(this.db, input);
  }

  /** The nodes holding a message id, newest first, through the `message versions` index. */
  findMessageNodes(input: PreparedFindMessageNodes): MessageNodeRecord[] {
    return chain.findMessageNodes(this.db, input);
  }

  createBranch(input: PreparedCreateBranch): BranchRecord {
    return branches.createBranch(this.db, input);
  }

  forkBranch(input: PreparedForkBranch): BranchRecord {
    return branches.forkBranch(this.db, input);
  }

  renameBranch(input: PreparedRenameBranch): BranchRecord {
    return branches.renameBranch(this.db, input);
  }

  getBranch(input: ChatPointerInput): BranchRecord | null {
    return branches.getBranch(this.db, input);
  }

  listBranches(chatId: string): BranchRecord[] {
    return branches.listBranches(this.db, chatId);
  }

  setActiveBranch(input: ChatPointerInput): BranchRecord {
    return branches.setActiveBranch(this.db, input);
  }

  createCheckpoint(input: PreparedCreateCheckpoint): CheckpointRecord {
    return checkpoints.createCheckpoint(this.db, input);
  }

  getCheckpoint(input: ChatPointerInput): CheckpointRecord | null {
    return checkpoints.getCheckpoint(this.db, input);
  }

  listCheckpoints(chatId: string): CheckpointRecord[] {
    return checkpoints.listCheckpoints(this.db, chatId);
  }

  deleteCheckpoint(input: ChatPointerInput): boolean {
    return checkpoints.deleteCheckpoint(this.db, input);
  }

  getGraph(chatId: string): ChatGraph {
    return getGraph(this.db, chatId);
  }

  getContext(chatId: string): ContextLaneRecord {
    return contextLanes.getContext(this.db, chatId);
  }

  /** Replaces the lane under the write lock: revision + 1, or `ContextConflictError`. */
  saveContext(input: PreparedSaveContext): ContextLaneRecord {
    return contextLanes.saveContext(this.db, input);
  }

  /** Full-text search over the FTS5 index of the kit's words, indexed lazily (see `search-sql.ts`). */
  searchMessages(query: PreparedSearch): SearchMatch[] {
    return search.searchMessages(this.db, query);
  }

  /** Deletes branches and the nodes nothing reaches, in one write transaction (`retention-sql.ts`). */
  prune(input: PreparedPrune): PruneResult {
    return retention.prune(this.db, input);
  }

  startReply(input: PreparedStartReply): LiveReplyRecord {
    const record = live.startReply(this.db, input, this.#clock());
    this.#feed.changed(input.chatId);
    return record;
  }

  appendReplyChunks(input: PreparedAppendReplyChunks): AppendReplyChunksResult {
    const result = this.#feed.ownAppend(() =>
      live.appendReplyChunks(this.db, input, this.#clock()),
    );
    if (input.count > 0) this.#feed.appended(input.chatId, input.replyId, result.chunkCount);
    return result;
  }

  readReply(input: PreparedReadReply): LiveReplyRead | null {
    return live.readReply(this.db, input, this.#clock(), this.#endedReplyGraceMs);
  }

  getLiveState(chatId: string): LiveChatState {
    return live.getLiveState(this.db, chatId);
  }

  stopReply(input: PreparedStopReply): LiveReplyRecord[] {
    const records = live.stopReply(this.db, input, this.#clock());
    this.#feed.changed(input.chatId);
    return records;
  }

  takeOverReply(input: PreparedTakeOverReply): LiveReplyRead | null {
    const taken = live.takeOverReply(this.db, input, this.#clock());
    if (taken !== null) this.#feed.changed(input.chatId);
    return taken;
  }

  endReply(input: PreparedEndReply): void {
    live.endReply(this.db, input, this.#clock(), this.#endedReplyGraceMs);
    this.#feed.changed(input.chatId);
  }

  /** The chat's change feed: a poll of the file while something watches (`change-feed.ts`). */
  watchChat(chatId: string, listener: ChatChangeListener): () => void {
    return this.#feed.watch(chatId, listener);
  }

  /** Stops the change feed, then closes the database the store opened (never one it was given). */
  close(): void {
    this.#feed.close();
    this.db.close();
  }

  /** SQLite errors become a `StoreError` naming the file and saying what to do. */
  mapError(error: unknown, call: StoreCall): Error {
    return toStoreError(error, this.db.path, call.label);
  }
}
