import { CtxGraphError } from '../../errors/ctxgraph-error';
import { StoreError, ValidationError } from '../../errors/errors';
import type {
  AppendInput,
  AppendResult,
  ChainPage,
  ChatPointerInput,
  CommitInput,
  CommitResult,
  ContextLaneRecord,
  ContextStore,
  ContextStoreCapabilities,
  CreateBranchInput,
  CreateCheckpointInput,
  FindMessageNodesInput,
  ForkBranchInput,
  GetChainInput,
  GetHeadInput,
  GetMessageInput,
  HeadState,
  ListChatsInput,
  OpenChatInput,
  OpenChatResult,
  RenameBranchInput,
  SaveContextInput,
  UpdateChatInput,
} from '../context-store';
import type { LiveReplyMethods } from '../live-replies';
import type {
  BranchRecord,
  ChatGraph,
  ChatRecord,
  CheckpointRecord,
  MessageNodeRecord,
  Page,
} from '../records';
import type { PruneInput, PruneResult } from '../retention';
import type { SearchHit, SearchMessagesInput } from '../search';
import type { Awaitable, ContextStoreDriver, StoreCall } from './context-store-driver';
import { liveReplyMethods } from './live-reply-methods';
import {
  type ByteLimit,
  prepareAppendInput,
  prepareChatId,
  prepareCommitInput,
  prepareCreateBranch,
  prepareCreateCheckpoint,
  prepareFindMessageNodes,
  prepareForkBranch,
  prepareGetChain,
  prepareGetHead,
  prepareGetMessage,
  prepareListChats,
  prepareOpenChat,
  preparePointer,
  prepareRenameBranch,
  prepareSaveContextInput,
  prepareUpdateChat,
} from './prepare-input';
import { preparePrune } from './retention-input';
import { prepareSearch, type SearchMatch, searchCursor, searchHit } from './search-input';
import { andThen, CALLS, driverIssues, isThenable } from './store-calls';
import { chatCursor } from './store-input';

/**
 * A `ContextStore` over a {@link ContextStoreDriver}: the kit's one wrapper. It keeps the
 * contract's promises that are the same for every store, so the driver implements storage only:
 *
 * - every input is checked once, with the shared rules and messages, before the driver is
 *   called; the driver receives prepared values (messages serialized, flags defaulted);
 * - every call after `close()` rejects with a `StoreError` naming the call; `close()` may be
 *   called any number of times, waits for the calls under way, and closes the driver once;
 * - every method returns a promise: a synchronous throw becomes a rejection;
 * - ctxgraph errors pass through; any other error becomes a `StoreError` (through the driver's
 *   `mapError` when it has one) with the original as `cause`;
 * - `capabilities` is a frozen copy, checked against the driver's methods when constructed, and
 *   `append`, `forkBranch`, `getContext` / `saveContext` exist exactly when declared;
 * - a commit or append that carries an engine record is refused with `ValidationError` unless
 *   the driver declares `engineRecords` (then the driver gets it as `engineRecordJson`);
 * - a node id that differs from its `message.id`, a commit with `fork` and an entry with
 *   `newVersion` are refused with `ValidationError` unless the driver declares
 *   `messageVersions` (then `findMessageNodes` exists too).
 * - a commit that carries `startReply` or `endReply` is refused with `ValidationError` unless
 *   the driver declares `liveReplies`; then the live-reply methods exist (each input checked,
 *   `watchChat` refused synchronously once closed).
 *
 * Use it directly (or through {@link defineContextStore}), or extend it to add members of your
 * own (`migrate()`, `[Symbol.asyncDispose]`, options you expose); {@link CheckedContextStore.guard}
 * gives those the same closed-state and error handling.
 *
 * @example
 * ```ts
 * export class MyStore extends CheckedContextStore {
 *   constructor(options: MyOptions) {
 *     super(new MyDriver(options));
 *   }
 *   async [Symbol.asyncDispose](): Promise<void> {
 *     await this.close();
 *   }
 * }
 * ```
 */
