import {
  assistantText,
  checkMessages,
  type MessageCheck,
  type MessageSchemas,
  toModelMessages,
  validateMessages,
} from '@ctxgraph/codecs';
import {
  assertIdentifier,
  assertJsonObject,
  BranchExistsError,
  type BranchRecord,
  type ChatRecord,
  CheckpointNotFoundError,
  type CheckpointRecord,
  type CommitMessage,
  type ContextFragment,
  type ContextRenderer,
  type ContextStore,
  EngineError,
  HeadConflictError,
  isFragment,
  isLazyFragment,
  isMessageFragment,
  type JsonObject,
  LAZY_ID,
  type LazyFragment,
  type MessageNodeRecord,
  MessageNotFoundError,
  nextBranchName,
  type StoredMessage,
  UnsupportedSpecificationError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { ModelMessage, UIMessage } from 'ai';
import { ChainCache, type ChainEntry } from './chain-cache';
import { buildSnapshot, type InspectOptions, type InspectSnapshot } from './inspect';
import type { ModelPrices } from './model-prices';

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
  /** Prices used by `inspect()` (USD per million input tokens), merged over the built-in table. */
  prices?: ModelPrices;
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
}

/** What {@link ContextEngine.resolve} returns. */
export interface ResolveResult {
  /** The context fragments, rendered. */
  systemPrompt: string;
  /** The branch's saved messages, oldest first, then the pending ones, validated. */
  messages: UIMessage[];
}

/** What {@link ContextEngine.resolve} returns with `format: 'model'`. */
export interface ModelResolveResult {
  /** The context fragments, rendered. */
  systemPrompt: string;
  /** The same conversation as model messages. */
  messages: ModelMessage[];
}

/** What {@link ContextEngine.save} returns. */
export interface SaveResult {
  /** The branch head after saving (undefined while the branch has no message). */
  headMessageId: string | undefined;
}

