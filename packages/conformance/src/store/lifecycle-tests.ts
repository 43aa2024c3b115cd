import {
  HeadConflictError,
  OPTIONAL_CAPABILITIES,
  OPTIONAL_CAPABILITY_METHODS,
  OwnershipError,
  REQUIRED_STORE_METHODS,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRejection,
  openFreshChat,
  type StoreHarness,
  textMessage,
  uniqueId,
} from './store-harness';

/** The specification version, getGraph, close(), and persistence across store objects. */
export function defineLifecycleTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('store lifecycle', () => {
    it(
      "declares specificationVersion 'v1', has every required method, and each optional capability's methods exactly when it declares it",
      () => {
        const store = harness.store();
        expect(store.specificationVersion).toBe('v1');
        expect(typeof store.capabilities.persistent).toBe('boolean');
        expect(typeof store.capabilities.multiProcess).toBe('boolean');
        for (const method of REQUIRED_STORE_METHODS)
          expect(typeof store[method], `${method}() is required of every v1 store`).toBe(
            'function',
          );
        // The optional capabilities: absent or a boolean, a declared one with all its methods, an
        // undeclared one with none (search prefixes widen search: they need it).
        for (const capability of OPTIONAL_CAPABILITIES) {
          const declared: unknown = store.capabilities[capability];
          expect([undefined, true, false], `capabilities.${capability}`).toContain(declared);
          if (capability === 'searchPrefix') continue;
          for (const method of OPTIONAL_CAPABILITY_METHODS[capability])
            expect(typeof store[method], `${capability}: ${method}()`).toBe(
              declared === true ? 'function' : 'undefined',
            );
        }
        if (store.capabilities.searchPrefix === true)
          expect(store.capabilities.search, 'searchPrefix needs search').toBe(true);
        // Flags of abilities every v1 store has: a store declares none of them.
        for (const flag of [
          'append',
          'forkBranch',
          'renameBranch',
          'contextLane',
          'engineRecords',
          'messageVersions',
        ])
          expect(Object.hasOwn(store.capabilities, flag), `capabilities.${flag}`).toBe(false);
      },
      timeout,
    );

    it(
      'getGraph returns the chat, every node in sequence order, and its branches and checkpoints oldest first',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store, { title: 'Graph' });
        const [a, b, c, d] = [uniqueId('g'), uniqueId('g'), uniqueId('g'), uniqueId('g')];
        await appendMessages(store, chatId, [a, b]);
        await store.createBranch({ chatId, name: 'alt', headMessageId: a, activate: true });
        await appendMessages(store, chatId, [c], 'alt');
        await appendMessages(store, chatId, [d]);
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: d,
          messages: [{ id: a, message: textMessage(a, 'rewritten') }],
        });
        await store.createCheckpoint({ chatId, name: 'first', messageId: a });
        await store.createCheckpoint({ chatId, name: 'second', messageId: c });
        const graph = await store.getGraph(chatId);
        expect(graph.chat).toEqual(await store.getChat(chatId));
        expect(graph.chat.activeBranch).toBe('alt');
        expect(graph.nodes.map((node) => node.id)).toEqual([a, b, c, d]);
        for (const node of graph.nodes)
          expect(node).toEqual(await store.getMessage({ chatId, messageId: node.id }));
        expect(graph.nodes.map((node) => node.parentId)).toEqual([null, a, a, b]);
        expect(graph.branches).toEqual(await store.listBranches(chatId));
        expect(graph.branches.map((branch) => [branch.name, branch.headMessageId])).toEqual([
          ['main', d],
          ['alt', c],
        ]);
        expect(graph.checkpoints).toEqual(await store.listCheckpoints(chatId));
        expect(graph.checkpoints.map((checkpoint) => checkpoint.name)).toEqual(['first', 'second']);
        // The graph is plain JSON data (inspect() hands it to a UI as is).
        expect(JSON.parse(JSON.stringify(graph))).toEqual(graph);
      },
      timeout,
    );

    it(
      'close() can be called twice',
      async () => {
        await harness.withOwnStore(async (store) => {
          const { chatId } = await openFreshChat(store);
          await appendMessages(store, chatId, [uniqueId('m')]);
          await expect(store.close()).resolves.toBeUndefined();
          await expect(store.close()).resolves.toBeUndefined();
        });
      },
      timeout,
    );

    it(
      'everything survives closing the store and opening it again',
      async ({ skip }) => {
        if (!harness.store().capabilities.persistent)
          skip('the store does not declare capabilities.persistent');
        if (harness.options.reopenStore === undefined) {
          expect.fail(
            'the store declares capabilities.persistent, so defineStoreConformance needs reopenStore',
          );
        }
        await harness.withOwnStore(async (store) => {
          const { chatId, userId } = await openFreshChat(store, {
            title: 'Durable',
            metadata: { plan: 'pro' },
          });
          const [a, b] = [uniqueId('p'), uniqueId('p')];
          await appendMessages(store, chatId, [a, b]);
          await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: b,
            messages: [{ id: a, message: textMessage(a, 'fixed') }],
          });
          await store.createBranch({ chatId, name: 'alt', headMessageId: a, activate: true });
          await store.createCheckpoint({ chatId, name: 'cp', messageId: b });
          const before = await store.getGraph(chatId);
          const listed = await store.listChats({ userId });
          await store.close();
          await harness.withReopened(store, async (reopened) => {
            expect(await reopened.getGraph(chatId)).toEqual(before);
            expect(await reopened.listChats({ userId })).toEqual(listed);
            const again = await reopened.openChat({ chatId, userId });
            expect(again.created).toBe(false);
            expect(again.branch.name).toBe('alt');
            // Versions and sequences go on from where they were.
            const next = uniqueId('p');
            const result = await reopened.commit({
              chatId,
              branch: 'alt',
              expectedHeadId: a,
              messages: [{ id: next, message: textMessage(next) }],
            });
            expect(result.revision).toBe(before.chat.revision + 1);
            expect(result.rewrittenAt).toBe(before.chat.rewrittenAt);
            const lastSequence = Math.max(...before.nodes.map((node) => node.sequence));
            expect(result.nodes[0]?.sequence).toBeGreaterThan(lastSequence);
          });
        });
      },
      slowTimeout,
    );

    it(
      'a second store object over the same data sees every write at once',
      async ({ skip }) => {
        if (harness.options.reopenStore === undefined) skip('no reopenStore was given');
        const store = harness.store();
        await harness.withReopened(store, async (other) => {
          const { chatId } = await openFreshChat(store);
          const a = uniqueId('x');
          const first = await appendMessages(store, chatId, [a]);
          expect(await other.getHead({ chatId, branch: 'main' })).toEqual({
            revision: first.revision,
            headMessageId: a,
            rewrittenAt: 0,
          });
          await expectRejection(
            () => other.openChat({ chatId, userId: uniqueId('intruder') }),
            OwnershipError,
          );
          const b = uniqueId('x');
          const second = await other.commit({
            chatId,
            branch: 'main',
            expectedHeadId: a,
            messages: [{ id: b, message: textMessage(b) }],
          });
          // The first object must not answer from a stale view: its commit on the old head conflicts.
          const c = uniqueId('x');
          const conflict = await expectRejection(
            () =>
              store.commit({
                chatId,
                branch: 'main',
                expectedHeadId: a,
                messages: [{ id: c, message: textMessage(c) }],
              }),
            HeadConflictError,
          );
          expect(conflict.currentHeadId).toBe(b);
          expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
            revision: second.revision,
            headMessageId: b,
            rewrittenAt: 0,
          });
          await other.createCheckpoint({ chatId, name: 'seen', messageId: b });
          expect((await store.getCheckpoint({ chatId, name: 'seen' }))?.messageId).toBe(b);
          expect(await other.deleteChat(chatId)).toBe(true);
          expect(await store.getChat(chatId)).toBeNull();
        });
      },
      timeout,
    );
  });
}
