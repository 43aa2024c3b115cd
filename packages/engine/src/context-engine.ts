import { type MessageSchemas, toModelMessages } from '@ctxgraph/codecs';
import {
  assertIdentifier,
  assertJsonObject,
  BranchExistsError,
  type BranchRecord,
  BudgetExceededError,
  type BudgetShortfall,
  type ChatRecord,
  CheckpointNotFoundError,
  type CheckpointRecord,
  type CommitMessage,
  type ContextFragment,
  type ContextLaneRecord,
  type ContextRenderer,
  type ContextStore,
  createEstimatorTokenizer,
  EngineError,
  type EngineRecord,
  HeadConflictError,
  type HeadState,
  isFragment,
  isLazyFragment,
  isMessageFragment,
  isTokenizer,
  type JsonObject,
  type JsonValue,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  nextBranchName,
  type Page,
  type PruneResult,
  type SearchHit,
  type Tokenizer,
  UnsupportedCapabilityError,
  UnsupportedSpecificationError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { defaultSerializer } from '@ctxgraph/serialization';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import { BranchView } from './branch-view';
import {
  type BranchComparisonReport,
  type CompareBranchesOptions,
  compareBranches,
} from './branches/compare-branches';
import { type CompactedDropReport, dropCompactedOriginals } from './branches/drop-compacted';
import { pruneOf } from './branches/retention';
import { type SearchOptions, searchInput, searchOf } from './branches/search';
// --- budget (issue #14) ---
import { toMarkedModelMessages } from './budget/cache-markers';
import {
  type BudgetMemory,
  type BudgetOptions,
  type BudgetReport,
  checkBudget,
  fitToBudget,
} from './budget/fit-to-budget';
import { TokenCounter } from './budget/token-counter';
// --- end budget ---
import {
  type AutoCompaction,
  type AutoCompactOptions,
  type CheckedAutoCompact,
  checkAutoCompact,
  compactForBudget,
  wantsCompaction,
} from './compaction/auto-compact';
import {
  type CompactionContext,
  type CompactionResult,
  type CompactOptions,
  carrySummary,
  checkCompactOptions,
  compactBranch,
} from './compaction/compact';
import {
  lastShownIdWithRole,
  shownMessageCount,
  visibleConversation,
  wholeChainNodes,
} from './compaction/compacted-view';
import type { Summarizer } from './compaction/summarizer';
import { buildSnapshot, type InspectOptions, type InspectSnapshot } from './inspect';
import { MessageValidator } from './message-validator';
import { DEFAULT_MODEL_PRICES, type ModelPrices, modelPricesProblem } from './model-prices';
import { PendingLane } from './pending-lane';
import { RecordKeepingStore } from './record-keeping-store';
import { totalUsage, type UsageTotals } from './usage/message-usage';

/** Options of {@link ContextEngine.deleteBranch}. */
export interface DeleteBranchOptions {
  /** The branch that becomes active; required when deleting the chat's active branch. */
  activate?: string;
  /** Report what would go and change nothing. @default false */
  dryRun?: boolean;
}

/** Options of {@link ContextEngine.prune}. */
export interface PruneOptions {
  /** Report what would go and change nothing. @default false */
  dryRun?: boolean;
  /**
   * The originals behind compaction nodes: `'keep'` leaves them (a rewind before the compaction
   * shows them again); `'drop'` replaces, in place, each one that every branch and checkpoint
   * reaching it shows only through a compaction's summary with a tombstone (same id, parent and
   * sequence, content gone, an engine record whose `dropped` names the compaction). A resolve never
   * shows tombstones; search no longer finds their text. There is no undo.
   * @default 'keep'
   */
  compacted?: 'keep' | 'drop';
}

/** What {@link ContextEngine.prune} removed (or, with `dryRun`, would remove). */
export interface EnginePruneResult extends PruneResult {
  /** The originals behind compactions dropped (all zero with `compacted: 'keep'`). */
  readonly compacted: CompactedDropReport;
}

/** Options of {@link ContextEngine}. */
export interface ContextEngineOptions {
  /** Where the conversation graph lives. */
  store: ContextStore;
  /** The chat to open (created on first use). */
  chatId: string;
  /** The user working in it; a chat owned by someone else is refused. */
  userId: string;
  /** Metadata for a new chat; merged into an existing chat's metadata. */
  metadata?: JsonObject;
  /** The renderer `resolve()`, `render()` and `inspect()` use when none is passed to them. */
  renderer?: ContextRenderer;
  /**
   * Schemas the AI SDK validates messages against (`metadataSchema`, `dataSchemas`, `tools`).
   * Without them, metadata, data parts and tool payloads are only checked for shape.
   */
  messageSchemas?: MessageSchemas;
  /**
   * What `resolve()` does with a stored message that no longer validates (a tool whose schema
   * changed, say): `'throw'` refuses to resolve, `'skip'` leaves it out (`inspect()` lists it).
   * @default 'throw'
   */
  onInvalidMessage?: 'throw' | 'skip';
  /**
   * How often `save()` re-reads the head and tries again when other writers keep moving it.
   * @default 25
   */
  maxSaveAttempts?: number;
  /** Prices used by `inspect()` and `usage()`, merged over the built-in table. */
  prices?: ModelPrices;
  /**
   * How `loadContext()` / `saveContext()` turn context fragments into stored JSON and back.
   * @default `defaultSerializer` of `@ctxgraph/serialization` (every built-in fragment type)
   */
  contextSerializer?: ContextSerializer;
  /**
   * Counts tokens for `resolve({ budget })` and `inspect()`. Install a counter for your model
   * (`o200kTokenizer` of `@ctxgraph/tokenizer-o200k`, `cl100kTokenizer` of
   * `@ctxgraph/tokenizer-cl100k`) or pass any `Tokenizer`.
   * @default `createEstimatorTokenizer()` of `@ctxgraph/fragments-core` (about 4 characters a token)
   */
  tokenizer?: Tokenizer;
  /**
   * With `resolve({ budget })`: compact the branch (a summary node, see `compact()`) before the
   * budget would leave history out, once the input passes `threshold` of the budget. Off unless
   * given.
   */
  autoCompact?: AutoCompactOptions;
}

/**
 * Turns context fragments into JSON and back, for the stored context lane. A
 * `FragmentSerializer` of `@ctxgraph/serialization` is one (`createSerializer({ types })` adds
 * your own fragment types).
 */
export interface ContextSerializer {
  /** The fragment as JSON; throws when the fragment has no serialized form. */
  fromFragment(fragment: ContextFragment): unknown;
  /** The fragment back from its JSON; throws a `ValidationError` for JSON it does not accept. */
  toFragment(json: unknown): ContextFragment;
}

/** Options of {@link ContextEngine.resolve}. */
export interface ResolveOptions {
  /** How to render the context fragments; defaults to the engine's renderer. */
  renderer?: ContextRenderer;
  /**
   * `'ui'`: `messages` are AI SDK `UIMessage`s (the default). `'model'`: `messages` are model
   * messages, ready for `generateText({ system, messages })`.
   * @default 'ui'
   */
  format?: 'ui' | 'model';
  /**
   * Fit the system prompt and the history to a token budget (see `BudgetOptions`); the stored
   * graph never changes. Without it, nothing is left out and nothing is counted.
   */
  budget?: BudgetOptions;
}

/** What {@link ContextEngine.resolve} returns. */
export interface ResolveResult {
  /** The context fragments, rendered. */
  systemPrompt: string;
  /** The branch's saved messages, oldest first, then the pending ones, validated. */
  messages: UIMessage[];
  /** With `budget`: what was counted, kept and left out, the cache plan and prefix reuse. */
  budget?: BudgetReport;
  /** With `budget` and the engine's `autoCompact`, when the input passed the threshold. */
  compaction?: AutoCompaction;
}

/** What {@link ContextEngine.resolve} returns with `format: 'model'`. */
export interface ModelResolveResult {
  /** The context fragments, rendered. */
  systemPrompt: string;
  /** The same conversation as model messages (with `budget`, cache breakpoints marked). */
  messages: ModelMessage[];
  /**
   * With `budget`: the system prompt as a system message carrying its cache breakpoint, for
   * `generateText({ system, messages })`.
   */
  system?: SystemModelMessage;
  /** With `budget`: what was counted, kept and left out, the cache plan and prefix reuse. */
  budget?: BudgetReport;
  /** With `budget` and the engine's `autoCompact`, when the input passed the threshold. */
  compaction?: AutoCompaction;
}

/** What {@link ContextEngine.save} returns. */
export interface SaveResult {
  /** The branch head after saving (undefined while the branch has no message). */
  headMessageId: string | undefined;
}

/** Options of {@link ContextEngine.usage}. */
export interface UsageOptions {
  /** `'branch'`: the active branch's saved messages; `'chat'`: every message of the chat. @default 'branch' */
  scope?: 'branch' | 'chat';
  /** Prices for this call, over the engine's and the built-in ones. */
  prices?: ModelPrices;
}

/** Options of {@link ContextEngine.checkpoint}. */
export interface CheckpointOptions {
  /** Move an existing checkpoint of that name here instead of refusing. @default false */
  replace?: boolean;
}

/** Options of {@link ContextEngine.switchBranch}. */
export interface SwitchBranchOptions {
  /**
   * Carry a summary of the branch being left to the destination: `summarize` makes it from that
   * branch's conversation and it is appended as a node on the destination before the switch. A
   * failing or empty summary writes nothing and does not switch.
   */
  carry?: { summarize: Summarizer };
}

/** Changes for {@link ContextEngine.updateChat}. */
export interface ChatUpdate {
  /** A new title (null clears it). */
  title?: string | null;
  /** Keys to merge into the chat's metadata. */
  metadata?: JsonObject;
}

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
  readonly #store: RecordKeepingStore;
  readonly #chatId: string;
  readonly #userId: string;
  readonly #metadata: JsonObject | undefined;
  readonly #renderer: ContextRenderer | undefined;
  readonly #onInvalidMessage: 'throw' | 'skip';
  readonly #maxSaveAttempts: number;
  readonly #prices: ModelPrices | undefined;
  readonly #validator: MessageValidator;

  readonly #serializer: ContextSerializer;
  /** compaction/: the engine's `autoCompact` option, checked. */
  readonly #autoCompact: CheckedAutoCompact | undefined;
  // --- budget (issue #14) ---
  readonly #tokenizer: Tokenizer;
  readonly #counter = new TokenCounter();
  /** Per branch: the last budgeted input's segment hashes, for the prefix report only. */
  readonly #budgetMemory = new Map<string, BudgetMemory>();
  // --- end budget ---
  /**
   * The context lane. Never changed in place (every change makes a new array), so an operation
   * keeps exactly the lane it was called with.
   */
  #fragments: readonly ContextFragment[] = [];
  /** Changes whenever the lane is replaced (not when `set()` appends to it). */
  #contextOrigin: object = {};
  /** `loadContext()` calls not finished yet: operations called meanwhile read the lane late. */
  #contextLoads = 0;
  /** The context revision last loaded or saved, or undefined when never. */
  #contextRevision: number | undefined;
  readonly #pending = new PendingLane();
  readonly #view: BranchView;
  #chat: ChatRecord | null = null;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: ContextEngineOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ValidationError(
        'new ContextEngine(options): options must be an object with store, chatId and userId.',
      );
    }
    const store = options.store as Partial<ContextStore> | undefined;
    if (typeof store !== 'object' || store === null || typeof store.commit !== 'function') {
      throw new ValidationError(
        'new ContextEngine(options): store must be a ContextStore (for example new InMemoryContextStore()).',
        {
          issues: [{ path: 'store', message: 'expected a ContextStore' }],
        },
      );
    }
    if (store.specificationVersion !== 'v1') {
      throw new UnsupportedSpecificationError(
        `new ContextEngine(options): the store implements ContextStore specification ${JSON.stringify(store.specificationVersion)}, but this engine supports "v1". Upgrade the store or the engine so they match.`,
      );
    }
    assertIdentifier('new ContextEngine(options)', 'chatId', options.chatId);
    assertIdentifier('new ContextEngine(options)', 'userId', options.userId);
    if (options.metadata !== undefined)
      assertJsonObject('new ContextEngine(options)', 'metadata', options.metadata);
    if (options.renderer !== undefined)
      checkRenderer(options.renderer, 'new ContextEngine(options)');
    const onInvalidMessage = options.onInvalidMessage ?? 'throw';
    if (onInvalidMessage !== 'throw' && onInvalidMessage !== 'skip') {
      throw new ValidationError(
        `new ContextEngine(options): onInvalidMessage must be 'throw' or 'skip', received ${JSON.stringify(onInvalidMessage)}.`,
      );
    }
    const maxSaveAttempts = options.maxSaveAttempts ?? 25;
    if (!Number.isInteger(maxSaveAttempts) || maxSaveAttempts < 1) {
      throw new ValidationError(
        `new ContextEngine(options): maxSaveAttempts must be a positive integer, received ${String(maxSaveAttempts)}.`,
      );
    }
    const pricesProblem = modelPricesProblem('new ContextEngine(options)', options.prices);
    if (pricesProblem) throw pricesProblem;
    // The engine's records live beside each message, whatever the store (record-keeping-store.ts).
    this.#store = new RecordKeepingStore(options.store);
    this.#chatId = options.chatId;
    this.#userId = options.userId;
    this.#metadata = options.metadata;
    this.#renderer = options.renderer;
    this.#onInvalidMessage = onInvalidMessage;
    this.#maxSaveAttempts = maxSaveAttempts;
    if (options.tokenizer !== undefined && !isTokenizer(options.tokenizer)) {
      throw new ValidationError(
        'new ContextEngine(options): tokenizer must be a Tokenizer (an object with id and count(text)), such as o200kTokenizer from @ctxgraph/tokenizer-o200k.',
        { issues: [{ path: 'tokenizer', message: 'expected a Tokenizer' }] },
      );
    }
    this.#tokenizer = options.tokenizer ?? createEstimatorTokenizer();
    this.#prices = options.prices;
    this.#validator = new MessageValidator(options.messageSchemas ?? {});
    this.#serializer = options.contextSerializer ?? defaultSerializer;
    this.#autoCompact =
      options.autoCompact === undefined
        ? undefined
        : checkAutoCompact('new ContextEngine(options)', options.autoCompact);
    this.#view = new BranchView(this.#store, options.chatId, this.#validator);
  }

  /** The chat id. */
  get chatId(): string {
    return this.#chatId;
  }

  /** The user this engine works for. */
  get userId(): string {
    return this.#userId;
  }

  /** The active branch (`main` until the chat is opened, then the chat's active branch). */
  get branch(): string {
    return this.#view.branch;
  }

  /** The head of the active branch as last seen, or undefined when it has no message. */
  get headMessageId(): string | undefined {
    return this.#view.headMessageId ?? undefined;
  }

  /**
   * The chat as last read or written (its `version` and `rewrittenAt` follow every save and read
   * of this engine), or null before the engine opened it.
   */
  get chat(): ChatRecord | null {
    const chat = this.#chat;
    if (
      chat !== null &&
      (chat.version !== this.#view.version || chat.rewrittenAt !== this.#view.rewrittenAt)
    ) {
      this.#chat = { ...chat, version: this.#view.version, rewrittenAt: this.#view.rewrittenAt };
    }
    return this.#chat;
  }

  /**
   * Adds fragments: message fragments are queued (pending) for `save()`, all others join the
   * system context, each in the order given. Chainable. A message is checked here with the rules
   * every store applies (id, NUL, lone surrogates, JSON-storable content, depth), so what
   * `resolve()` shows can always be saved; a bad fragment throws and none of them is added.
   */
  set(...fragments: ContextFragment[]): this {
    const messages: Array<{ fragment: ContextFragment; index: number }> = [];
    const context: ContextFragment[] = [];
    fragments.forEach((fragment, index) => {
      if (!isFragment(fragment)) {
        throw new ValidationError(
          `set(...fragments): fragments[${index}] is not a fragment (expected an object with a string name and data).`,
          {
            issues: [{ path: `fragments[${index}]`, message: 'expected a fragment' }],
          },
        );
      }
      if (!isMessageFragment(fragment)) {
        context.push(fragment);
        return;
      }
      if (!isLazyFragment(fragment) && typeof fragment.codec?.encode !== 'function') {
        throw new ValidationError(
          `set(...fragments): message fragment "${fragment.name}" at fragments[${index}] has no codec; build messages with user(), assistant(), assistantText() or message().`,
          {
            issues: [
              { path: `fragments[${index}].codec`, message: 'message fragments need a codec' },
            ],
          },
        );
      }
      messages.push({ fragment, index });
    });
    this.#pending.add(messages);
    if (context.length > 0) this.#fragments = [...this.#fragments, ...context];
    if (messages.some(({ fragment }) => isLazyFragment(fragment))) {
      // A lazy correction targets what the caller was looking at: bind it after the calls before
      // it have run, from the view they left (or, with no view yet, when first used).
      const ticket = this.#pending.ticket;
      this.#exclusive(async () => {
        if (this.#view.loaded) this.#bindLazy(ticket);
      });
    }
    return this;
  }

  /** Renders the context fragments (not the messages) with `renderer` or the engine's default. */
  render(renderer?: ContextRenderer): string {
    return this.#pickRenderer(renderer, 'render(renderer)').render(this.#fragments);
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
    let budget: ReturnType<typeof checkBudget> | undefined;
    try {
      if (options?.budget !== undefined) budget = checkBudget('resolve(options)', options.budget);
    } catch (error) {
      return Promise.reject(error);
    }
    const ticket = this.#pending.ticket;
    const context = this.#contextAtCall();
    return this.#exclusive(async () => {
      const renderer = this.#pickRenderer(options?.renderer, 'resolve(options)');
      const opened = await this.#open();
      if (budget !== undefined) {
        // compaction/: compact instead of leaving history out, when the app opted in.
        const compaction = await this.#compactForBudget(
          budget,
          renderer,
          context ?? this.#fragments,
          ticket,
          opened,
        );
        const result = await this.#resolveWithin(
          budget,
          renderer,
          context ?? this.#fragments,
          ticket,
          format,
          // A compaction that ran may have moved the head: then the state openChat read is stale.
          compaction === undefined ? opened : undefined,
        );
        return compaction === undefined ? result : { ...result, compaction };
      }
      const systemPrompt = renderer.render(context ?? this.#fragments);
      const messages = await this.#conversation(ticket, opened);
      if (format === 'model') return { systemPrompt, messages: await toModelMessages(messages) };
      return { systemPrompt, messages };
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
    const ticket = this.#pending.ticket;
    return this.#exclusive(async () => {
      const opened = this.#chat === null ? await this.#open() : undefined;
      if (this.#pending.before(ticket).length === 0) return { headMessageId: this.headMessageId };
      if (this.#pending.hasUnbound(ticket)) {
        await this.#view.sync(opened);
        this.#bindLazy(ticket);
      }
      // A turn of plain text messages is validated at once; anything else by the AI SDK.
      const messages =
        this.#pending.messagesNow(ticket, this.#validator) ??
        (await this.#pending.messages(ticket, this.#validator));
      const records = this.#pending.engineRecords(ticket);
      const batch: CommitMessage[] = messages.map((message) => {
        const engineRecord = keptRecord(
          this.#view.chain.node(message.id),
          records?.get(message.id),
        );
        return engineRecord === undefined
          ? { id: message.id, message }
          : { id: message.id, message, engineRecord };
      });
      try {
        if (this.#store.capabilities.append === true && typeof this.#store.append === 'function') {
          const result = await this.#store.append({
            chatId: this.#chatId,
            branch: this.#view.branch,
            messages: batch,
          });
          this.#view.applyWrite(result.previousHeadId, result, messages);
        } else {
          await this.#commitOnTop(batch, messages);
        }
      } catch (error) {
        throw this.#explainSaveError(error);
      }
      this.#pending.drop(ticket);
      return { headMessageId: this.headMessageId };
    });
  }

  /**
   * Starts a new branch (`main-v2`, …) at an existing message and switches to it; the branch you
   * were on is kept. Pending messages stay pending and will be saved on the new branch.
   */
  rewind(messageId: string): Promise<BranchRecord> {
    return this.#exclusive(async () => {
      assertIdentifier('rewind(messageId)', 'messageId', messageId);
      await this.#open();
      return this.#fork(messageId, true);
    });
  }

  /** Names the current branch head, to come back to with `restore()`. */
  checkpoint(name: string, options?: CheckpointOptions): Promise<CheckpointRecord> {
    const problem = optionsProblem('checkpoint(name, options)', options);
    if (problem) return Promise.reject(problem);
    return this.#exclusive(async () => {
      assertIdentifier('checkpoint(name)', 'name', name);
      await this.#open();
      const { headMessageId } = await this.#store.getHead({
        chatId: this.#chatId,
        branch: this.#view.branch,
      });
      if (headMessageId === null) {
        throw new EngineError(
          `checkpoint("${name}"): branch "${this.#view.branch}" has no saved message yet; save() before taking a checkpoint.`,
        );
      }
      return this.#store.createCheckpoint({
        chatId: this.#chatId,
        name,
        messageId: headMessageId,
        replace: options?.replace === true,
      });
    });
  }

  /** Goes back to a checkpoint on a new branch (like `rewind()` to the checkpoint's message). */
  restore(name: string): Promise<BranchRecord> {
    return this.#exclusive(async () => {
      assertIdentifier('restore(name)', 'name', name);
      await this.#open();
      const checkpoint = await this.#store.getCheckpoint({ chatId: this.#chatId, name });
      if (checkpoint === null) throw new CheckpointNotFoundError(this.#chatId, name);
      return this.#fork(checkpoint.messageId, true);
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
    const ticket = this.#pending.ticket;
    return this.#exclusive(async () => {
      assertIdentifier('switchBranch(name)', 'name', name);
      await this.#open();
      // compaction/: the summary of the branch left goes onto the destination before the switch.
      if (carry !== undefined && name !== this.#view.branch) {
        await carrySummary(this.#compaction(), {
          fromBranch: this.#view.branch,
          toBranch: name,
          summarize: carry.summarize,
        });
      }
      const branch = await this.#store.setActiveBranch({ chatId: this.#chatId, name });
      this.#pending.drop(ticket);
      this.#view.moveTo(branch);
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
    return this.#exclusive(async () => {
      await this.#open();
      return compactBranch(this.#compaction(), checked);
    });
  }

  /**
   * "By the way": creates a new branch at the current head without switching to it. Pending
   * messages stay pending on the current branch.
   */
  btw(): Promise<BranchRecord> {
    return this.#exclusive(async () => {
      await this.#open();
      const { headMessageId } = await this.#store.getHead({
        chatId: this.#chatId,
        branch: this.#view.branch,
      });
      return this.#fork(headMessageId, false);
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
    const problem =
      optionsProblem('compareBranches(left, right, options)', options) ??
      modelPricesProblem('compareBranches(left, right, options)', options?.prices);
    if (problem) return Promise.reject(problem);
    return this.#exclusive(async () => {
      assertIdentifier('compareBranches(left, right)', 'left', left);
      assertIdentifier('compareBranches(left, right)', 'right', right);
      await this.#open();
      return compareBranches(this.#store, this.#chatId, { left, right }, this.#tokenizer, {
        ...this.#prices,
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
    return this.#exclusive(async () => {
      const search = searchOf(this.#store, 'search(query)');
      // After opening: the engine's branch is the chat's active one only from then on.
      await this.#open();
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
    const ticket = this.#pending.ticket;
    return this.#exclusive(async () => {
      const prune = pruneOf(this.#store, 'deleteBranch(name)');
      assertIdentifier('deleteBranch(name)', 'name', name);
      await this.#open();
      const result = await prune({
        chatId: this.#chatId,
        deleteBranches: [name],
        ...(options?.activate === undefined ? {} : { activate: options.activate }),
        ...(options?.dryRun === undefined ? {} : { dryRun: options.dryRun }),
      });
      if (!result.dryRun && name === this.#view.branch) {
        const branch = await this.#store.getBranch({
          chatId: this.#chatId,
          name: result.activeBranch,
        });
        if (branch !== null) {
          this.#pending.drop(ticket);
          this.#view.moveTo(branch);
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
    return this.#exclusive(async () => {
      const prune = pruneOf(this.#store, 'prune(options)');
      await this.#open();
      const dryRun = options?.dryRun === true;
      const result = await prune({ chatId: this.#chatId, dryRun });
      const compacted: CompactedDropReport =
        options?.compacted === 'drop'
          ? await dropCompactedOriginals(this.#store, { chatId: this.#chatId, dryRun })
          : { nodes: 0, bytes: 0, tombstoneBytes: 0, messageIds: [] };
      return { ...result, compacted };
    });
  }

  /**
   * Drops the messages set before this call without saving them (a message `save()` refused, for
   * example one whose id belongs to another branch). Resolves to how many were dropped.
   */
  discardPending(): Promise<number> {
    const ticket = this.#pending.ticket;
    return this.#exclusive(async () => {
      const count = this.#pending.before(ticket).length;
      this.#pending.drop(ticket);
      return count;
    });
  }

  /** Sets the chat title and merges metadata; returns the chat as stored. */
  updateChat(update: ChatUpdate): Promise<ChatRecord> {
    return this.#exclusive(async () => {
      if (typeof update !== 'object' || update === null) {
        throw new ValidationError(
          'updateChat(update): update must be an object with title and/or metadata.',
        );
      }
      await this.#open();
      const chat = await this.#store.updateChat({
        chatId: this.#chatId,
        ...(update.title === undefined ? {} : { title: update.title }),
        ...(update.metadata === undefined ? {} : { metadata: update.metadata }),
      });
      this.#chat = chat;
      return this.chat as ChatRecord;
    });
  }

  /** The context fragments (the system-context lane), in order. */
  get context(): readonly ContextFragment[] {
    return this.#fragments;
  }

  /**
   * Replaces the whole context lane (every non-message fragment) with `fragments`. Operations
   * called before keep the lane they were called with. Chainable.
   */
  replaceContext(fragments: readonly ContextFragment[]): this {
    if (!Array.isArray(fragments)) {
      throw new ValidationError('replaceContext(fragments): fragments must be an array.', {
        issues: [{ path: 'fragments', message: 'expected an array' }],
      });
    }
    fragments.forEach((fragment, index) => {
      if (!isFragment(fragment) || isMessageFragment(fragment)) {
        throw new ValidationError(
          `replaceContext(fragments): fragments[${index}] is not a context fragment (messages go through set()).`,
          { issues: [{ path: `fragments[${index}]`, message: 'expected a non-message fragment' }] },
        );
      }
    });
    this.#fragments = fragments.slice();
    this.#contextOrigin = {};
    return this;
  }

  /**
   * Loads the chat's stored context lane (the store must declare `capabilities.contextLane`)
   * and makes it this engine's context, replacing what was set. Resolves to the fragments.
   */
  loadContext(): Promise<readonly ContextFragment[]> {
    const origin = this.#contextOrigin;
    const setBefore = this.#fragments.length;
    this.#contextLoads += 1;
    return this.#exclusive(async () => {
      const store = this.#contextStore('loadContext()');
      await this.#open();
      const lane = await store.getContext(this.#chatId);
      const fragments = lane.fragments.map((json, index) => {
        try {
          return this.#serializer.toFragment(json);
        } catch (error) {
          throw new ValidationError(
            `loadContext(): stored context fragment ${index} of chat "${this.#chatId}" cannot be read: ${(error as Error).message}`,
            { cause: error },
          );
        }
      });
      // In call order: fragments set after this call stay on top; a replaceContext() after it wins.
      if (this.#contextOrigin === origin) {
        this.#fragments = [...fragments, ...this.#fragments.slice(setBefore)];
        this.#contextOrigin = {};
      }
      this.#contextRevision = lane.revision;
      return fragments;
    }).finally(() => {
      this.#contextLoads -= 1;
    });
  }

  /**
   * Stores the context lane as it is when called (the store must declare
   * `capabilities.contextLane`). After a `loadContext()` or an earlier save it only writes over
   * the revision it knows: when another writer saved in between, it fails with a
   * `ContextConflictError` and writes nothing.
   */
  saveContext(): Promise<ContextLaneRecord> {
    const contextAtCall = this.#contextAtCall();
    return this.#exclusive(async () => {
      const store = this.#contextStore('saveContext()');
      const fragments = (contextAtCall ?? this.#fragments).map((fragment, index) => {
        try {
          return this.#serializer.fromFragment(fragment) as JsonValue;
        } catch (error) {
          throw new ValidationError(
            `saveContext(): context fragment ${index} ("${fragment.name}") cannot be serialized: ${(error as Error).message}`,
            { cause: error },
          );
        }
      });
      await this.#open();
      const saved = await store.saveContext({
        chatId: this.#chatId,
        fragments,
        ...(this.#contextRevision === undefined ? {} : { expectedRevision: this.#contextRevision }),
      });
      this.#contextRevision = saved.revision;
      return saved;
    });
  }

  // --- usage (issue #14) ---
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
    return this.#exclusive(async () => {
      await this.#open();
      const prices = { ...DEFAULT_MODEL_PRICES, ...this.#prices, ...options?.prices };
      if (scope === 'chat') {
        const graph = await this.#store.getGraph(this.#chatId);
        return totalUsage(graph.nodes, prices);
      }
      await this.#view.sync();
      // compaction/: a cache read back to a compaction's boundary holds only part of the chain.
      return totalUsage(await wholeChainNodes(this.#store, this.#chatId, this.#view.chain), prices);
    });
  }
  // --- end usage ---

  /**
   * A JSON-safe snapshot for debugging: token estimate (and cost when the model's price is known),
   * the rendered prompt, the context / pending / persisted lanes, the chat's graph, and metadata.
   */
  inspect(options?: InspectOptions): Promise<InspectSnapshot> {
    const problem =
      optionsProblem('inspect(options)', options) ??
      modelPricesProblem('inspect(options)', options?.prices);
    if (problem) return Promise.reject(problem);
    const ticket = this.#pending.ticket;
    const contextAtCall = this.#contextAtCall();
    return this.#exclusive(async () => {
      const renderer = this.#pickRenderer(options?.renderer, 'inspect(options)');
      const opened = await this.#open();
      const context = contextAtCall ?? this.#fragments;
      const rendered = renderer.render(context);
      await this.#view.sync(opened);
      this.#bindLazy(ticket);
      const pending = await this.#pending.messages(ticket, this.#validator);
      const graph = await this.#store.getGraph(this.#chatId);
      this.#chat = graph.chat;
      const visible = visibleConversation(this.#view.chain);
      // --- budget and usage (issue #14) ---
      const budget =
        options?.budget === undefined
          ? null
          : this.#planDryRun(
              checkBudget('inspect(options)', options.budget),
              renderer,
              context,
              pending,
            );
      const prices = { ...DEFAULT_MODEL_PRICES, ...this.#prices, ...options?.prices };
      const usage = {
        branch: totalUsage(
          await wholeChainNodes(this.#store, this.#chatId, this.#view.chain),
          prices,
        ),
        chat: totalUsage(graph.nodes, prices),
      };
      // --- end budget and usage ---
      return buildSnapshot({
        options: options ?? {},
        tokenizer: this.#tokenizer,
        budget,
        usage,
        prices: this.#prices,
        rendererFormat: renderer.format,
        rendered,
        context,
        pending,
        persisted: visible.entries,
        appliedCompactionId: visible.compaction?.entry.node.id ?? null,
        graph,
        chatId: this.#chatId,
        userId: this.#userId,
        branch: this.#view.branch,
        headMessageId: this.#view.headMessageId,
      });
    });
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * With `autoCompact`: plans the budget without remembering anything; when the plan would leave
   * history out or the input passes the threshold, compacts first. Undefined when it did not try.
   */
  async #compactForBudget(
    budget: ReturnType<typeof checkBudget>,
    renderer: ContextRenderer,
    fragments: readonly ContextFragment[],
    ticket: number,
    opened: HeadState | undefined,
  ): Promise<AutoCompaction | undefined> {
    const options = this.#autoCompact;
    if (options === undefined) return undefined;
    await this.#view.sync(opened);
    this.#bindLazy(ticket);
    const pending = await this.#pending.messages(ticket, this.#validator);
    const plan = this.#planDryRun(budget, renderer, fragments, pending);
    if ('exceeded' in plan || !wantsCompaction(plan, options.threshold)) return undefined;
    return compactForBudget(() =>
      compactBranch(this.#compaction(), { summarize: options.summarize, keep: options.keep }),
    );
  }

  #compaction(): CompactionContext {
    return {
      store: this.#store,
      chatId: this.#chatId,
      view: this.#view,
      validator: this.#validator,
      maxAttempts: this.#maxSaveAttempts,
      tokenizer: this.#tokenizer,
    };
  }

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.then(ignore, ignore);
    return run;
  }

  /** The lane as an operation called now must see it; null while a load will change it first. */
  #contextAtCall(): readonly ContextFragment[] | null {
    return this.#contextLoads > 0 ? null : this.#fragments;
  }

  #contextStore(method: string): Required<Pick<ContextStore, 'getContext' | 'saveContext'>> {
    const store = this.#store;
    if (
      store.capabilities.contextLane !== true ||
      typeof store.getContext !== 'function' ||
      typeof store.saveContext !== 'function'
    ) {
      throw new UnsupportedCapabilityError(method, 'contextLane');
    }
    return store as Required<Pick<ContextStore, 'getContext' | 'saveContext'>>;
  }

  #pickRenderer(renderer: ContextRenderer | undefined, method: string): ContextRenderer {
    const chosen = renderer ?? this.#renderer;
    if (chosen === undefined) {
      throw new EngineError(
        `${method}: no renderer. Pass one (for example { renderer: new XmlRenderer() } from @ctxgraph/renderer-xml) or give the engine a default with new ContextEngine({ renderer }).`,
      );
    }
    checkRenderer(chosen, method);
    return chosen;
  }

  /**
   * Opens (or creates) the chat once; the store refuses another owner before anything else. When
   * it opened the chat just now, returns the head state `openChat` read (the active branch's head,
   * the chat's version and `rewrittenAt`, read together), which this operation may use instead of
   * reading the head again; otherwise undefined.
   */
  async #open(): Promise<HeadState | undefined> {
    if (this.#chat !== null) return undefined;
    const opened = await this.#store.openChat({
      chatId: this.#chatId,
      userId: this.#userId,
      ...(this.#metadata === undefined ? {} : { metadata: this.#metadata }),
    });
    this.#chat = opened.chat;
    this.#view.open(opened.branch, opened.chat);
    return {
      headMessageId: opened.branch.headMessageId,
      version: opened.chat.version,
      rewrittenAt: opened.chat.rewrittenAt,
    };
  }

  #bindLazy(ticket: number): void {
    this.#pending.bind(ticket, () => lastShownIdWithRole(this.#view.chain, 'assistant'));
  }

  /** The saved chain followed by the pending messages, validated, lazy ones resolved in place. */
  async #conversation(ticket: number, opened: HeadState | undefined): Promise<UIMessage[]> {
    await this.#view.sync(opened);
    this.#bindLazy(ticket);
    // compaction/: what the chain shows (a compaction's summary in place of its span).
    const visible = visibleConversation(this.#view.chain);
    if (visible.invalid !== undefined && this.#onInvalidMessage === 'throw') {
      const entry = visible.invalid;
      throw new ValidationError(
        `Stored message "${entry?.node.id}" of chat "${this.#chatId}" no longer validates: ${entry?.error?.message ?? 'invalid'} Pass onInvalidMessage: 'skip' to leave such messages out.`,
        { cause: entry?.error },
      );
    }
    // A fresh list (its messages are frozen): callers may change the array.
    const messages = visible.messages;
    const added = new Map<string, number>();
    for (const message of await this.#pending.messages(ticket, this.#validator)) {
      const index = visible.position(message.id) ?? added.get(message.id);
      if (index === undefined) {
        added.set(message.id, messages.length);
        messages.push(message);
      } else {
        messages[index] = message;
      }
    }
    return messages;
  }

  // --- budget (issue #14) ---
  /** The plan `resolve({ budget })` would make now, remembering nothing (for `inspect()`). */
  #planDryRun(
    budget: ReturnType<typeof checkBudget>,
    renderer: ContextRenderer,
    fragments: readonly ContextFragment[],
    pending: readonly UIMessage[],
  ): BudgetReport | { exceeded: BudgetShortfall } {
    const history = visibleConversation(this.#view.chain).messages;
    try {
      return fitToBudget({
        budget,
        tokenizer: this.#tokenizer,
        counter: this.#counter,
        renderer,
        fragments,
        messages: [...history, ...pending],
        pendingFrom: history.length,
        previous: this.#budgetMemory.get(this.#view.branch) ?? null,
      }).report;
    } catch (error) {
      if (BudgetExceededError.isInstance(error)) return { exceeded: error.shortfall };
      throw error;
    }
  }

  /** `resolve({ budget })`: plan from this call's input, apply, remember what the next report compares with. */
  async #resolveWithin(
    budget: ReturnType<typeof checkBudget>,
    renderer: ContextRenderer,
    fragments: readonly ContextFragment[],
    ticket: number,
    format: 'ui' | 'model' | undefined,
    opened: HeadState | undefined,
  ): Promise<ResolveResult | ModelResolveResult> {
    const conversation = await this.#conversation(ticket, opened);
    const branch = this.#view.branch;
    const fitted = fitToBudget({
      budget,
      tokenizer: this.#tokenizer,
      counter: this.#counter,
      renderer,
      fragments,
      messages: conversation,
      pendingFrom: shownMessageCount(this.#view.chain),
      previous: this.#budgetMemory.get(branch) ?? null,
    });
    this.#budgetMemory.set(branch, fitted.memory);
    if (format !== 'model') {
      return {
        systemPrompt: fitted.systemPrompt,
        messages: fitted.messages,
        budget: fitted.report,
      };
    }
    const marked = await toMarkedModelMessages(
      fitted.systemPrompt,
      fitted.messages,
      fitted.report.breakpoints,
      budget.cacheMarkers,
    );
    return {
      systemPrompt: fitted.systemPrompt,
      system: marked.system,
      messages: marked.messages,
      budget: fitted.report,
    };
  }
  // --- end budget ---

  /**
   * The compare-and-set path, for stores without `append`: commit against the head the engine
   * knows; when another writer moved it, the conflict names the new head and the batch is
   * attached on top of it (a lazy correction is already bound, so it does not depend on where it
   * lands). Backs off a little after the first few conflicts.
   */
  async #commitOnTop(
    batch: readonly CommitMessage[],
    messages: readonly UIMessage[],
  ): Promise<void> {
    let expectedHeadId = this.#view.headMessageId;
    for (let attempt = 1; attempt <= this.#maxSaveAttempts; attempt += 1) {
      try {
        const result = await this.#store.commit({
          chatId: this.#chatId,
          branch: this.#view.branch,
          expectedHeadId,
          messages: batch,
        });
        this.#view.applyWrite(expectedHeadId, result, messages);
        return;
      } catch (error) {
        if (!HeadConflictError.isInstance(error)) throw error;
        expectedHeadId = error.currentHeadId;
        if (attempt > 3) await pause(Math.random() * Math.min(2 ** attempt, 100));
      }
    }
    throw new EngineError(
      `save(): gave up after ${this.#maxSaveAttempts} attempts because other writers kept moving the head of branch "${this.#view.branch}". Nothing was written; the messages are still pending.`,
    );
  }

  #explainSaveError(error: unknown): unknown {
    if (MessageIdConflictError.isInstance(error) && this.#pending.isLazyTarget(error.messageId)) {
      return new EngineError(
        `save(): lastAssistantMessage() corrects message "${error.messageId}", which is not on branch "${this.#view.branch}" (the engine moved to another branch after the correction was set). Nothing was written; the messages are still pending (discardPending() drops them).`,
        { cause: error },
      );
    }
    return error;
  }

  /**
   * Creates a fork of the current branch at `headMessageId`, switching to it when `activate`.
   * A store that declares `forkBranch` names it atomically; otherwise the engine picks the next
   * free name and, when a concurrent fork took it, the next one.
   */
  async #fork(headMessageId: string | null, activate: boolean): Promise<BranchRecord> {
    const input = { chatId: this.#chatId, headMessageId, activate };
    let branch: BranchRecord | undefined;
    if (
      this.#store.capabilities.forkBranch === true &&
      typeof this.#store.forkBranch === 'function'
    ) {
      branch = await this.#store.forkBranch({ ...input, from: this.#view.branch });
    } else {
      if (headMessageId !== null) {
        const node = await this.#store.getMessage({
          chatId: this.#chatId,
          messageId: headMessageId,
        });
        if (node === null) throw new MessageNotFoundError(this.#chatId, headMessageId);
      }
      for (let attempt = 1; attempt <= 100 && branch === undefined; attempt += 1) {
        const names = (await this.#store.listBranches(this.#chatId)).map((entry) => entry.name);
        try {
          branch = await this.#store.createBranch({
            ...input,
            name: nextBranchName(this.#view.branch, names),
          });
        } catch (error) {
          if (!BranchExistsError.isInstance(error)) throw error;
          if (attempt > 3) await pause(Math.random() * Math.min(2 ** attempt, 100));
        }
      }
      if (branch === undefined) {
        throw new EngineError(
          `Could not find a free branch name after "${this.#view.branch}" in chat "${this.#chatId}": other writers kept taking them.`,
        );
      }
    }
    if (activate) this.#view.moveTo(branch);
    return branch;
  }
}

