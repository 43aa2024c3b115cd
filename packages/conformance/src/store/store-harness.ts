import {
  type BranchRecord,
  type ChatGraph,
  type CommitMessage,
  type CommitResult,
  type ContextStore,
  type JsonObject,
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  OPTIONAL_CAPABILITY_METHODS,
  type OpenChatResult,
  type OptionalCapability,
  type Page,
  type PruneInput,
  type PruneResult,
  type SearchHit,
  type SearchMessagesInput,
  type StoredMessage,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { expect } from 'vitest';
import type { StoreConformanceOptions } from './define-store-conformance';

// Internal plumbing shared by the store suites: the store under test, per-test unique ids, and
// small helpers that keep each test about the behaviour it checks.

/** What every suite of the store conformance kit receives: the store under test and its options. */
export interface StoreHarness {
  /** The store the suite's `beforeAll` created (shared by the tests; they use unique chat ids). */
  readonly store: () => ContextStore;
  /** The options the kit was defined with. */
  readonly options: StoreConformanceOptions;
  /** Timeout of an ordinary test or hook, or undefined for vitest's default. */
  readonly timeout: number | undefined;
  /** Timeout of the heavy tests (long chains, large payloads, many writers). */
  readonly slowTimeout: number;
  /** The clock every store of the suite was given (`StoreFactoryContext.clock`). */
  readonly clock: ManualClock;
  /**
   * Runs `body` with a store of its own from `createStore`, then closes and destroys it, for tests
   * that close or reopen their store.
   */
  readonly withOwnStore: (body: (store: ContextStore) => Promise<void>) => Promise<void>;
  /** Runs `body` with a second store over the same data as `store` (from `reopenStore`), then closes it. */
  readonly withReopened: (
    store: ContextStore,
    body: (reopened: ContextStore) => Promise<void>,
  ) => Promise<void>;
}

/**
 * A clock that stands still until a test moves it forward (never back): it starts at `Date.now()`
 * when the suite starts, and the live-reply tests expire a lease by advancing it instead of
 * waiting. It does not follow the wall clock, so a lease of a second holds however slow the
 * machine is between two calls.
 */
export class ManualClock {
  #now = Date.now();

  /** Now, in milliseconds since the epoch: the suite's start plus every `advance` so far. */
  readonly now = (): number => this.#now;

  /** Moves the clock forward by `milliseconds`. */
  advance(milliseconds: number): void {
    this.#now += milliseconds;
  }
}

const runId = Math.random().toString(36).slice(2, 8);
let counter = 0;

/**
 * An id no other test (nor an earlier run against the same database) uses: a prefix, this run's
 * random tag, and a counter. Same length and punctuation for the same prefix, so any collation
 * orders a batch of them by their counters.
 */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${runId}-${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}-${String(counter).padStart(6, '0')}`;
}

/** A one-text-part message. */
export function textMessage(
  id: string,
  text: string = `text of ${id}`,
  role: string = 'user',
): StoredMessage {
  return { id, role, parts: [{ type: 'text', text }] };
}

/** A fresh chat owned by a fresh user. */
export interface FreshChat {
  readonly chatId: string;
  readonly userId: string;
  readonly opened: OpenChatResult;
}

/** Opens a new chat with unique ids. */
export async function openFreshChat(
  store: ContextStore,
  extra: { readonly title?: string; readonly metadata?: JsonObject } = {},
): Promise<FreshChat> {
  const chatId = uniqueId('chat');
  const userId = uniqueId('user');
  const opened = await store.openChat({ chatId, userId, ...extra });
  return { chatId, userId, opened };
}

/** Commits plain text messages with these ids on top of the branch's current head. */
export async function appendMessages(
  store: ContextStore,
  chatId: string,
  ids: readonly string[],
  branch: string = 'main',
): Promise<CommitResult> {
  const head = await store.getHead({ chatId, branch });
  return store.commit({
    chatId,
    branch,
    expectedHeadId: head.headMessageId,
    messages: ids.map((id, index) => ({
      id,
      message: textMessage(id, `turn ${index} (${id})`, index % 2 === 0 ? 'user' : 'assistant'),
    })),
  });
}

/** `count` ids `<prefix>-<n>` with zero-padded n. */
export function sequentialIds(prefix: string, count: number, start: number = 0): string[] {
  return Array.from(
    { length: count },
    (_, index) => `${prefix}-${String(start + index).padStart(5, '0')}`,
  );
}

/** An error class of fragments-core: its stable name and its marker check. */
export interface ErrorClass<T> {
  readonly errorName: string;
  readonly prototype: T;
  isInstance(error: unknown): boolean;
}

/**
 * Calls `action`, expects the promise it returns to reject with `errorClass` (checked by marker,
 * so a store built against another copy of fragments-core passes), and returns the error.
 */
export async function expectRejection<T extends Error>(
  action: () => Promise<unknown>,
  errorClass: ErrorClass<T>,
): Promise<T> {
  let promise: Promise<unknown>;
  try {
    promise = action();
  } catch (error) {
    // A store method that throws instead of rejecting breaks callers that chain .catch().
    return expect.fail(
      `expected a promise rejected with ${errorClass.errorName}, but the method threw synchronously (${describeError(error)}); ContextStore methods must return promises`,
    );
  }
  let outcome: { readonly value: unknown } | { readonly error: unknown };
  try {
    outcome = { value: await promise };
  } catch (error) {
    outcome = { error };
  }
  if (!('error' in outcome)) {
    expect.fail(
      `expected ${errorClass.errorName}, but the call resolved with ${preview(outcome.value)}`,
    );
  }
  const error = outcome.error;
  if (!errorClass.isInstance(error)) {
    expect.fail(
      `expected ${errorClass.errorName}, but the call rejected with ${describeError(error)}`,
    );
  }
  const typed = error as T;
  expect(typed.message.length).toBeGreaterThan(0);
  return typed;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : preview(error);
}

function preview(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}

/** Everything stored for a chat, to compare before and after a refused call. */
export async function snapshot(store: ContextStore, chatId: string): Promise<ChatGraph> {
  return store.getGraph(chatId);
}

/** The branch named `name` from a listing (fails the test when absent). */
export function findBranch(branches: readonly BranchRecord[], name: string): BranchRecord {
  const branch = branches.find((candidate) => candidate.name === name);
  if (branch === undefined)
    expect.fail(`branch "${name}" missing from ${preview(branches.map((item) => item.name))}`);
  return branch;
}

/** Reads the whole chain from `head` back to the root, page by page. */
export async function readWholeChain(
  store: ContextStore,
  chatId: string,
  head: string,
  limit?: number,
): Promise<{ readonly ids: string[]; readonly pages: number }> {
  const olderFirstPages: string[][] = [];
  let cursor: string | null = head;
  let pages = 0;
  while (cursor !== null) {
    const page = await store.getChain({
      chatId,
      headMessageId: cursor,
      ...(limit === undefined ? {} : { limit }),
    });
    olderFirstPages.unshift(page.nodes.map((node) => node.id));
    cursor = page.nextCursor;
    pages += 1;
    if (pages > 100_000) expect.fail('getChain kept returning a cursor');
  }
  return { ids: olderFirstPages.flat(), pages };
}

/** Values no id or name may take, with what each is. */
export const badIdentifiers: readonly (readonly [string, unknown])[] = [
  ['an empty string', ''],
  ['a number', 42],
  ['null', null],
  ['undefined', undefined],
  ['an object', { id: 'x' }],
  [`${MAX_IDENTIFIER_LENGTH + 1} characters`, 'x'.repeat(MAX_IDENTIFIER_LENGTH + 1)],
  // 171 CJK characters: within the character limit, one byte over the UTF-8 one.
  [`${MAX_IDENTIFIER_BYTES + 1} bytes of UTF-8`, '漢'.repeat((MAX_IDENTIFIER_BYTES + 1) / 3)],
  ['a NUL character', 'before\u0000after'],
];

/**
 * A unique id of exactly `bytes` bytes of UTF-8: {@link uniqueId}`(prefix)`, then three-byte CJK
 * characters, then ASCII to make up the rest.
 */
export function idOfBytes(prefix: string, bytes: number = MAX_IDENTIFIER_BYTES): string {
  const head = `${uniqueId(prefix)}-`;
  const room = bytes - head.length;
  return `${head}${'漢'.repeat(Math.floor(room / 3))}${'x'.repeat(room % 3)}`;
}

/** `depth` objects nested one in another around a string leaf (`depth` 0 is the leaf alone). */
export function nestedValue(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = { child: value };
  return value;
}

/**
 * A message whose deepest object sits `depth` levels down, counting the message itself as level
 * one (message, `parts`, the part, then its `data` nested to the rest).
 */
export function messageOfDepth(id: string, depth: number): StoredMessage {
  return { id, role: 'user', parts: [{ type: 'data-deep', data: nestedValue(depth - 3) }] };
}

/**
 * Expects `call` to reject with `ValidationError` naming `field` (in its message or an issue
 * path), and the chat to be exactly as before.
 */
export async function expectRefused(
  store: ContextStore,
  chatId: string,
  label: string,
  field: string,
  call: () => Promise<unknown>,
): Promise<void> {
  const before = await snapshot(store, chatId);
  const error = await expectRejection(call, ValidationError).catch((failure: unknown) => {
    throw new Error(`${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
  });
  const mentioned =
    error.message.includes(field) || error.issues.some((issue) => issue.path.includes(field));
  expect(mentioned, `${label}: the error should name ${field}, got "${error.message}"`).toBe(true);
  expect(await snapshot(store, chatId), `${label}: nothing may change`).toEqual(before);
}