export class CheckedContextStore implements ContextStore {
  /** The contract version this store implements. */
  readonly specificationVersion: 'v1' = 'v1';
  /** The driver's capabilities, frozen. */
  readonly capabilities: ContextStoreCapabilities;
  /** Present when `capabilities.append` is true (see `ContextStore.append`). */
  declare readonly append?: (input: AppendInput) => Promise<AppendResult>;
  /** Present when `capabilities.forkBranch` is true (see `ContextStore.forkBranch`). */
  declare readonly forkBranch?: (input: ForkBranchInput) => Promise<BranchRecord>;
  /** Present when `capabilities.renameBranch` is true (see `ContextStore.renameBranch`). */
  declare readonly renameBranch?: (input: RenameBranchInput) => Promise<BranchRecord>;
  /** Present when `capabilities.contextLane` is true (see `ContextStore.getContext`). */
  declare readonly getContext?: (chatId: string) => Promise<ContextLaneRecord>;
  /** Present when `capabilities.contextLane` is true (see `ContextStore.saveContext`). */
  declare readonly saveContext?: (input: SaveContextInput) => Promise<ContextLaneRecord>;
  /** Present when `capabilities.search` is true (see `ContextStore.searchMessages`). */
  declare readonly searchMessages?: (input: SearchMessagesInput) => Promise<Page<SearchHit>>;
  /** Present when `capabilities.retention` is true (see `ContextStore.prune`). */
  declare readonly prune?: (input: PruneInput) => Promise<PruneResult>;
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.startReply`). */
  declare readonly startReply?: LiveReplyMethods['startReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.appendReplyChunks`). */
  declare readonly appendReplyChunks?: LiveReplyMethods['appendReplyChunks'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.readReply`). */
  declare readonly readReply?: LiveReplyMethods['readReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.getLiveState`). */
  declare readonly getLiveState?: LiveReplyMethods['getLiveState'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.stopReply`). */
  declare readonly stopReply?: LiveReplyMethods['stopReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.takeOverReply`). */
  declare readonly takeOverReply?: LiveReplyMethods['takeOverReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.endReply`). */
  declare readonly endReply?: LiveReplyMethods['endReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.watchChat`). */
  declare readonly watchChat?: LiveReplyMethods['watchChat'];
  /** Present when `capabilities.messageVersions` is true (see `ContextStore.findMessageNodes`). */
  declare readonly findMessageNodes?: (
    input: FindMessageNodesInput,
  ) => Promise<readonly MessageNodeRecord[]>;

  readonly #driver: ContextStoreDriver;
  readonly #limit: ByteLimit;
  /**
   * What the message checks allow: engine records (`capabilities.engineRecords`), node ids apart
   * from message ids and fork-commits (`capabilities.messageVersions`).
   */
  readonly #messageOptions: { readonly engineRecords: boolean; readonly messageVersions: boolean };
  /** `capabilities.liveReplies`: a commit may carry `startReply` / `endReply`. */
  readonly #liveReplies: boolean;
  readonly #pending = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  /**
   * Wraps `driver`. Throws a `ValidationError` listing every problem when the driver is not
   * usable: a required method missing, a declared ability without its method, a bad capability
   * or limit.
   */
  constructor(driver: ContextStoreDriver) {
    const issues = driverIssues(driver);
    if (issues.length > 0) {
      throw new ValidationError(
        `CheckedContextStore(driver): the driver cannot back a ContextStore: ${issues
          .map((issue) => `${issue.path}: ${issue.message}`)
          .join('; ')}.`,
        { issues },
      );
    }
    this.#driver = driver;
    this.#limit = driver.maxJsonBytes;
    this.capabilities = Object.freeze({ ...driver.capabilities });
    this.#messageOptions = {
      engineRecords: this.capabilities.engineRecords === true,
      messageVersions: this.capabilities.messageVersions === true,
    };
    this.#liveReplies = this.capabilities.liveReplies === true;
    const {
      append,
      forkBranch,
      renameBranch,
      getContext,
      saveContext,
      searchMessages,
      prune,
      findMessageNodes,
    } = driver;
    // Own properties, present only when declared, so `typeof store.append === 'function'` and the
    // capability always agree. Configurable, so proxies over the store may still replace them.
    const define = (name: string, value: unknown): void => {
      Object.defineProperty(this, name, { value, configurable: true, writable: true });
    };
    if (this.capabilities.append === true && append !== undefined) {
      define('append', (input: AppendInput) =>
        this.#run(CALLS.append, () =>
          append.call(driver, prepareAppendInput(input, this.#limit, this.#messageOptions)),
        ),
      );
    }
    if (this.capabilities.forkBranch === true && forkBranch !== undefined) {
      define('forkBranch', (input: ForkBranchInput) =>
        this.#run(CALLS.forkBranch, () => forkBranch.call(driver, prepareForkBranch(input))),
      );
    }
    if (this.capabilities.renameBranch === true && renameBranch !== undefined) {
      define('renameBranch', (input: RenameBranchInput) =>
        this.#run(CALLS.renameBranch, () => renameBranch.call(driver, prepareRenameBranch(input))),
      );
    }
    if (
      this.capabilities.contextLane === true &&
      getContext !== undefined &&
      saveContext !== undefined
    ) {
      define('getContext', (chatId: string) =>
        this.#run(CALLS.getContext, () =>
          getContext.call(driver, prepareChatId(CALLS.getContext.label, chatId)),
        ),
      );
      define('saveContext', (input: SaveContextInput) =>
        this.#run(CALLS.saveContext, () =>
          saveContext.call(driver, prepareSaveContextInput(input, this.#limit)),
        ),
      );
    }
    if (this.capabilities.search === true && searchMessages !== undefined) {
      define('searchMessages', (input: SearchMessagesInput) =>
        this.#run(CALLS.searchMessages, () => {
          const query = prepareSearch(input, this.capabilities.searchPrefix === true);
          return andThen(searchMessages.call(driver, query), (matches): Page<SearchHit> => {
            const items = matches
              .slice(0, query.limit)
              .map((match) => searchHit(match, query.terms, query.prefix));
            return {
              items,
              nextCursor:
                matches.length > query.limit
                  ? searchCursor(query, matches[query.limit - 1] as SearchMatch)
                  : null,
            };
          });
        }),
      );
    }
    if (this.capabilities.messageVersions === true && findMessageNodes !== undefined) {
      define('findMessageNodes', (input: FindMessageNodesInput) =>
        this.#run(CALLS.findMessageNodes, () =>
          findMessageNodes.call(driver, prepareFindMessageNodes(input)),
        ),
      );
    }
    if (this.capabilities.retention === true && prune !== undefined) {
      define('prune', (input: PruneInput) =>
        this.#run(CALLS.prune, () => prune.call(driver, preparePrune(input))),
      );
    }
    if (this.#liveReplies) {
      const methods = liveReplyMethods({
        driver,
        limit: this.#limit,
        run: (storeCall, body) => this.#run(storeCall, body),
        toError: (error, storeCall) => this.#toError(error, storeCall),
        closed: () => this.#closing !== undefined,
      });
      for (const [name, value] of Object.entries(methods)) define(name, value);
    }
  }

  /** Creates the chat or loads it (see `ContextStore.openChat`). */
  openChat(input: OpenChatInput): Promise<OpenChatResult> {
    return this.#run(CALLS.openChat, () =>
      this.#driver.openChat(prepareOpenChat(input, this.#limit)),
    );
  }

  /** The chat, or null. */
  getChat(chatId: string): Promise<ChatRecord | null> {
    return this.#run(CALLS.getChat, () =>
      this.#driver.getChat(prepareChatId(CALLS.getChat.label, chatId)),
    );
  }

  /** Sets the title and merges metadata (see `ContextStore.updateChat`). */
  updateChat(input: UpdateChatInput): Promise<ChatRecord> {
    return this.#run(CALLS.updateChat, () =>
      this.#driver.updateChat(prepareUpdateChat(input, this.#limit)),
    );
  }

  /** A user's chats by cursor; the driver returns one more than a page, the kit cuts it. */
  listChats(input: ListChatsInput): Promise<Page<ChatRecord>> {
    return this.#run(CALLS.listChats, () => {
      const query = prepareListChats(input);
      return andThen(this.#driver.listChats(query), (chats): Page<ChatRecord> => {
        const items = chats.slice(0, query.limit);
        const last = items.at(-1);
        return {
          items,
          nextCursor: chats.length > query.limit && last !== undefined ? chatCursor(last) : null,
        };
      });
    });
  }

  /** Deletes the chat and everything it owns; false when there was none. */
  deleteChat(chatId: string): Promise<boolean> {
    return this.#run(CALLS.deleteChat, () =>
      this.#driver.deleteChat(prepareChatId(CALLS.deleteChat.label, chatId)),
    );
  }

  /** The chat's version and one branch's head. */
  getHead(input: GetHeadInput): Promise<HeadState> {
    return this.#run(CALLS.getHead, () => this.#driver.getHead(prepareGetHead(input)));
  }

  /** The atomic head-moving write (see `ContextStore.commit`). */
  commit(input: CommitInput): Promise<CommitResult> {
    return this.#run(CALLS.commit, () =>
      this.#driver.commit(
        prepareCommitInput(input, this.#limit, this.#messageOptions, this.#liveReplies),
      ),
    );
  }

  /** The chain from a node back toward the root, oldest first. */
  getChain(input: GetChainInput): Promise<ChainPage> {
    return this.#run(CALLS.getChain, () => this.#driver.getChain(prepareGetChain(input)));
  }

  /** One node, or null. */
  getMessage(input: GetMessageInput): Promise<MessageNodeRecord | null> {
    return this.#run(CALLS.getMessage, () => this.#driver.getMessage(prepareGetMessage(input)));
  }

  /** Creates a branch, optionally making it active. */
  createBranch(input: CreateBranchInput): Promise<BranchRecord> {
    return this.#run(CALLS.createBranch, () =>
      this.#driver.createBranch(prepareCreateBranch(input)),
    );
  }

  /** A branch, or null. */
  getBranch(input: ChatPointerInput): Promise<BranchRecord | null> {
    return this.#run(CALLS.getBranch, () =>
      this.#driver.getBranch(preparePointer(CALLS.getBranch.label, input)),
    );
  }

  /** Every branch of the chat, oldest first. */
  listBranches(chatId: string): Promise<BranchRecord[]> {
    return this.#run(CALLS.listBranches, () =>
      this.#driver.listBranches(prepareChatId(CALLS.listBranches.label, chatId)),
    );
  }

  /** Makes an existing branch the active one. */
  setActiveBranch(input: ChatPointerInput): Promise<BranchRecord> {
    return this.#run(CALLS.setActiveBranch, () =>
      this.#driver.setActiveBranch(preparePointer(CALLS.setActiveBranch.label, input)),
    );
  }

  /** Names a node; `replace` moves an existing checkpoint of that name. */
  createCheckpoint(input: CreateCheckpointInput): Promise<CheckpointRecord> {
    return this.#run(CALLS.createCheckpoint, () =>
      this.#driver.createCheckpoint(prepareCreateCheckpoint(input)),
    );
  }

  /** A checkpoint, or null. */
  getCheckpoint(input: ChatPointerInput): Promise<CheckpointRecord | null> {
    return this.#run(CALLS.getCheckpoint, () =>
      this.#driver.getCheckpoint(preparePointer(CALLS.getCheckpoint.label, input)),
    );
  }

  /** Every checkpoint of the chat, oldest first. */
  listCheckpoints(chatId: string): Promise<CheckpointRecord[]> {
    return this.#run(CALLS.listCheckpoints, () =>
      this.#driver.listCheckpoints(prepareChatId(CALLS.listCheckpoints.label, chatId)),
    );
  }

  /** Deletes a checkpoint (never its node); false when there was none. */
  deleteCheckpoint(input: ChatPointerInput): Promise<boolean> {
    return this.#run(CALLS.deleteCheckpoint, () =>
      this.#driver.deleteCheckpoint(preparePointer(CALLS.deleteCheckpoint.label, input)),
    );
  }

  /** The whole graph of a chat. */
  getGraph(chatId: string): Promise<ChatGraph> {
    return this.#run(CALLS.getGraph, () =>
      this.#driver.getGraph(prepareChatId(CALLS.getGraph.label, chatId)),
    );
  }

  /**
   * Refuses every later call, waits for the calls under way to settle, then closes the driver
   * (once). Every call returns the same promise.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) this.#closing = this.#release();
    return this.#closing;
  }

  /** `[<driver name>]`: never the data or a client. Override it to describe more. */
  toJSON(): unknown {
    return `[${this.#driver.name}]`;
  }

  /** True once `close()` was called. */
  protected get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Runs a call of your own (a `migrate()`, say) under the kit's rules: refused with a
   * `StoreError` once closed, a synchronous throw becomes a rejection, errors mapped like the
   * driver's, and `close()` waits for it.
   *
   * @example
   * ```ts
   * migrate(): Promise<MigrationResult> {
   *   return this.guard('migrate()', () => this.#driver.migrate(), { writes: true });
   * }
   * ```
   */
  protected guard<T>(
    label: string,
    body: () => Awaitable<T>,
    options: { readonly writes?: boolean } = {},
  ): Promise<T> {
    const method = label.replace(/\(.*$/, '');
    return this.#run({ method, label, writes: options.writes === true }, body);
  }

  async #release(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    try {
      await this.#driver.close?.();
    } catch (error) {
      throw this.#toError(error, CALLS.close);
    }
  }

  #run<T>(storeCall: StoreCall, body: () => Awaitable<T>): Promise<T> {
    let result: Awaitable<T>;
    try {
      if (this.#closing !== undefined) {
        throw new StoreError(`${storeCall.label}: this ${this.#driver.name} is closed.`);
      }
      result = body();
    } catch (error) {
      return Promise.reject(this.#toError(error, storeCall));
    }
    if (!isThenable(result)) return Promise.resolve(result);
    const settled = Promise.resolve(result).then(undefined, (error: unknown) => {
      throw this.#toError(error, storeCall);
    });
    this.#pending.add(settled);
    const forget = (): void => {
      this.#pending.delete(settled);
    };
    settled.then(forget, forget);
    return settled;
  }

  #toError(error: unknown, storeCall: StoreCall): Error {
    if (CtxGraphError.isInstance(error)) return error;
    const { mapError } = this.#driver;
    if (mapError !== undefined) {
      try {
        const mapped = mapError.call(this.#driver, error, storeCall);
        if (CtxGraphError.isInstance(mapped)) return mapped;
      } catch {
        // A mapper that throws falls back to the plain wrapping below.
      }
    }
    const detail = error instanceof Error ? error.message : String(error);
    return new StoreError(
      `${storeCall.label}: ${this.#driver.name} failed: ${detail} (the driver's error is the cause).`,
      { cause: error },
    );
  }
}

/**
 * Makes a `ContextStore` of a driver: `new CheckedContextStore(driver)`, for stores that need no
 * members of their own.
 *
 * @example
 * ```ts
 * import { defineContextStore } from '@ctxgraph/fragments-core/store-kit';
 *
 * export function createMyStore(options: MyOptions): ContextStore {
 *   return defineContextStore(new MyDriver(options));
 * }
 * ```
 */
export function defineContextStore(driver: ContextStoreDriver): CheckedContextStore {
  return new CheckedContextStore(driver);
}
