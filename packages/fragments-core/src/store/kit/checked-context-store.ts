import { CtxGraphError } from '../../errors/ctxgraph-error';
import { StoreError, ValidationError } from '../../errors/errors';
import type { ContextStoreCapabilities } from '../capabilities';
import type { ContextStore } from '../context-store';
import { checkedWatchChat } from './checked-watch-chat';
import type {
  Awaitable,
  ContextStoreDriver,
  DriverMethodName,
  PreparedInputs,
  StoreCall,
} from './context-store-driver';
import type { StoreInputOptions } from './input-checks';
import { appendByCommit, forkByCreate } from './kit-defaults';
import {
  andThen,
  CLOSE_CALL,
  driverIssues,
  isThenable,
  STORE_METHODS,
  servedMethods,
  WATCH_CHAT_CALL,
} from './store-methods';

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
 * - `capabilities` is a frozen copy, checked against the driver's methods when constructed; every
 *   required method of the contract is present, and the methods of each optional capability
 *   (`search`, `retention`, `liveReplies`) exactly when it is declared;
 * - `append` and `forkBranch` are the driver's, or, when it has none, the kit's defaults over its
 *   `getHead` + `commit` and `listBranches` + `createBranch` (`kit-defaults.ts`);
 * - a commit that carries `startReply` or `endReply` is refused with `ValidationError` unless
 *   the driver declares `liveReplies`; `watchChat` is refused synchronously once closed.
 *
 * Every method is an own property made from one row of the kit's table (`store-methods.ts`).
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
  /** The specification version (of this contract) the store implements. */
  readonly specificationVersion: 'v1' = 'v1';
  /** The driver's capabilities, frozen. */
  readonly capabilities: ContextStoreCapabilities;
  /** See `ContextStore.openChat`. */
  declare readonly openChat: ContextStore['openChat'];
  /** See `ContextStore.getChat`. */
  declare readonly getChat: ContextStore['getChat'];
  /** See `ContextStore.updateChat`. */
  declare readonly updateChat: ContextStore['updateChat'];
  /** See `ContextStore.listChats` (the driver returns one chat more than a page; the kit cuts it). */
  declare readonly listChats: ContextStore['listChats'];
  /** See `ContextStore.deleteChat`. */
  declare readonly deleteChat: ContextStore['deleteChat'];
  /** See `ContextStore.getHead`. */
  declare readonly getHead: ContextStore['getHead'];
  /** See `ContextStore.commit`. */
  declare readonly commit: ContextStore['commit'];
  /** See `ContextStore.append` (the driver's, else the kit's default over `commit`). */
  declare readonly append: ContextStore['append'];
  /** See `ContextStore.getChain`. */
  declare readonly getChain: ContextStore['getChain'];
  /** See `ContextStore.getMessage`. */
  declare readonly getMessage: ContextStore['getMessage'];
  /** See `ContextStore.findMessageNodes`. */
  declare readonly findMessageNodes: ContextStore['findMessageNodes'];
  /** See `ContextStore.createBranch`. */
  declare readonly createBranch: ContextStore['createBranch'];
  /** See `ContextStore.forkBranch` (the driver's, else the kit's default over `createBranch`). */
  declare readonly forkBranch: ContextStore['forkBranch'];
  /** See `ContextStore.renameBranch`. */
  declare readonly renameBranch: ContextStore['renameBranch'];
  /** See `ContextStore.getBranch`. */
  declare readonly getBranch: ContextStore['getBranch'];
  /** See `ContextStore.listBranches`. */
  declare readonly listBranches: ContextStore['listBranches'];
  /** See `ContextStore.setActiveBranch`. */
  declare readonly setActiveBranch: ContextStore['setActiveBranch'];
  /** See `ContextStore.createCheckpoint`. */
  declare readonly createCheckpoint: ContextStore['createCheckpoint'];
  /** See `ContextStore.getCheckpoint`. */
  declare readonly getCheckpoint: ContextStore['getCheckpoint'];
  /** See `ContextStore.listCheckpoints`. */
  declare readonly listCheckpoints: ContextStore['listCheckpoints'];
  /** See `ContextStore.deleteCheckpoint`. */
  declare readonly deleteCheckpoint: ContextStore['deleteCheckpoint'];
  /** See `ContextStore.getContext`. */
  declare readonly getContext: ContextStore['getContext'];
  /** See `ContextStore.saveContext`. */
  declare readonly saveContext: ContextStore['saveContext'];
  /** See `ContextStore.getGraph`. */
  declare readonly getGraph: ContextStore['getGraph'];
  /** Present when `capabilities.search` is true (see `ContextStore.searchMessages`). */
  declare readonly searchMessages?: ContextStore['searchMessages'];
  /** Present when `capabilities.retention` is true (see `ContextStore.prune`). */
  declare readonly prune?: ContextStore['prune'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.startReply`). */
  declare readonly startReply?: ContextStore['startReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.appendReplyChunks`). */
  declare readonly appendReplyChunks?: ContextStore['appendReplyChunks'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.readReply`). */
  declare readonly readReply?: ContextStore['readReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.getLiveState`). */
  declare readonly getLiveState?: ContextStore['getLiveState'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.stopReply`). */
  declare readonly stopReply?: ContextStore['stopReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.takeOverReply`). */
  declare readonly takeOverReply?: ContextStore['takeOverReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.endReply`). */
  declare readonly endReply?: ContextStore['endReply'];
  /** Present when `capabilities.liveReplies` is true (see `ContextStore.watchChat`). */
  declare readonly watchChat?: ContextStore['watchChat'];

  readonly #driver: ContextStoreDriver;
  readonly #pending = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  /**
   * Wraps `driver`. Throws a `ValidationError` listing every problem when the driver is not
   * usable: a required method missing, a declared capability without its methods, a flag of an
   * ability every store now has, a bad capability or limit.
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
    this.capabilities = Object.freeze({ ...driver.capabilities });
    const options: StoreInputOptions = {
      ...(driver.maxJsonBytes === undefined ? {} : { maxJsonBytes: driver.maxJsonBytes }),
      liveReplies: this.capabilities.liveReplies === true,
      searchPrefix: this.capabilities.searchPrefix === true,
    };
    const defaults: Partial<Record<DriverMethodName, (input: never) => unknown>> = {
      append: (input: PreparedInputs['append']) => appendByCommit(driver, input),
      forkBranch: (input: PreparedInputs['forkBranch']) => forkByCreate(driver, input),
    };
    // Own properties, so `typeof store.prune === 'function'` and the capability always agree.
    // Configurable, so proxies over the store may still replace them.
    const define = (name: string, value: unknown): void => {
      Object.defineProperty(this, name, { value, configurable: true, writable: true });
    };
    for (const name of servedMethods(this.capabilities)) {
      const row = STORE_METHODS[name] as unknown as StoreRow;
      const own = driver[name] as ((input: unknown) => Awaitable<unknown>) | undefined;
      const body = own === undefined ? (defaults[name] as (input: unknown) => unknown) : own;
      define(name, (input: unknown) =>
        this.#run(row.call, () => {
          const prepared = row.prepare(input, options);
          const answer = body.call(driver, prepared) as Awaitable<unknown>;
          const { finish } = row;
          return finish === undefined
            ? answer
            : andThen(answer, (result) => finish(result as never, prepared as never));
        }),
      );
    }
    if (this.capabilities.liveReplies === true) {
      define(
        'watchChat',
        checkedWatchChat({
          driver,
          toError: (error) => this.#toError(error, WATCH_CHAT_CALL),
          closed: () => this.#closing !== undefined,
        }),
      );
    }
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
      throw this.#toError(error, CLOSE_CALL);
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

/** One row of the table, its types erased: the constructor applies every row the same way. */
interface StoreRow {
  readonly call: StoreCall;
  readonly prepare: (input: unknown, options: StoreInputOptions) => unknown;
  readonly finish?: (result: never, prepared: never) => unknown;
}