/** Options of {@link ContextEngine.checkpoint}. */
export interface CheckpointOptions {
  /** Move an existing checkpoint of that name here instead of refusing. @default false */
  replace?: boolean;
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
 * branch, when new), caches the active branch's chain and re-reads only what changed. All of its
 * async methods run one at a time, in call order.
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
  readonly #store: ContextStore;
  readonly #chatId: string;
  readonly #userId: string;
  readonly #metadata: JsonObject | undefined;
  readonly #renderer: ContextRenderer | undefined;
  readonly #messageSchemas: MessageSchemas;
  readonly #onInvalidMessage: 'throw' | 'skip';
  readonly #maxSaveAttempts: number;
  readonly #prices: ModelPrices | undefined;

  readonly #fragments: ContextFragment[] = [];
  readonly #pending: ContextFragment[] = [];

  #chat: ChatRecord | null = null;
  #branch = 'main';
  #headMessageId: string | null = null;
  /** Cached chain of the active branch, oldest first; valid for `#chainHead` at `#seenVersion`. */
  readonly #chain = new ChainCache();
  #chainLoaded = false;
  #chainHead: string | null = null;
  #seenVersion = -1;
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
    this.#store = options.store;
    this.#chatId = options.chatId;
    this.#userId = options.userId;
    this.#metadata = options.metadata;
    this.#renderer = options.renderer;
    this.#messageSchemas = options.messageSchemas ?? {};
    this.#onInvalidMessage = onInvalidMessage;
    this.#maxSaveAttempts = maxSaveAttempts;
    this.#prices = options.prices;
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
    return this.#branch;
  }

  /** The head of the active branch as last seen, or undefined when it has no message. */
  get headMessageId(): string | undefined {
    return this.#headMessageId ?? undefined;
  }

  /** The chat as last read or written, or null before the engine opened it. */
  get chat(): ChatRecord | null {
    return this.#chat;
  }

  /**
   * Adds fragments: message fragments are queued (pending) for `save()`, all others join the
   * system context, each in the order given. Chainable.
   */
  set(...fragments: ContextFragment[]): this {
    fragments.forEach((fragment, index) => {
      if (!isFragment(fragment)) {
        throw new ValidationError(
          `set(...fragments): fragments[${index}] is not a fragment (expected an object with a string name and data).`,
          {
            issues: [{ path: `fragments[${index}]`, message: 'expected a fragment' }],
          },
        );
      }
      if (
        isMessageFragment(fragment) &&
        !isLazyFragment(fragment) &&
        typeof fragment.codec?.encode !== 'function'
      ) {
        throw new ValidationError(
          `set(...fragments): message fragment "${fragment.name}" at fragments[${index}] has no codec; build messages with user(), assistant(), assistantText() or message().`,
          {
            issues: [
              { path: `fragments[${index}].codec`, message: 'message fragments need a codec' },
            ],
          },
        );
      }
    });
    for (const fragment of fragments) {
      if (isMessageFragment(fragment)) this.#pending.push(fragment);
      else this.#fragments.push(fragment);
    }
    return this;
  }

  /** Renders the context fragments (not the messages) with `renderer` or the engine's default. */
  render(renderer?: ContextRenderer): string {
    return this.#pickRenderer(renderer, 'render(renderer)').render(this.#fragments);
  }

  /**
   * The system prompt and the conversation, ready for the AI SDK: the branch's saved messages,
   * oldest first, then the pending ones (lazy ones resolved in place), all validated.
   */
  resolve(options?: ResolveOptions & { format?: 'ui' }): Promise<ResolveResult>;
  resolve(options: ResolveOptions & { format: 'model' }): Promise<ModelResolveResult>;
  resolve(options: ResolveOptions = {}): Promise<ResolveResult | ModelResolveResult> {
    if (options.format !== undefined && options.format !== 'ui' && options.format !== 'model') {
      return Promise.reject(
        new ValidationError(
          `resolve(options): format must be 'ui' or 'model', received ${JSON.stringify(options.format)}.`,
        ),
      );
    }
    return this.#exclusive(async () => {
      const renderer = this.#pickRenderer(options.renderer, 'resolve(options)');
      await this.#open();
      const systemPrompt = renderer.render(this.#fragments);
      const messages = await this.#conversation();
      if (options.format === 'model')
        return { systemPrompt, messages: await toModelMessages(messages) };
      return { systemPrompt, messages };
    });
  }

  /**
   * Persists the pending messages as nodes after the branch head, in one atomic store call, and
   * moves the head to the last of them. When another writer moved the head first, it re-reads the
   * head and attaches the messages on top of it: a turn is never dropped. If saving fails, nothing
   * was written and the messages stay pending.
   */
  save(): Promise<SaveResult> {
    return this.#exclusive(async () => {
      await this.#open();
      const batch = this.#pending.slice();
      if (batch.length === 0) return { headMessageId: this.headMessageId };
      for (let attempt = 1; attempt <= this.#maxSaveAttempts; attempt += 1) {
        // Optimistic: commit against the head this engine knows; the store's compare-and-set
        // refuses a stale one, and only then is the head re-read. A lazy fragment needs the
        // chain, so a cold engine reads it first.
        if (
          attempt > 1 ||
          (!this.#chainLoaded && batch.some((fragment) => isLazyFragment(fragment)))
        ) {
          await this.#syncChain();
        }
        const messages = await this.#encode(batch);
        const expectedHeadId = this.#headMessageId;
        try {
          const result = await this.#store.commit({
            chatId: this.#chatId,
            branch: this.#branch,
            expectedHeadId,
            messages: dedupe(messages),
          });
          this.#pending.splice(0, batch.length);
          this.#applyCommit(expectedHeadId, result);
          return { headMessageId: this.headMessageId };
        } catch (error) {
          if (!HeadConflictError.isInstance(error)) throw error;
          // Another writer moved the head: re-read it on the next attempt and build on top.
        }
      }
      throw new EngineError(
        `save(): gave up after ${this.#maxSaveAttempts} attempts because other writers kept moving the head of branch "${this.#branch}". Nothing was written; the messages are still pending.`,
      );
    });
  }

  /**
   * Starts a new branch (`main-v2`, …) at an existing message and switches to it; the branch you
   * were on is kept. Pending messages stay pending and will be saved on the new branch.
   */
  rewind(messageId: string): Promise<BranchRecord> {
    return this.#exclusive(() => this.#rewind(messageId, 'rewind(messageId)'));
  }

  /** Names the current branch head, to come back to with `restore()`. */
  checkpoint(name: string, options: CheckpointOptions = {}): Promise<CheckpointRecord> {
    return this.#exclusive(async () => {
      assertIdentifier('checkpoint(name)', 'name', name);
      await this.#open();
      const { headMessageId } = await this.#store.getHead({
        chatId: this.#chatId,
        branch: this.#branch,
      });
      if (headMessageId === null) {
        throw new EngineError(
          `checkpoint("${name}"): branch "${this.#branch}" has no saved message yet; save() before taking a checkpoint.`,
        );
      }
      return this.#store.createCheckpoint({
        chatId: this.#chatId,
        name,
        messageId: headMessageId,
        replace: options.replace === true,
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
      return this.#rewind(checkpoint.messageId, `restore("${name}")`);
    });
  }

  /** Switches to an existing branch and makes it the chat's active one. Clears pending messages. */
  switchBranch(name: string): Promise<BranchRecord> {
    return this.#exclusive(async () => {
      assertIdentifier('switchBranch(name)', 'name', name);
      await this.#open();
      const branch = await this.#store.setActiveBranch({ chatId: this.#chatId, name });
      this.#pending.length = 0;
      this.#moveTo(branch);
      return branch;
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
        branch: this.#branch,
      });
      return this.#createFork(headMessageId, false);
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
      return chat;
    });
  }

  /**
   * A JSON-safe snapshot for debugging: token estimate (and cost when the model's price is known),
   * the rendered prompt, the context / pending / persisted lanes, the chat's graph, and metadata.
   */
  inspect(options: InspectOptions = {}): Promise<InspectSnapshot> {
    return this.#exclusive(async () => {
      const renderer = this.#pickRenderer(options.renderer, 'inspect(options)');
      await this.#open();
      const rendered = renderer.render(this.#fragments);
      await this.#syncChain();
      const pending = await this.#encode(this.#pending.slice());
      const graph = await this.#store.getGraph(this.#chatId);
      this.#chat = graph.chat;
      return buildSnapshot({
        options,
        prices: this.#prices,
        rendererFormat: renderer.format,
        rendered,
        context: this.#fragments,
        pending: pending.map((entry) => entry.message),
        persisted: this.#chain.entries,
        graph,
        chatId: this.#chatId,
        userId: this.#userId,
        branch: this.#branch,
        headMessageId: this.#headMessageId,
      });
    });
  }

  // ---------------------------------------------------------------------------------------------

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
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

  /** Opens (or creates) the chat once; the store refuses another owner before anything else. */
  async #open(): Promise<void> {
    if (this.#chat !== null) return;
    const opened = await this.#store.openChat({
      chatId: this.#chatId,
      userId: this.#userId,
      ...(this.#metadata === undefined ? {} : { metadata: this.#metadata }),
    });
    this.#chat = opened.chat;
    this.#branch = opened.branch.name;
    this.#headMessageId = opened.branch.headMessageId;
  }

  /**
   * Brings the cached chain up to date with the store: one small read when nothing changed, only
   * the new nodes when the head moved forward, the whole chain otherwise.
   */
  async #syncChain(): Promise<void> {
    const state = await this.#store.getHead({ chatId: this.#chatId, branch: this.#branch });
    this.#headMessageId = state.headMessageId;
    const cacheCurrent =
      this.#chainLoaded &&
      state.version === this.#seenVersion &&
      state.headMessageId === this.#chainHead;
    if (cacheCurrent) return;
    const canAppend =
      this.#chainLoaded &&
      this.#chainHead !== null &&
      state.rewrittenAt <= this.#seenVersion &&
      state.headMessageId !== null;
    if (state.headMessageId === null) {
      this.#chain.reset([]);
    } else if (canAppend && state.headMessageId === this.#chainHead) {
      // Only other branches changed: the cached chain is still exact.
    } else if (canAppend) {
      const page = await this.#store.getChain({
        chatId: this.#chatId,
        headMessageId: state.headMessageId,
        until: this.#chainHead as string,
      });
      if (page.reachedUntil) this.#chain.append(await this.#entries(page.nodes));
      else
        this.#chain.reset(
          await this.#entries(await this.#readWholeChain(state.headMessageId, page)),
        );
    } else {
      const page = await this.#store.getChain({
        chatId: this.#chatId,
        headMessageId: state.headMessageId,
      });
      this.#chain.reset(await this.#entries(await this.#readWholeChain(state.headMessageId, page)));
    }
    this.#chainLoaded = true;
    this.#chainHead = state.headMessageId;
    this.#seenVersion = state.version;
  }

  async #readWholeChain(
    head: string,
    first: {
      nodes: readonly MessageNodeRecord[];
      nextCursor: string | null;
      reachedUntil: boolean;
    },
  ): Promise<MessageNodeRecord[]> {
    // A store may page long chains even without a limit; follow its cursor to the root.
    let nodes = first.nodes.slice();
    let cursor = first.reachedUntil ? null : first.nextCursor;
    while (cursor !== null) {
      const page = await this.#store.getChain({ chatId: this.#chatId, headMessageId: cursor });
      nodes = page.nodes.concat(nodes);
      cursor = page.nextCursor;
    }
    if (nodes.length > 0 && nodes.at(-1)?.id !== head) {
      throw new EngineError(
        `The store returned a chain that does not end at head "${head}" of chat "${this.#chatId}".`,
      );
    }
    return nodes;
  }

  async #entries(nodes: readonly MessageNodeRecord[]): Promise<ChainEntry[]> {
    if (nodes.length === 0) return [];
    const checks = await this.#check(nodes.map((node) => node.message));
    return nodes.map((node, index) => {
      const check = checks[index];
      if (check?.success) return { node, message: check.message, error: null };
      const error =
        check && !check.success
          ? check.error
          : new ValidationError(`Message "${node.id}" did not validate.`);
      return { node, message: null, error };
    });
  }

  /** Validates a list in one call; only when it fails, message by message to say which. */
  async #check(candidates: readonly unknown[]): Promise<MessageCheck[]> {
    try {
      const messages = await validateMessages(candidates, this.#messageSchemas);
      return messages.map((message, index): MessageCheck => ({ index, success: true, message }));
    } catch (error) {
      if (!ValidationError.isInstance(error)) throw error;
      return checkMessages(candidates, this.#messageSchemas);
    }
  }

  /** The saved chain followed by the pending messages, validated, lazy ones resolved in place. */
  async #conversation(): Promise<UIMessage[]> {
    await this.#syncChain();
    if (this.#chain.invalidCount > 0 && this.#onInvalidMessage === 'throw') {
      const entry = this.#chain.entries.find((candidate) => candidate.message === null);
      throw new ValidationError(
        `Stored message "${entry?.node.id}" of chat "${this.#chatId}" no longer validates: ${entry?.error?.message ?? 'invalid'} Pass onInvalidMessage: 'skip' to leave such messages out.`,
        { cause: entry?.error },
      );
    }
    // A copy of the cached list: callers may change the array, never the cache.
    const messages = this.#chain.messages.slice();
    if (this.#pending.length === 0) return messages;
    const added = new Map<string, number>();
    for (const { message } of dedupe(await this.#encode(this.#pending.slice()))) {
      const index = this.#chain.messagePosition(message.id) ?? added.get(message.id);
      if (index === undefined) {
        added.set(message.id, messages.length);
        messages.push(message);
      } else {
        messages[index] = message;
      }
    }
    return messages;
  }

  /**
   * Encodes pending fragments into validated messages. A lazy "last assistant" fragment takes the
   * id of the newest assistant message before it among the pending ones, else on the branch,
   * else a new id.
   */
  async #encode(
    batch: readonly ContextFragment[],
  ): Promise<Array<CommitMessage & { message: UIMessage }>> {
    const encoded: UIMessage[] = [];
    for (const fragment of batch) {
      if (isLazyFragment(fragment)) {
        encoded.push(this.#resolveLazy(fragment, encoded));
        continue;
      }
      const value = fragment.codec?.encode();
      encoded.push(value as UIMessage);
    }
    const checks = await this.#check(encoded);
    const failed = checks.find((check) => !check.success);
    if (failed && !failed.success) {
      throw new ValidationError(
        `Pending message ${failed.error.message.replace(/^Invalid UIMessage /, '')} Nothing was saved.`,
        {
          issues: failed.error.issues,
          cause: failed.error,
        },
      );
    }
    return encoded.map((message) => ({
      id: message.id,
      message: message as StoredMessage & UIMessage,
    }));
  }

  #resolveLazy(fragment: LazyFragment, before: readonly UIMessage[]): UIMessage {
    const config = fragment[LAZY_ID];
    if (config.type !== 'last-assistant') {
      throw new EngineError(
        `Unknown lazy fragment type ${JSON.stringify((config as { type: unknown }).type)}.`,
      );
    }
    let targetId: string | undefined;
    for (let index = before.length - 1; index >= 0 && targetId === undefined; index -= 1) {
      if (before[index]?.role === 'assistant') targetId = before[index]?.id;
    }
    targetId ??= this.#chain.lastIdWithRole('assistant');
    const resolved =
      targetId === undefined
        ? assistantText(config.content)
        : assistantText(config.content, { id: targetId });
    return resolved.codec.encode();
  }

  #applyCommit(
    expectedHeadId: string | null,
    result: {
      headMessageId: string | null;
      version: number;
      rewrittenAt: number;
      nodes: readonly MessageNodeRecord[];
    },
  ): void {
    this.#headMessageId = result.headMessageId;
    if (!this.#chainLoaded || this.#chainHead !== expectedHeadId) {
      this.#chainLoaded = false;
      return;
    }
    // The commit built on the cached head, so its new nodes extend the cached chain. When other
    // commits happened in between (elsewhere in the chat), the version is left behind so that
    // the next read checks whether they rewrote anything cached.
    const onlyWriter = result.version === this.#seenVersion + 1;
    for (const node of result.nodes) {
      // These messages were validated before the commit.
      const entry: ChainEntry = {
        node,
        message: node.message as unknown as UIMessage,
        error: null,
      };
      if (this.#chain.replace(entry)) continue;
      if (node.parentId === this.#chain.lastId) this.#chain.append([entry]);
      // Otherwise: a replaced node that is not on this branch; nothing cached changes.
    }
    this.#chainHead = result.headMessageId;
    if (onlyWriter) this.#seenVersion = result.version;
  }

  async #rewind(messageId: string, method: string): Promise<BranchRecord> {
    assertIdentifier(method, 'messageId', messageId);
    await this.#open();
    const node = await this.#store.getMessage({ chatId: this.#chatId, messageId });
    if (node === null) throw new MessageNotFoundError(this.#chatId, messageId);
    return this.#createFork(messageId, true);
  }

  async #createFork(headMessageId: string | null, activate: boolean): Promise<BranchRecord> {
    // Two engines may fork at once and pick the same name: the store refuses the second, which
    // then takes the next free name.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const names = (await this.#store.listBranches(this.#chatId)).map((branch) => branch.name);
      const name = nextBranchName(this.#branch, names);
      try {
        const branch = await this.#store.createBranch({
          chatId: this.#chatId,
          name,
          headMessageId,
          activate,
        });
        if (activate) this.#moveTo(branch);
        return branch;
      } catch (error) {
        if (!BranchExistsError.isInstance(error)) throw error;
      }
    }
    throw new EngineError(
      `Could not find a free branch name after "${this.#branch}" in chat "${this.#chatId}".`,
    );
  }

  /** Points the engine at another branch, keeping whatever part of the cached chain still holds. */
  #moveTo(branch: BranchRecord): void {
    this.#branch = branch.name;
    this.#headMessageId = branch.headMessageId;
    if (branch.headMessageId === null) {
      this.#chain.reset([]);
      this.#chainHead = null;
    } else if (this.#chainLoaded && this.#chain.truncateAfter(branch.headMessageId)) {
      // Rewinding within the cached chain: its prefix is the new branch's chain; no read needed.
      this.#chainHead = branch.headMessageId;
    } else {
      this.#chainLoaded = false;
    }
  }
}

/** Later messages with the same id replace earlier ones, at the earlier one's position. */
function dedupe<T extends { id: string }>(messages: readonly T[]): T[] {
  const positions = new Map<string, number>();
  const result: T[] = [];
  for (const entry of messages) {
    const index = positions.get(entry.id);
    if (index === undefined) {
      positions.set(entry.id, result.length);
      result.push(entry);
    } else {
      result[index] = entry;
    }
  }
  return result;
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
