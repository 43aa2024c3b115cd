import {
  type BranchRecord,
  type ChatRecord,
  CheckpointNotFoundError,
  type CheckpointRecord,
  type ContextFragment,
  type ContextLaneRecord,
  type ContextRenderer,
  EngineError,
  type Page,
  type PruneResult,
  type SearchHit,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { assertIdentifier } from '@ctxgraph/fragments-core/store-kit';
import {
  type BranchComparisonReport,
  type CompareBranchesOptions,
  compareBranches,
} from './branches/compare-branches';
import { type SearchOptions, searchInput } from './branches/search';
import { BudgetPlanner } from './budget/budgeted-resolve';
import { type CheckedBudget, checkBudget } from './budget/fit-to-budget';
import {
  type CompactionResult,
  type CompactOptions,
  carrySummary,
  checkCompactOptions,
  compactBranch,
} from './compaction/compact';
import { type CompactedDropReport, dropCompactedOriginals } from './compaction/drop-originals';
import {
  type ChatUpdate,
  type CheckpointOptions,
  type ContextEngineOptions,
  checkEngineOptions,
  type DeleteBranchOptions,
  type EnginePruneResult,
  type ModelResolveResult,
  optionsProblem,
  type PruneOptions,
  pickRenderer,
  pruneOptionsProblem,
  type ResolveOptions,
  type ResolveResult,
  type SaveResult,
  type SwitchBranchOptions,
  type UsageOptions,
} from './context-engine-options';
import { ContextLane } from './context-lane/context-lane';
import { bindLazy, routeFragments } from './conversation/conversation';
import { saveTurn } from './conversation/save-turn';
import { type InspectOptions, type InspectSnapshot, inspectChat } from './inspect';
import { modelPricesProblem } from './model-prices';
import { ChatSession } from './session/chat-session';
import { forkBranch } from './session/fork-branch';
import { requireAbility } from './session/store-abilities';
import { chatUsage, pricesFor } from './usage/chat-usage';
import type { UsageTotals } from './usage/message-usage';

export type {
  ChatUpdate,
  CheckpointOptions,
  ContextEngineOptions,
  DeleteBranchOptions,
  EnginePruneResult,
  ModelResolveResult,
  PruneOptions,
  ResolveOptions,
  ResolveResult,
  SaveResult,
  SwitchBranchOptions,
  UsageOptions,
} from './context-engine-options';

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
  readonly #planner: BudgetPlanner;
  readonly #renderer: ContextRenderer | undefined;

  constructor(options: ContextEngineOptions) {
    const settings = checkEngineOptions(options);
    this.#session = new ChatSession({
      store: settings.store,
      chatId: settings.chatId,
      userId: settings.userId,
      metadata: settings.metadata,
      messageSchemas: settings.messageSchemas,
      settings: {
        maxAttempts: settings.maxSaveAttempts,
        onInvalidMessage: settings.onInvalidMessage,
        tokenizer: settings.tokenizer,
        prices: settings.prices,
      },
    });
    this.#lane = new ContextLane(settings.serializer);
    this.#planner = new BudgetPlanner(settings.autoCompact);
    this.#renderer = settings.renderer;
  }

  /** The chat id. */
  get chatId(): string {
    return this.#session.chatId;
  }

  /** The user this engine works for. */
  get userId(): string {
    return this.#session.userId;
  }

  /** The active branch (`main` until the chat is opened, then the chat's active branch). */
  get branch(): string {
    return this.#session.view.branch;
  }

  /** The head of the active branch as last seen, or undefined when it has no message. */
  get headMessageId(): string | undefined {
    return this.#session.view.headMessageId ?? undefined;
  }

  /**
   * The chat as last read or written (its `version` and `rewrittenAt` follow every save and read
   * of this engine), or null before the engine opened it.
   */
  get chat(): ChatRecord | null {
    return this.#session.chat;
  }

  /**
   * Adds fragments: message fragments are queued (pending) for `save()`, all others join the
   * system context, each in the order given. Chainable. A message is checked here with the rules
   * every store applies (id, NUL, lone surrogates, JSON-storable content, depth), so what
   * `resolve()` shows can always be saved; a bad fragment throws and none of them is added.
   */
  set(...fragments: ContextFragment[]): this {
    const routed = routeFragments(fragments);
    const session = this.#session;
    session.pending.add(routed.messages);
    this.#lane.add(routed.context);
    if (routed.lazy) {
      // A lazy correction targets what the caller was looking at: bind it after the calls before
      // it have run, from the view they left (or, with no view yet, when first used).
      session.run(async (ticket) => {
        if (session.view.loaded) bindLazy(session, ticket);
      });
    }
    return this;
  }

  /** Renders the context fragments (not the messages) with `renderer` or the engine's default. */
  render(renderer?: ContextRenderer): string {
    return pickRenderer(renderer, this.#renderer, 'render(renderer)').render(this.#lane.fragments);
  }

  /**
   * The system prompt and the conversation, ready for the AI SDK: the branch's saved messages,
   * oldest first, then the pending ones (lazy ones resolved in place), all validated. The
   * messages are frozen.
   */
  resolve(options?: ResolveOptions & { format?: 'ui' }): Promise<ResolveResult>;
  resolve(options: ResolveOptions & { format: 'model' }): Promise<ModelResolveResult>;
  resolve(options?: ResolveOptions): Promise<ResolveResult | ModelResolveResult> {
    const problem = optionsProblem('resolve(options)', options);
    if (problem) return Promise.reject(problem);
    const format = options?.format;
    if (format !== undefined && format !== 'ui' && format !== 'model') {
      return Promise.reject(
        new ValidationError(
          `resolve(options): format must be 'ui' or 'model', received ${JSON.stringify(format)}.`,
        ),
      );
    }
    let budget: CheckedBudget | undefined;
    try {
      if (options?.budget !== undefined) budget = checkBudget('resolve(options)', options.budget);
    } catch (error) {
      return Promise.reject(error);
    }
    const context = this.#lane.atCall();
    return this.#session.run(async (ticket) => {
      const renderer = pickRenderer(options?.renderer, this.#renderer, 'resolve(options)');
      const opened = await this.#session.open();
      const call = { budget, renderer, fragments: context(), ticket, format };
      return this.#planner.resolve(this.#session, call, opened);
    });
  }

  /**
   * Persists the messages set before this call as nodes after the branch head, in one atomic
   * store call, and moves the head to the last of them. A store that declares `append` attaches
   * them at whatever the head is, serializing concurrent writers itself; with any other store
   * the engine compares-and-sets and, when another writer moved the head first, attaches on top
   * of the new head. A turn is never dropped. If saving fails, nothing was written and the
   * messages stay pending.
   */
  save(): Promise<SaveResult> {
    return this.#session.run(async (ticket) => {
      await saveTurn(this.#session, ticket);
      return { headMessageId: this.headMessageId };
    });
  }

  /**
   * Starts a new branch (`main-v2`, …) at an existing message and switches to it; the branch you
   * were on is kept. Pending messages stay pending and will be saved on the new branch.
   */
  rewind(messageId: string): Promise<BranchRecord> {
    return this.#session.run(async () => {
      assertIdentifier('rewind(messageId)', 'messageId', messageId);
      await this.#session.open();
      return forkBranch(this.#session, messageId, true);
    });
  }

  /** Names the current branch head, to come back to with `restore()`. */
  checkpoint(name: string, options?: CheckpointOptions): Promise<CheckpointRecord> {
    const problem = optionsProblem('checkpoint(name, options)', options);
    if (problem) return Promise.reject(problem);
    const { store, chatId, view } = this.#session;
    return this.#session.run(async () => {
      assertIdentifier('checkpoint(name)', 'name', name);
      await this.#session.open();
      const { headMessageId } = await store.getHead({ chatId, branch: view.branch });
      if (headMessageId === null) {
        throw new EngineError(
          `checkpoint("${name}"): branch "${view.branch}" has no saved message yet; save() before taking a checkpoint.`,
        );
      }
      const replace = options?.replace === true;
      return store.createCheckpoint({ chatId, name, messageId: headMessageId, replace });
    });
  }

  /** Goes back to a checkpoint on a new branch (like `rewind()` to the checkpoint's message). */
  restore(name: string): Promise<BranchRecord> {
    const { store, chatId } = this.#session;
    return this.#session.run(async () => {
      assertIdentifier('restore(name)', 'name', name);
      await this.#session.open();
      const checkpoint = await store.getCheckpoint({ chatId, name });
      if (checkpoint === null) throw new CheckpointNotFoundError(chatId, name);
      return forkBranch(this.#session, checkpoint.messageId, true);
    });
  }

  /**
   * Switches to an existing branch and makes it the chat's active one. Drops the messages set
   * before this call (they belonged to the branch being left); messages set after it stay. With
   * `carry`, a summary of the branch left is appended on the destination first.
   */
  switchBranch(name: string, options?: SwitchBranchOptions): Promise<BranchRecord> {
    const problem = optionsProblem('switchBranch(name, options)', options);
    if (problem) return Promise.reject(problem);
    const carry = options?.carry;
    if (carry !== undefined && typeof carry?.summarize !== 'function') {
      return Promise.reject(
        new ValidationError(
          'switchBranch(name, options): carry must be { summarize } with a summarizer function (for example summarizer({ model })).',
          { issues: [{ path: 'carry.summarize', message: 'expected a function' }] },
        ),
      );
    }
    const session = this.#session;
    return session.run(async (ticket) => {
      assertIdentifier('switchBranch(name)', 'name', name);
      await session.open();
      const fromBranch = session.view.branch;
      // The summary of the branch left goes onto the destination before the switch.
      if (carry !== undefined && name !== fromBranch)
        await carrySummary(session, { fromBranch, toBranch: name, summarize: carry.summarize });
      const branch = await session.store.setActiveBranch({ chatId: session.chatId, name });
      session.pending.drop(ticket);
      session.view.moveTo(branch);
      return branch;
    });
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
    let checked: CompactOptions;
    try {
      checked = checkCompactOptions(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#session.run(async () => {
      await this.#session.open();
      return compactBranch(this.#session, checked);
    });
  }

  /**
   * "By the way": creates a new branch at the current head without switching to it. Pending
   * messages stay pending on the current branch.
   */
  btw(): Promise<BranchRecord> {
    const { store, chatId, view } = this.#session;
    return this.#session.run(async () => {
      await this.#session.open();
      const { headMessageId } = await store.getHead({ chatId, branch: view.branch });
      return forkBranch(this.#session, headMessageId, false);
    });
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
    const method = 'compareBranches(left, right, options)';
    const problem = optionsProblem(method, options) ?? modelPricesProblem(method, options?.prices);
    if (problem) return Promise.reject(problem);
    const session = this.#session;
    return session.run(async () => {
      assertIdentifier('compareBranches(left, right)', 'left', left);
      assertIdentifier('compareBranches(left, right)', 'right', right);
      await session.open();
      const { tokenizer, prices } = session.settings;
      return compareBranches(session.store, session.chatId, { left, right }, tokenizer, {
        ...prices,
        ...options?.prices,
      });
    });
  }

  /**
   * Full-text search, by default over the messages the engine's branch shows (`scope: 'chat'`
   * for the whole chat, `'user'` for every chat of the engine's user), best first, by cursor.
   * Needs a store with `capabilities.search` (`UnsupportedCapabilityError` otherwise).
   */
  search(query: string, options?: SearchOptions): Promise<Page<SearchHit>> {
    const problem = optionsProblem('search(query, options)', options);
    if (problem) return Promise.reject(problem);
    return this.#session.run(async () => {
      const search = requireAbility(this.#session.abilities, 'search', 'search(query)');
      // After opening: the engine's branch is the chat's active one only from then on.
      await this.#session.open();
      return search(searchInput(query, options ?? {}, this));
    });
  }

  /**
   * Deletes a branch and the messages only it reached (never one another branch or a checkpoint
   * still reaches). The chat's active branch is deleted only with `activate` naming the branch
   * that becomes active; when the engine was on the deleted branch, it moves to the active one
   * and drops the messages set before this call. `dryRun` reports and changes nothing. Needs a
   * store with `capabilities.retention`.
   */
  deleteBranch(name: string, options?: DeleteBranchOptions): Promise<PruneResult> {
    const problem = optionsProblem('deleteBranch(name, options)', options);
    if (problem) return Promise.reject(problem);
    const session = this.#session;
    return session.run(async (ticket) => {
      const prune = requireAbility(session.abilities, 'prune', 'deleteBranch(name)');
      assertIdentifier('deleteBranch(name)', 'name', name);
      await session.open();
      const { chatId, view } = session;
      const result = await prune({
        chatId,
        deleteBranches: [name],
        ...(options?.activate === undefined ? {} : { activate: options.activate }),
        ...(options?.dryRun === undefined ? {} : { dryRun: options.dryRun }),
      });
      if (!result.dryRun && name === view.branch) {
        const branch = await session.store.getBranch({ chatId, name: result.activeBranch });
        if (branch !== null) {
          session.pending.drop(ticket);
          view.moveTo(branch);
        }
      }
      return result;
    });
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
    if (problem) return Promise.reject(problem);
    const session = this.#session;
    return session.run(async () => {
      const prune = requireAbility(session.abilities, 'prune', 'prune(options)');
      await session.open();
      const { chatId } = session;
      const dryRun = options?.dryRun === true;
      const result = await prune({ chatId, dryRun });
      const compacted: CompactedDropReport =
        options?.compacted === 'drop'
          ? await dropCompactedOriginals(session, { chatId, dryRun })
          : { nodes: 0, bytes: 0, tombstoneBytes: 0, messageIds: [] };
      return { ...result, compacted };
    });
  }

  /**
   * Drops the messages set before this call without saving them (a message `save()` refused, for
   * example one whose id belongs to another branch). Resolves to how many were dropped.
   */
  discardPending(): Promise<number> {
    const { pending } = this.#session;
    return this.#session.run(async (ticket) => {
      const count = pending.before(ticket).length;
      pending.drop(ticket);
      return count;
    });
  }

  /** Sets the chat title and merges metadata; returns the chat as stored. */
  updateChat(update: ChatUpdate): Promise<ChatRecord> {
    const session = this.#session;
    return session.run(async () => {
      if (typeof update !== 'object' || update === null) {
        throw new ValidationError(
          'updateChat(update): update must be an object with title and/or metadata.',
        );
      }
      await session.open();
      session.chat = await session.store.updateChat({
        chatId: session.chatId,
        ...(update.title === undefined ? {} : { title: update.title }),
        ...(update.metadata === undefined ? {} : { metadata: update.metadata }),
      });
      return session.chat as ChatRecord;
    });
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
   * Loads the chat's stored context lane (the store must declare `capabilities.contextLane`)
   * and makes it this engine's context, replacing what was set. Resolves to the fragments.
   */
  loadContext(): Promise<readonly ContextFragment[]> {
    return this.#lane.load(this.#session);
  }

  /**
   * Stores the context lane as it is when called (the store must declare
   * `capabilities.contextLane`). After a `loadContext()` or an earlier save it only writes over
   * the revision it knows: when another writer saved in between, it fails with a
   * `ContextConflictError` and writes nothing.
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
    const problem =
      optionsProblem('usage(options)', options) ??
      modelPricesProblem('usage(options)', options?.prices);
    if (problem) return Promise.reject(problem);
    const scope = options?.scope ?? 'branch';
    if (scope !== 'branch' && scope !== 'chat') {
      return Promise.reject(
        new ValidationError(
          `usage(options): scope must be 'branch' or 'chat', received ${JSON.stringify(scope)}.`,
        ),
      );
    }
    return this.#session.run(async () => {
      await this.#session.open();
      return chatUsage(this.#session, scope, pricesFor(this.#session, options?.prices));
    });
  }

  /**
   * A JSON-safe snapshot for debugging: token estimate (and cost when the model's price is known),
   * the rendered prompt, the context / pending / persisted lanes, the chat's graph, and metadata.
   */
  inspect(options?: InspectOptions): Promise<InspectSnapshot> {
    const problem =
      optionsProblem('inspect(options)', options) ??
      modelPricesProblem('inspect(options)', options?.prices);
    if (problem) return Promise.reject(problem);
    const context = this.#lane.atCall();
    return this.#session.run(async (ticket) => {
      const renderer = pickRenderer(options?.renderer, this.#renderer, 'inspect(options)');
      return inspectChat(this.#session, this.#planner, {
        options: options ?? {},
        renderer,
        context,
        ticket,
      });
    });
  }
}
