import {
  type ContextStore,
  OPTIONAL_CAPABILITIES,
  OPTIONAL_CAPABILITY_METHODS,
  REQUIRED_STORE_METHODS,
  StoreError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  openFreshChat,
  type StoreHarness,
  textEntries,
  textMessage,
  uniqueId,
} from './store-harness';

/** One valid call of each method, for a chat with one message `messageId` on `main`. */
function everyCall(
  store: ContextStore,
  chatId: string,
  userId: string,
  messageId: string,
): [string, () => unknown][] {
  const next = uniqueId('m');
  const calls: [string, () => unknown][] = [
    ['openChat', () => store.openChat({ chatId, userId })],
    ['getChat', () => store.getChat(chatId)],
    ['updateChat', () => store.updateChat({ chatId, title: 'after close' })],
    ['listChats', () => store.listChats({ userId })],
    ['deleteChat', () => store.deleteChat(chatId)],
    ['getHead', () => store.getHead({ chatId, branch: 'main' })],
    [
      'commit',
      () =>
        store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: messageId,
          messages: [{ id: next, message: textMessage(next) }],
        }),
    ],
    ['getChain', () => store.getChain({ chatId, headMessageId: messageId })],
    ['getMessage', () => store.getMessage({ chatId, messageId })],
    ['createBranch', () => store.createBranch({ chatId, name: 'late', headMessageId: messageId })],
    ['getBranch', () => store.getBranch({ chatId, name: 'main' })],
    ['listBranches', () => store.listBranches(chatId)],
    ['setActiveBranch', () => store.setActiveBranch({ chatId, name: 'main' })],
    ['createCheckpoint', () => store.createCheckpoint({ chatId, name: 'late', messageId })],
    ['getCheckpoint', () => store.getCheckpoint({ chatId, name: 'late' })],
    ['listCheckpoints', () => store.listCheckpoints(chatId)],
    ['deleteCheckpoint', () => store.deleteCheckpoint({ chatId, name: 'late' })],
    ['getGraph', () => store.getGraph(chatId)],
  ];
  calls.push(
    [
      'append',
      () => store.append({ chatId, branch: 'main', messages: textEntries([uniqueId('m')]) }),
    ],
    ['findMessageNodes', () => store.findMessageNodes({ chatId, messageId })],
    ['forkBranch', () => store.forkBranch({ chatId, from: 'main', headMessageId: messageId })],
    ['renameBranch', () => store.renameBranch({ chatId, from: 'main', to: 'late' })],
    ['getContext', () => store.getContext(chatId)],
    ['saveContext', () => store.saveContext({ chatId, fragments: ['late'] })],
  );
  const { capabilities } = store;
  if (capabilities.search === true) {
    calls.push(['searchMessages', () => store.searchMessages?.({ userId, query: 'late' })]);
  }
  if (capabilities.retention === true) {
    calls.push(['prune', () => store.prune?.({ chatId })]);
  }
  if (capabilities.liveReplies === true) {
    const live = { chatId, replyId: uniqueId('reply'), owner: 'late-owner' };
    calls.push(
      [
        'startReply',
        () =>
          store.startReply?.({ ...live, branch: 'main', afterNodeId: messageId, leaseMs: 1000 }),
      ],
      [
        'appendReplyChunks',
        () => store.appendReplyChunks?.({ ...live, from: 0, chunks: [], leaseMs: 1000 }),
      ],
      ['readReply', () => store.readReply?.(live)],
      ['getLiveState', () => store.getLiveState?.(chatId)],
      ['stopReply', () => store.stopReply?.({ chatId })],
      ['takeOverReply', () => store.takeOverReply?.({ ...live, leaseMs: 1000 })],
      ['endReply', () => store.endReply?.(live)],
    );
  }
  return calls;
}