/** Commit entries for plain text messages with these ids. */
export function textEntries(ids: readonly string[]): CommitMessage[] {
  return ids.map((id) => ({ id, message: textMessage(id) }));
}

/** Why a test of an optional capability is skipped, or undefined when it runs (a declared capability's methods must exist). */
export function missingCapability(
  store: ContextStore,
  capability: OptionalCapability,
): string | undefined {
  if (store.capabilities[capability] !== true)
    return `the store does not declare capabilities.${capability}`;
  for (const method of OPTIONAL_CAPABILITY_METHODS[capability]) {
    if (typeof store[method] !== 'function')
      expect.fail(`capabilities.${capability} is true but the store has no ${method}() method`);
  }
  return undefined;
}

/** `store.searchMessages(input)`, for a store that declares it (fails the test when the method is missing). */
export function searchIn(
  store: ContextStore,
  input: SearchMessagesInput,
): Promise<Page<SearchHit>> {
  if (typeof store.searchMessages !== 'function')
    return expect.fail('capabilities.search is true but the store has no searchMessages() method');
  return store.searchMessages(input);
}

/** `store.prune(input)`, for a store that declares it (fails the test when the method is missing). */
export function pruneIn(store: ContextStore, input: PruneInput): Promise<PruneResult> {
  if (typeof store.prune !== 'function')
    return expect.fail('capabilities.retention is true but the store has no prune() method');
  return store.prune(input);
}