/** Every runtime the engine targets has a timer; the package's types name no runtime. */
const timers = globalThis as unknown as {
  setTimeout(callback: () => void, milliseconds: number): unknown;
};

function pause(milliseconds: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(resolve, milliseconds));
}

/** A rejected-promise error for an options argument that is neither omitted nor an object. */
/** What is wrong with `prune`'s option values, if anything. */
function pruneOptionsProblem(options: PruneOptions | undefined): ValidationError | undefined {
  if (options?.dryRun !== undefined && typeof options.dryRun !== 'boolean')
    return new ValidationError(
      `prune(options): dryRun must be a boolean, received ${JSON.stringify(options.dryRun)}.`,
      { issues: [{ path: 'dryRun', message: 'expected a boolean' }] },
    );
  const compacted: unknown = options?.compacted;
  if (compacted !== undefined && compacted !== 'keep' && compacted !== 'drop')
    return new ValidationError(
      `prune(options): compacted must be 'keep' or 'drop', received ${JSON.stringify(compacted)}.`,
      { issues: [{ path: 'compacted', message: "expected 'keep' or 'drop'" }] },
    );
  return undefined;
}

function optionsProblem(method: string, options: unknown): ValidationError | undefined {
  if (options === undefined) return undefined;
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) return undefined;
  const received = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
  return new ValidationError(
    `${method}: options must be an object or omitted, received ${received}.`,
    { issues: [{ path: 'options', message: 'expected an object' }] },
  );
}

