import type {
  BranchRecord,
  ChatGraph,
  CommitResult,
  ContextStore,
  JsonObject,
  OpenChatResult,
  StoredMessage,
} from '@ctxgraph/fragments-core';
import { expect } from 'vitest';
import type { StoreConformanceOptions } from './define-store-conformance';

// Internal plumbing shared by the store suites: the store under test, per-test unique ids, and
// small helpers that keep each test about the behaviour it checks.

/** What every suite of the store kit receives. */
export interface StoreKit {
  /** The store the suite's `beforeAll` created (shared by the tests; they use unique chat ids). */
  readonly store: () => ContextStore;
  /** The options the kit was defined with. */
  readonly options: StoreConformanceOptions;
  /** Timeout of an ordinary test or hook, or undefined for vitest's default. */
  readonly timeout: number | undefined;
  /** Timeout of the heavy tests (long chains, large payloads, many writers). */
  readonly slowTimeout: number;
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
