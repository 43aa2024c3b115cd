import { type ContextStore, ValidationError } from '@ctxgraph/fragments-core';
import { afterAll, beforeAll, describe } from 'vitest';
import { defineAppendTests } from './append-tests';
import { defineChainTests } from './chain-tests';
import { defineChatTests } from './chat-tests';
import { defineClosedStoreTests } from './closed-store-tests';
import { defineCompactionTests } from './compaction-tests';
import { defineCompareTests } from './compare-tests';
import { defineConcurrencyTests } from './concurrency-tests';
import { defineContextLaneInputTests } from './context-lane-input-tests';
import { defineContextLaneTests } from './context-lane-tests';
import { defineEngineRecordTests } from './engine-record-tests';
import { defineForkTests } from './fork-tests';
import { defineInputTests } from './input-tests';
import { defineLifecycleTests } from './lifecycle-tests';
import { defineLimitTests } from './limit-tests';
import { defineLiveFeedTests } from './live-feed-tests';
import { defineLiveReplyEndTests } from './live-reply-end-tests';
import { defineLiveReplyInputTests } from './live-reply-input-tests';
import { defineLiveReplyStreamTests } from './live-reply-stream-tests';
import { defineLiveReplyTests } from './live-reply-tests';
import { defineMessageTests } from './message-tests';
import { defineMessageVersionTests } from './message-version-tests';
import { defineOffBranchTests } from './off-branch-tests';
import { definePointerTests } from './pointer-tests';
import { defineRenameTests } from './rename-tests';
import { defineRetentionTests } from './retention-tests';
import { defineSearchPrefixTests } from './search-prefix-tests';
import { defineSearchTests } from './search-tests';
import { ManualClock, type StoreHarness } from './store-harness';
import { defineVersionIdTests } from './version-id-tests';

/** What the kit gives `createStore` and `reopenStore`. */
export interface StoreFactoryContext {
  /**
   * The clock to give the store for its live replies (the `clock` option of the bundled stores):
   * `Date.now()` plus however far the kit has moved it forward, so the live-reply tests expire a
   * lease without waiting. The same function for every store of the suite, reopened ones
   * included. A store that does not declare `capabilities.liveReplies` may ignore it.
   */
  readonly clock: () => number;
}

/** Options of {@link defineStoreConformance}. */
export interface StoreConformanceOptions {
  /** Shown in the suite's title: `ContextStore conformance: <name>`. */
  readonly name: string;
  /**
   * Returns a store over fresh, isolated data: a new file, a new schema, a new instance. Called
   * once for the shared store of the suite and once more for each test that needs a store of
   * its own (closing and reopening). A store that declares `capabilities.liveReplies` takes
   * `context.clock` as its clock.
   */
  readonly createStore: (context: StoreFactoryContext) => ContextStore | Promise<ContextStore>;
  /**
   * Removes the data behind a store `createStore` returned (delete the file, drop the schema).
   * The kit has already called `store.close()` when it calls this.
   * @default nothing beyond `store.close()`
   */
  readonly destroyStore?: (store: ContextStore) => void | Promise<void>;
  /**
   * Returns a second store over the SAME data as `store` (the same file, schema or server), as
   * another process would open it. The persistence and cross-instance tests use it (with
   * `capabilities.multiProcess`, the races of `commit`, `append` and `forkBranch` spread over
   * both objects); it is required when the store declares `capabilities.persistent`. The kit
   * closes the returned store (never destroys it). The live-reply tests watch changes made
   * through it (for a SQL store: another connection, as another process would).
   */
  readonly reopenStore?: (
    store: ContextStore,
    context: StoreFactoryContext,
  ) => ContextStore | Promise<ContextStore>;
  /**
   * Timeout of each test and hook, in milliseconds: raise it for slow servers. The heavy tests
   * (long chains, large payloads, deep JSON, many concurrent writers, appenders or forks) get
   * six times as long.
   * @default vitest's testTimeout / hookTimeout (5000 / 10000 unless configured)
   */
  readonly timeoutMs?: number;
}