function checkRenderer(renderer: ContextRenderer, method: string): void {
  if (typeof renderer !== 'object' || renderer === null || typeof renderer.render !== 'function') {
    throw new ValidationError(
      `${method}: renderer must be a ContextRenderer (an object with render(fragments)).`,
      {
        issues: [{ path: 'renderer', message: 'expected a ContextRenderer' }],
      },
    );
  }
  if (renderer.specificationVersion !== 'v1') {
    throw new UnsupportedSpecificationError(
      `${method}: the renderer implements ContextRenderer specification ${JSON.stringify(renderer.specificationVersion)}, but this engine supports "v1".`,
    );
  }
}

/** A settled queue link: the next operation runs whatever the last one did. */
function ignore(): undefined {
  return undefined;
}

/**
 * The record a saved message gets: the one `withUsage` attached, over the engine's own record of
 * the node it replaces in place. A chat client echoes back the whole conversation (a compaction's
 * summary and replies with recorded usage included): replacing them keeps what the engine
 * recorded, and a client's copy can neither add to nor remove it. (A store that keeps records
 * also keeps a replaced node's record when none is given; this covers the others, for the nodes
 * the engine has read.)
 */
function keptRecord(
  replaced: MessageNodeRecord | undefined,
  attached: EngineRecord | undefined,
): EngineRecord | undefined {
  const existing = replaced?.engineRecord ?? undefined;
  if (existing === undefined) return attached;
  return attached === undefined ? existing : { ...existing, ...attached };
}
