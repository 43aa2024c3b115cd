import type {
  BranchRecord,
  ChatRecord,
  CheckpointRecord,
  ContextFragment,
  ContextLaneRecord,
  ContextRenderer,
  Page,
  PruneResult,
  SearchHit,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import {
  type CheckpointOptions,
  checkpointHead,
  type DeleteBranchOptions,
  type EnginePruneResult,
  forkAtHead,
  type PruneOptions,
  pruneChat,
  renameBranchOf,
  restoreCheckpoint,
  rewindTo,
  type SwitchBranchOptions,
  switchToBranch,
} from './branches/branch-operations';
import type { BranchComparisonReport, CompareBranchesOptions } from './branches/compare-branches';
import { type SearchOptions, searchChat } from './branches/search';
import { chatUsageOf } from './chat-usage';
import type { AutoCompaction } from './compaction/auto-compact';
import { type CompactionResult, type CompactOptions, compactCall } from './compaction/compact';
import {
  type ContextEngineOptions,
  checkEngineOptions,
  optionsProblem,
  pickRenderer,
  pruneOptionsProblem,
  type SaveResult,
  switchOptionsProblem,
  type UsageOptions,
  usageOptionsProblem,
} from './context-engine-options';
import type { ContextLane } from './context-lane/context-lane';
import {
  compareCall,
  continueCall,
  deleteBranchCall,
  type EngineParts,
  engineParts,
  resolveCall,
  saveCall,
  setFragments,
} from './engine-parts';
import { type InspectOptions, type InspectSnapshot, inspectCall } from './inspect';
import {
  type ContinueFromOptions,
  type ContinueFromResult,
  findMessage,
  type LocateResult,
  locate,
  type MessageVersion,
  type PathVersions,
  versions,
  versionsOnPath,
} from './messages/message-graph';
import type { ModelResolveResult, ResolveOptions, ResolveResult } from './resolve/budgeted-resolve';
import type { ChatSession, ChatUpdate } from './session/chat-session';
import type { SaveOptions } from './session/write-messages';
import type { UsageTotals } from './usage/usage-totals';

/**
 * Manages one chat: system context (fragments rendered into a system prompt) and a branching
 * conversation persisted in a {@link ContextStore}.
 *
 * It opens the chat lazily on the first `resolve()` / `save()` (creating it, with a `main`
 * branch, when new), caches the active branch's chain and re-reads only what changed. Every
 * method applies in call order: an async method sees exactly the fragments set before it was
 * called, even when earlier calls are still running, and they run one at a time.
 *
 * What it hands out (messages from `resolve()` and `inspect()`) is frozen: copy a message
 * (`structuredClone`) to change it.
 *
 * @example
 * ```ts
 * const engine = new ContextEngine({ store, chatId: 'chat-001', userId: 'user-001' });
 * engine.set(role('You are helpful.'), user('Hello!'));
 * const { systemPrompt, messages } = await engine.resolve({ renderer: new XmlRenderer() });
 * engine.set(assistant(reply));
 * await engine.save();
 * ```
 */
export class ContextEngine {
  /** The open chat: store, ids, call-order queue, branch view, pending lane, validator. */
  readonly #session: ChatSession;
  readonly #lane: ContextLane;
  /** The session, the lane, the budget planner and the default renderer, together. */
  readonly #parts: EngineParts;

  constructor(options: ContextEngineOptions) {
    this.#parts = engineParts(checkEngineOptions(options));
    this.#session = this.#parts.session;
    this.#lane = this.#parts.lane;
  }

  /** The chat id. */
  get chatId(): string {
    return this.#session.chatId;
  }

  /** The user this engine works for. */
  get userId(): string {
    return this.#session.userId;
  }

  /**
   * The engine's branch: `main` until the chat is opened, then the chat's active branch, or the
   * one `continueFrom()` put it on (while no branch has its position as head, the branch the next
   * save's fork is named after).
   */
  get branch(): string {
    return this.#session.view.branch;
  }

  /**
   * The node the engine is at, or undefined when its path has no message: the head of its
   * branch as last seen, or (after `continueFrom()`) its own position.
   */
  get headMessageId(): string | undefined {
    return this.#session.view.headMessageId ?? undefined;
  }

  /**
   * The chat as last read or written (its `revision` and `rewrittenAt` follow every save and read
   * of this engine), or null before the engine opened it.
   */
  get chat(): ChatRecord | null {
    return this.#session.chat;
  }

  /**
   * Takes `chat`, this chat's record as the caller has just read it (`store.getChat`), as the
   * chat's state for the operations called after it, in place of the read of the chat's revision
   * each of them makes while the engine is at a node (after `continueFrom()`): a request that
   * read the chat once places itself, saves and resolves without reading it again. The engine's
   * own writes and reads raise it. Writes stay compare-and-set on the head the engine knows, so a
   * snapshot another writer has moved past never overwrites anything (the write starts its own
   * branch, or is retried); reads show the chat as of the snapshot. `null` goes back to reading.
   * Checked now: `ValidationError` for a record of another chat (or of a chat of this id that
   * was deleted and made again since the engine opened it), `OwnershipError` for another user's.
   *
   * @example
   * ```ts
   * const chat = await store.getChat(chatId); // once per request
   * if (chat?.userId === userId) engine.useSnapshot(chat);
   * ```
   */
  useSnapshot(chat: ChatRecord | null): void {
    this.#session.useSnapshot(chat);
  }

  /**
   * Adds fragments: message fragments are queued (pending) for `save()`, all others join the
   * system context, each in the order given. Chainable. A message is checked here with the rules
   * every store applies (id, NUL, lone surrogates, JSON-storable content, depth), so what
   * `resolve()` shows can always be saved; a bad fragment throws and none of them is added.
   */
  set(...fragments: ContextFragment[]): this {
    setFragments(this.#parts, fragments);
    return this;
  }

  /** Renders the context fragments (not the messages) with `renderer` or the engine's default. */
  render(renderer?: ContextRenderer): string {
    return pickRenderer(renderer, this.#parts.renderer, 'render(renderer)').render(this.context);
  }

  /**
   * The system prompt and the conversation, ready for the AI SDK: the branch's saved messages,
   * oldest first, then the pending ones (lazy ones resolved in place), all validated. The
   * messages are frozen.
   */
  resolve(options?: ResolveOptions & { format?: 'ui' }): Promise<ResolveResult>;
  resolve(options: ResolveOptions & { format: 'model' }): Promise<ModelResolveResult>;
  resolve(options?: ResolveOptions): Promise<ResolveResult | ModelResolveResult> {
    return resolveCall(this.#parts, options);
  }

  /**
   * Persists the messages set before this call as nodes after the branch head, in one atomic
   * store call, and moves the head to the last of them: the store's `append` attaches them at
   * whatever the head is, serializing concurrent writers itself. `options` starts or ends a live
   * reply in the same store write (a store with `capabilities.liveReplies`, else
   * `UnsupportedCapabilityError`): such a save is a compare-and-set `commit` that, when another
   * writer moved the head first, attaches on top of the new head. A turn is never dropped. If
   * saving fails, nothing was written and the messages stay pending.
   */
  save(options: SaveOptions = {}): Promise<SaveResult> {
    return saveCall(this.#parts, options);
  }

  /**
   * Starts a new branch (`main-v2`, …) at an existing message and switches to it; the branch you
   * were on is kept. Pending messages stay pending and will be saved on the new branch. Takes a
   * node id or a message id (a message id several nodes hold means the one on the engine's path,
   * else the newest). The fork is made now, apart from the next save: to fork and save in one
   * store transaction, use `continueFrom()`.
   */
  rewind(messageId: string): Promise<BranchRecord> {
    return this.#session.run(() => rewindTo(this.#session, messageId));
  }

  /**
   * Positions this engine instance at a node (null: before the first message, to start a new
   * root). Reads the node's chain. The next `save()` attaches right after that node in one store
   * transaction: it extends the branch whose head it is (when several branches have it as head:
   * the one the engine is on, if any, else the most recently updated), otherwise, or when another
   * writer moved that head meanwhile, starts a branch at it (a fork-commit, named
   * `nextBranchName(current branch)`). From then on each save attaches after the engine's own
   * last message, never on top of another writer's. Never changes the chat's active branch
   * unless `options.activate`. Until the save, `resolve()` shows the path to the node plus the
   * pending messages (which stay pending). `MessageNotFoundError` for a node that is not in this
   * chat. `rewind()`, `switchBranch()` and `deleteBranch()` of the engine's branch return it to
   * following a branch.
   *
   * @example
   * ```ts
   * // A client edited message u2 (same id, new text): continue from the node before it.
   * const { nodeIds, changed } = await engine.locate(clientMessages);
   * await engine.continueFrom(changed ? (nodeIds[changed.index - 1] ?? null) : (nodeIds.at(-1) ?? null));
   * engine.set(message(clientMessages[changed?.index ?? nodeIds.length]));
   * ```
   */
  continueFrom(nodeId: string | null, options?: ContinueFromOptions): Promise<ContinueFromResult> {
    return continueCall(this.#parts, nodeId, options);
  }

  /**
   * Matches a chat client's messages (as the AI SDK client sends them, oldest first) against the
   * graph, following the path from the root: message i matches a child of match i-1 (a root for
   * i = 0) with the same message id; among several (versions) the one whose stored message equals
   * the client's (deep JSON equality of role, parts and metadata), else the newest. Stops at the
   * first client message that has no stored node with equal content on that path. Reads the
   * chain of the newest client message the chat holds (one index lookup and one chain read in the
   * usual case). Changes nothing.
   */
  locate(messages: readonly UIMessage[]): Promise<LocateResult> {
    return this.#session.run(() => locate(this.#session, messages));
  }

  /**
   * The node ids holding a message id, newest first (an edited message has several; at most
   * 100), through the store's index.
   */
  findMessage(messageId: string): Promise<readonly string[]> {
    return this.#session.run(() => findMessage(this.#session, messageId));
  }

  /**
   * Versions of a node: its siblings (same parent, same role; compaction, summary and dropped
   * nodes aside), oldest first, the node included, each with the newest leaf below it (open that
   * version with `continueFrom(leafNodeId)`). Reads the chat's graph.
   * `MessageNotFoundError` for a node that is not in this chat.
   */
  versions(nodeId: string): Promise<readonly MessageVersion[]> {
    return this.#session.run(() => versions(this.#session, nodeId));
  }

  /**
   * The versions of every message on the path from the root to a node that has more than one
   * (the rule of `versions()`), root first: each one's node and position on the path, the index
   * of that node among its versions, and every version's node with its newest leaf. What a chat
   * shows as "2 / 3" beside each message of a conversation, from one read of the chat's graph
   * however many messages have versions. `MessageNotFoundError` for a node that is not in this
   * chat.
   *
   * @example
   * ```ts
   * for (const point of await engine.versionsOnPath(leafNodeId))
   *   console.log(point.messageId, `${point.index + 1} / ${point.versions.length}`);
   * ```
   */
  versionsOnPath(nodeId: string): Promise<readonly PathVersions[]> {
    return this.#session.run(() => versionsOnPath(this.#session, nodeId));
  }

  /**
   * The node id of a message on the engine's current path (as the engine last read or wrote it:
   * after `resolve()`, `continueFrom()` or `save()`), or undefined.
   */
  nodeIdOf(messageId: string): string | undefined {
    return this.#session.view.chain.nodeIdOf(messageId);
  }

  /** Names the current branch head, to come back to with `restore()`. */
  checkpoint(name: string, options?: CheckpointOptions): Promise<CheckpointRecord> {
    return this.#run(optionsProblem('checkpoint(name, options)', options), () =>
      checkpointHead(this.#session, name, options?.replace === true),
    );
  }

  /** Goes back to a checkpoint on a new branch (like `rewind()` to the checkpoint's message). */
  restore(name: string): Promise<BranchRecord> {
    return this.#session.run(() => restoreCheckpoint(this.#session, name));
  }

  /**
   * Switches to an existing branch and makes it the chat's active one. Drops the messages set
   * before this call (they belonged to the branch being left); messages set after it stay. With
   * `carry`, a summary of the branch left is appended on the destination first.
   */
  switchBranch(name: string, options?: SwitchBranchOptions): Promise<BranchRecord> {
    return this.#run(switchOptionsProblem(options), (ticket) =>
      switchToBranch(this.#session, ticket, name, options?.carry),
    );
  }

  /**
   * Compacts the active branch: a summary of the conversation up to a boundary (from the root, or
   * from the previous compaction) is appended as a compaction node at the head. From then on,
   * `resolve()` on any branch through that node sends the summary in place of the span, then the
   * kept messages, then what came after; the originals stay in the store (rewind to a node before
   * the compaction to see them again). Resolves to what was written, or null when there is
   * nothing to compact. A failing or empty summary writes nothing. Pending messages stay pending.
   */
  compact(options: CompactOptions): Promise<CompactionResult | null> {
    return compactCall(this.#session, options);
  }

  /**
   * Runs the compaction the last budgeted `resolve()` deferred (`autoCompact: { policy: 'cost' }`
   * said it pays: `result.compaction.status === 'deferred'`); call it after the reply is saved,
   * in the background of the request, so nobody waits for the summary. Resolves to undefined
   * when none is due, else to what it did: `'compacted'` (written on top of the branch's head,
   * after whatever was saved meanwhile), `'superseded'` (another engine or process compacted the
   * branch first: nothing written), `'failed'` (the summarizer or the write failed: nothing
   * written, `error` says why), `'nothing-to-compact'`. It runs once; the next resolve decides
   * anew.
   *
   * @example
   * ```ts
   * const result = await engine.resolve({ budget: { maxInputTokens: 100_000, model } });
   * // … the model call, then engine.set(reply) and:
   * await engine.save();
   * if (result.compaction?.status === 'deferred') ctx.waitUntil(engine.runDeferredCompaction());
   * ```
   */
  runDeferredCompaction(): Promise<AutoCompaction | undefined> {
    return this.#session.run(async () => {
      await this.#session.open();
      return this.#parts.planner.runDeferred(this.#session);
    });
  }

  /**
   * "By the way": creates a new branch at the current head without switching to it. Pending
   * messages stay pending on the current branch.
   */
  btw(): Promise<BranchRecord> {
    return this.#session.run(() => forkAtHead(this.#session));
  }

  /**
   * Compares two branches of the chat: where they part and, per side, the messages only it has
   * (oldest first), their tokens (the engine's tokenizer) and the usage recorded on them
   * (`withUsage`) with its cost. Reads only the two chains back to their meeting point, never the
   * shared history.
   */
  compareBranches(
    left: string,
    right: string,
    options?: CompareBranchesOptions,
  ): Promise<BranchComparisonReport> {
    return compareCall(this.#parts, { left, right }, options);
  }

  /**
   * Full-text search, by default over the messages the engine's branch shows (`scope: 'chat'`
   * for the whole chat, `'user'` for every chat of the engine's user), best first, by cursor.
   * Needs a store with `capabilities.search` (`UnsupportedCapabilityError` otherwise).
   */
  search(query: string, options?: SearchOptions): Promise<Page<SearchHit>> {
    return this.#run(optionsProblem('search(query, options)', options), () =>
      searchChat(this.#session, query, options),
    );
  }

  /**
   * Gives branch `from` the name `to`, in one atomic store write: its messages, head and
   * checkpoints stay; the chat's active branch follows when it was `from`, and so does this
   * engine when it is on `from` (its pending messages stay pending). `BranchNotFoundError` for
   * an unknown branch, `BranchExistsError` when `to` is taken, `ValidationError` for a bad name.
   *
   * @example
   * ```ts
   * await engine.renameBranch('main-v2', 'shorter-answer');
   * ```
   */
  renameBranch(from: string, to: string): Promise<BranchRecord> {
    return this.#session.run(() => renameBranchOf(this.#session, from, to));
  }

  /**
   * Deletes a branch and the messages only it reached (never one another branch or a checkpoint
   * still reaches). The chat's active branch is deleted only with `activate` naming the branch
   * that becomes active; when the engine was on the deleted branch, it moves to the active one
   * and drops the messages set before this call. `dryRun` reports and changes nothing. Needs a
   * store with `capabilities.retention`.
   */
  deleteBranch(name: string, options?: DeleteBranchOptions): Promise<PruneResult> {
    return deleteBranchCall(this.#parts, name, options);
  }

  /**
   * Removes the chat's messages that no branch head and no checkpoint reaches (left behind by
   * deleted branches), safe while other writers save. `dryRun` reports what would go (nodes,
   * bytes) and changes nothing. With `compacted: 'drop'`, it then replaces the originals that
   * every reader sees only through a compaction's summary with tombstones (see
   * {@link PruneOptions.compacted}); a writer moving a head meanwhile makes that pass start over
   * (at most 5 times, then `EngineError`). Needs a store with `capabilities.retention`.
   */
  prune(options?: PruneOptions): Promise<EnginePruneResult> {
    const problem = optionsProblem('prune(options)', options) ?? pruneOptionsProblem(options);
    return this.#run(problem, () => pruneChat(this.#session, options));
  }

  /**
   * Drops the messages set before this call without saving them (a message `save()` refused, for
   * example one whose id belongs to another branch). Resolves to how many were dropped.
   */
  discardPending(): Promise<number> {
    return this.#session.run(async (ticket) => this.#session.pending.discard(ticket));
  }

  /** Sets the chat title and merges metadata; returns the chat as stored. */
  updateChat(update: ChatUpdate): Promise<ChatRecord> {
    return this.#session.run(() => this.#session.update(update));
  }

  /** The context fragments (the system-context lane), in order. */
  get context(): readonly ContextFragment[] {
    return this.#lane.fragments;
  }

  /**
   * Replaces the whole context lane (every non-message fragment) with `fragments`. Operations
   * called before keep the lane they were called with. Chainable.
   */
  replaceContext(fragments: readonly ContextFragment[]): this {
    this.#lane.replace(fragments);
    return this;
  }

  /**
   * Loads the chat's stored context lane and makes it this engine's context, replacing what was
   * set. Resolves to the fragments.
   */
  loadContext(): Promise<readonly ContextFragment[]> {
    return this.#lane.load(this.#session);
  }

  /**
   * Stores the context lane as it is when called, with the chat. After a `loadContext()` or an
   * earlier save it only writes over the revision it knows: when another writer saved in
   * between, it fails with a `ContextConflictError` and writes nothing.
   */
  saveContext(): Promise<ContextLaneRecord> {
    return this.#lane.save(this.#session);
  }

  /**
   * Recorded usage (assistant messages saved through `withUsage`) added up, with its cost from
   * the price table: over the active branch's saved messages (`scope: 'branch'`, the default) or
   * every message of the chat, on any branch (`scope: 'chat'`).
   */
  usage(options?: UsageOptions): Promise<UsageTotals> {
    return this.#run(usageOptionsProblem(options), () => chatUsageOf(this.#session, options));
  }

  /**
   * A JSON-safe snapshot for debugging: token estimate (and cost when the model's price is known),
   * the rendered prompt, the context / pending / persisted lanes, the chat's graph, and metadata.
   */
  inspect(options?: InspectOptions): Promise<InspectSnapshot> {
    return inspectCall(this.#parts, options);
  }

  /** Runs `task` in call order, or rejects with the problem found in the call's arguments. */
  #run<T>(problem: Error | undefined, task: (ticket: number) => Promise<T>): Promise<T> {
    return problem === undefined ? this.#session.run(task) : Promise.reject(problem);
  }
}