/**
 * Defines the vitest suites every `ContextStore` must pass: chats and ownership, message nodes
 * (every `UIMessage` part kind round-trips), compaction nodes (a node whose engine record
 * names a compaction round-trips byte for byte and its chain reads back to the boundary with
 * `until`), engine records (kept beside the message by every read and replaced with it when
 * `engineRecords` is declared, refused otherwise), the replace-in-place rule (an id on another branch
 * refused with `MessageIdConflictError`), chains and paging, branches and checkpoints, the
 * atomic head-moving write under concurrent callers, `append`, `forkBranch` and the context lane
 * (when declared, concurrent callers included), comparing branches (over `getChain`), search
 * (scoping, ownership, paging, relevance, unicode, replaced messages) and retention
 * (reachability, dry run, the active branch, concurrent writers) when declared, message versions
 * (one message id on sibling branches under distinct node ids, `findMessageNodes`, the atomic
 * fork-commit, concurrent fork-commits, version node ids the store allocates, any number of them
 * and concurrently) when declared, live replies and the change feed (a
 * question and its reply's record in one commit, chunks from any offset, the lease and its
 * takeover on the kit's clock, stop marks, the final save and the end in one commit, notices of
 * changes made through another store over the same data) when declared, unicode and large
 * payloads, the documented limits
 * (512 bytes of UTF-8 per id, JSON depth, `getChain` limits up to `MAX_SAFE_INTEGER`), bad input
 * refused with nothing changed, calls after `close()` refused with a `StoreError`, and
 * persistence across reopening when the store declares it.
 *
 * Call it at the top level of a `*.test.ts` file. Tests that need an ability the store does not
 * declare in `capabilities` (`append`, `forkBranch`, `contextLane`, `search`, `retention`,
 * `engineRecords`, `messageVersions`, `liveReplies`, `persistent`, `multiProcess`) or a
 * `reopenStore` that was not given are skipped, never anything else (a declared ability whose
 * method is missing fails); every test uses its own random chat ids, so the data may be shared with other runs.
 *
 * @example
 * ```ts
 * // my-store.test.ts
 * import { defineStoreConformance } from '@ctxgraph/conformance';
 * import { MyStore } from './my-store';
 *
 * defineStoreConformance({
 *   name: 'MyStore',
 *   createStore: ({ clock }) => new MyStore({ file: tempFile(), clock }),
 *   reopenStore: (store, { clock }) => new MyStore({ file: (store as MyStore).file, clock }),
 *   destroyStore: (store) => removeFile((store as MyStore).file),
 * });
 * ```
 */
export function defineStoreConformance(options: StoreConformanceOptions): void {
  checkOptions(options);
  const timeout = options.timeoutMs;
  const slowTimeout = (timeout ?? 5_000) * 6;

  describe(`ContextStore conformance: ${options.name}`, () => {
    let shared: ContextStore | undefined;
    const clock = new ManualClock();
    const context: StoreFactoryContext = Object.freeze({ clock: clock.now });

    beforeAll(async () => {
      shared = await options.createStore(context);
    }, timeout);

    afterAll(async () => {
      if (shared === undefined) return;
      await disposeStore(options, shared);
    }, timeout);

    const harness: StoreHarness = {
      store: () => {
        if (shared === undefined)
          throw new Error('defineStoreConformance: createStore() did not produce a store.');
        return shared;
      },
      options,
      timeout,
      slowTimeout,
      clock,
      withOwnStore: async (body) => {
        const store = await options.createStore(context);
        try {
          await body(store);
        } finally {
          await disposeStore(options, store);
        }
      },
      withReopened: async (store, body) => {
        if (options.reopenStore === undefined)
          throw new Error('defineStoreConformance: reopenStore was not given.');
        const reopened = await options.reopenStore(store, context);
        try {
          await body(reopened);
        } finally {
          await reopened.close();
        }
      },
    };

    defineChatTests(harness);
    defineMessageTests(harness);
    defineOffBranchTests(harness);
    defineChainTests(harness);
    defineCompactionTests(harness);
    defineEngineRecordTests(harness);
    definePointerTests(harness);
    defineConcurrencyTests(harness);
    defineAppendTests(harness);
    defineForkTests(harness);
    defineMessageVersionTests(harness);
    defineVersionIdTests(harness);
    defineContextLaneTests(harness);
    defineContextLaneInputTests(harness);
    defineCompareTests(harness);
    defineSearchTests(harness);
    defineSearchPrefixTests(harness);
    defineRenameTests(harness);
    defineRetentionTests(harness);
    defineInputTests(harness);
    defineLimitTests(harness);
    defineLiveReplyTests(harness);
    defineLiveReplyStreamTests(harness);
    defineLiveReplyEndTests(harness);
    defineLiveReplyInputTests(harness);
    defineLiveFeedTests(harness);
    defineLifecycleTests(harness);
    defineClosedStoreTests(harness);
  });
}

async function disposeStore(options: StoreConformanceOptions, store: ContextStore): Promise<void> {
  try {
    await store.close();
  } finally {
    await options.destroyStore?.(store);
  }
}

function checkOptions(options: StoreConformanceOptions): void {
  const method = 'defineStoreConformance(options)';
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError(`${method}: options must be an object.`, {
      issues: [{ path: 'options', message: 'expected an object' }],
    });
  }
  const problems: { path: string; message: string }[] = [];
  if (typeof options.name !== 'string' || options.name === '')
    problems.push({ path: 'name', message: 'expected a non-empty string' });
  if (typeof options.createStore !== 'function')
    problems.push({ path: 'createStore', message: 'expected a function' });
  for (const field of ['destroyStore', 'reopenStore'] as const) {
    if (options[field] !== undefined && typeof options[field] !== 'function')
      problems.push({ path: field, message: 'expected a function' });
  }
  if (
    options.timeoutMs !== undefined &&
    (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1)
  ) {
    problems.push({ path: 'timeoutMs', message: 'expected a positive integer' });
  }
  if (problems.length > 0) {
    throw new ValidationError(
      `${method}: ${problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')}.`,
      {
        issues: problems,
      },
    );
  }
}