/**
 * What every store promises about `close()`, whatever it stores in: later calls are refused with
 * a clear `StoreError` (a rejected promise, never a synchronous throw), `close()` may be called
 * again and concurrently, and a refused call writes nothing. (The store kit of
 * `@ctxgraph/fragments-core/store-kit` keeps these promises for the stores built on it.)
 */
export function defineClosedStoreTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('closed store', () => {
    it(
      'refuses every method after close() with a StoreError that names the call and says closed',
      async () => {
        await harness.withOwnStore(async (store) => {
          const { chatId, userId } = await openFreshChat(store);
          const messageId = uniqueId('m');
          await appendMessages(store, chatId, [messageId]);
          await store.close();
          const calls = everyCall(store, chatId, userId, messageId);
          // watchChat answers synchronously (it returns the unsubscribe function): it throws.
          const declared = [
            ...REQUIRED_STORE_METHODS,
            ...OPTIONAL_CAPABILITIES.flatMap(
              (capability) => OPTIONAL_CAPABILITY_METHODS[capability],
            ),
          ].filter(
            (method) =>
              method !== 'watchChat' && method !== 'close' && typeof store[method] === 'function',
          );
          if (typeof store.watchChat === 'function') {
            let thrown: unknown;
            try {
              store.watchChat(chatId, () => {});
            } catch (error) {
              thrown = error;
            }
            expect(StoreError.isInstance(thrown), `watchChat(): ${String(thrown)}`).toBe(true);
            expect((thrown as Error).message, 'watchChat() says the store is closed').toMatch(
              /close/i,
            );
          }
          for (const method of declared)
            expect(calls.map(([name]) => name)).toContain(method as string);
          for (const [method, call] of calls) {
            let result: unknown;
            try {
              result = call();
            } catch (error) {
              expect.fail(
                `${method}() threw synchronously after close() (${String(error)}); it must return a rejected promise`,
              );
            }
            expect(result instanceof Promise, `${method}() returns a promise`).toBe(true);
            const error = await (result as Promise<unknown>).then(
              () => expect.fail(`${method}() resolved after close()`),
              (caught: unknown) => caught,
            );
            expect(StoreError.isInstance(error), `${method}(): ${String(error)}`).toBe(true);
            const message = (error as Error).message;
            expect(message, `${method}() names the call`).toContain(method);
            expect(message, `${method}() says the store is closed`).toMatch(/close/i);
          }
        });
      },
      timeout,
    );

    it(
      'close() may be called concurrently and again; every call resolves',
      async () => {
        await harness.withOwnStore(async (store) => {
          const { chatId } = await openFreshChat(store);
          await appendMessages(store, chatId, [uniqueId('m')]);
          const both = await Promise.all([store.close(), store.close()]);
          expect(both).toEqual([undefined, undefined]);
          await expect(store.close()).resolves.toBeUndefined();
        });
      },
      timeout,
    );

    it(
      'a write refused after close() leaves the data as it was (seen through a reopened store)',
      async ({ skip }) => {
        if (harness.options.reopenStore === undefined) skip('no reopenStore was given');
        await harness.withOwnStore(async (store) => {
          const { chatId, userId } = await openFreshChat(store);
          const messageId = uniqueId('m');
          await appendMessages(store, chatId, [messageId]);
          const before = await store.getGraph(chatId);
          await store.close();
          const writes = new Set([
            'openChat',
            'updateChat',
            'deleteChat',
            'commit',
            'createBranch',
            'setActiveBranch',
            'createCheckpoint',
            'deleteCheckpoint',
            'append',
            'forkBranch',
            'renameBranch',
            'saveContext',
          ]);
          for (const [method, call] of everyCall(store, chatId, userId, messageId)) {
            if (writes.has(method))
              await Promise.resolve()
                .then(call)
                .catch(() => undefined);
          }
          await harness.withReopened(store, async (reopened) => {
            expect(await reopened.getGraph(chatId)).toEqual(before);
          });
        });
      },
      timeout,
    );
  });
}
