import { MessageNotFoundError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRejection,
  openFreshChat,
  readWholeChain,
  type StoreHarness,
  sequentialIds,
  textMessage,
  uniqueId,
} from './store-harness';

/** Chains: walking from a node to the root, `until`, `limit` and cursors, long chains. */
export function defineChainTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('chains', () => {
    it(
      'getChain returns the chain from a node back to the root, oldest first',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = sequentialIds(uniqueId('c'), 5);
        await appendMessages(store, chatId, ids);
        const whole = await store.getChain({ chatId, headMessageId: ids[4] as string });
        expect(whole.nodes.map((node) => node.id)).toEqual(ids);
        expect(whole.nodes.map((node) => node.parentId)).toEqual([null, ...ids.slice(0, 4)]);
        expect(whole.nextCursor).toBeNull();
        expect(whole.reachedUntil).toBe(false);
        const middle = await store.getChain({ chatId, headMessageId: ids[2] as string });
        expect(middle.nodes.map((node) => node.id)).toEqual(ids.slice(0, 3));
        const root = await store.getChain({ chatId, headMessageId: ids[0] as string });
        expect(root).toEqual({ nodes: [whole.nodes[0]], nextCursor: null, reachedUntil: false });
        for (const node of whole.nodes)
          expect(node).toEqual(await store.getMessage({ chatId, messageId: node.id }));
      },
      timeout,
    );

    it(
      'until stops the walk before a node the caller already has',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = sequentialIds(uniqueId('u'), 5);
        await appendMessages(store, chatId, ids);
        const head = ids[4] as string;
        const newer = await store.getChain({
          chatId,
          headMessageId: head,
          until: ids[1] as string,
        });
        expect(newer.nodes.map((node) => node.id)).toEqual(ids.slice(2));
        expect(newer.reachedUntil).toBe(true);
        expect(newer.nextCursor).toBeNull();
        expect(await store.getChain({ chatId, headMessageId: head, until: head })).toEqual({
          nodes: [],
          nextCursor: null,
          reachedUntil: true,
        });
        // An until that is not on the chain (another branch's node, or no node at all) is never met.
        const stray = uniqueId('stray');
        await store.createBranch({ chatId, name: 'side', headMessageId: ids[0] as string });
        await appendMessages(store, chatId, [stray], 'side');
        for (const until of [stray, uniqueId('absent')]) {
          const page = await store.getChain({ chatId, headMessageId: head, until });
          expect(page.nodes.map((node) => node.id)).toEqual(ids);
          expect(page.reachedUntil).toBe(false);
          expect(page.nextCursor).toBeNull();
        }
      },
      timeout,
    );

    it(
      'limit returns the newest nodes and a cursor that continues with the older ones',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = sequentialIds(uniqueId('l'), 10);
        await appendMessages(store, chatId, ids);
        const head = ids[9] as string;
        const first = await store.getChain({ chatId, headMessageId: head, limit: 3 });
        expect(first.nodes.map((node) => node.id)).toEqual(ids.slice(7));
        expect(first.nextCursor).toBe(ids[6]);
        expect(first.reachedUntil).toBe(false);
        const paged = await readWholeChain(store, chatId, head, 3);
        expect(paged).toEqual({ ids, pages: 4 });
        for (const limit of [10, 11, 1_000_000]) {
          const page = await store.getChain({ chatId, headMessageId: head, limit });
          expect(page.nodes.map((node) => node.id)).toEqual(ids);
          expect(page.nextCursor).toBeNull();
        }
        expect((await readWholeChain(store, chatId, head, 1)).pages).toBe(10);
      },
      timeout,
    );

    it(
      'limit and until together: the walk reports until when the page ends right before it',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = sequentialIds(uniqueId('lu'), 10);
        await appendMessages(store, chatId, ids);
        const head = ids[9] as string;
        const until = ids[2] as string;
        const first = await store.getChain({ chatId, headMessageId: head, until, limit: 4 });
        expect(first.nodes.map((node) => node.id)).toEqual(ids.slice(6));
        expect(first).toMatchObject({ nextCursor: ids[5], reachedUntil: false });
        const second = await store.getChain({
          chatId,
          headMessageId: first.nextCursor as string,
          until,
          limit: 4,
        });
        expect(second.nodes.map((node) => node.id)).toEqual(ids.slice(3, 6));
        expect(second).toMatchObject({ nextCursor: null, reachedUntil: true });
        // The page is full and the next node is `until`: the walk met it, there is nothing more to read.
        const exact = await store.getChain({ chatId, headMessageId: head, until, limit: 7 });
        expect(exact.nodes.map((node) => node.id)).toEqual(ids.slice(3));
        expect(exact).toMatchObject({ nextCursor: null, reachedUntil: true });
      },
      timeout,
    );

    it(
      'a fork shares its ancestors with the branch it came from',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const trunk = sequentialIds(uniqueId('t'), 4);
        await appendMessages(store, chatId, trunk);
        await store.createBranch({ chatId, name: 'fork', headMessageId: trunk[1] as string });
        const twig = sequentialIds(uniqueId('f'), 3);
        const committed = await appendMessages(store, chatId, twig, 'fork');
        const forkChain = await store.getChain({
          chatId,
          headMessageId: committed.headMessageId as string,
        });
        expect(forkChain.nodes.map((node) => node.id)).toEqual([...trunk.slice(0, 2), ...twig]);
        const mainChain = await store.getChain({ chatId, headMessageId: trunk[3] as string });
        expect(mainChain.nodes.map((node) => node.id)).toEqual(trunk);
      },
      timeout,
    );

    it(
      'getChain from a node that is not in the chat throws MessageNotFoundError',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('m')]);
        const other = await openFreshChat(store);
        const elsewhere = uniqueId('elsewhere');
        await appendMessages(store, other.chatId, [elsewhere]);
        for (const headMessageId of [uniqueId('absent'), elsewhere]) {
          const error = await expectRejection(
            () => store.getChain({ chatId, headMessageId }),
            MessageNotFoundError,
          );
          expect(error).toMatchObject({ chatId, messageId: headMessageId });
        }
      },
      timeout,
    );

    it(
      'a 2,000-node chain reads whole in one call, and exactly once when paged',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = sequentialIds(uniqueId('long'), 2_000);
        let head: string | null = null;
        for (let start = 0; start < ids.length; start += 250) {
          const batch = ids.slice(start, start + 250);
          const result = await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: head,
            messages: batch.map((id) => ({ id, message: textMessage(id, `message ${id}`) })),
          });
          head = result.headMessageId;
        }
        expect(head).toBe(ids.at(-1));
        const whole = await store.getChain({ chatId, headMessageId: head as string });
        expect(whole.nodes.map((node) => node.id)).toEqual(ids);
        expect(whole.nodes[1234]?.message).toEqual(
          textMessage(ids[1234] as string, `message ${ids[1234]}`),
        );
        for (const limit of [7, 500, 1_999]) {
          const paged = await readWholeChain(store, chatId, head as string, limit);
          expect(paged.ids).toEqual(ids);
          expect(paged.pages).toBe(Math.ceil(ids.length / limit));
        }
        const tail = await store.getChain({
          chatId,
          headMessageId: head as string,
          until: ids[1_899] as string,
        });
        expect(tail.nodes.map((node) => node.id)).toEqual(ids.slice(1_900));
        expect(tail.reachedUntil).toBe(true);
      },
      slowTimeout,
    );
  });
}
