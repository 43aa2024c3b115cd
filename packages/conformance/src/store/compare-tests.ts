import type { ContextStore, MessageNodeRecord } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  openFreshChat,
  type StoreHarness,
  sequentialIds,
  uniqueId,
} from './store-harness';

/** A branch's chain read page by page from its head, newest first, as a comparison reads it. */
async function pageChain(
  store: ContextStore,
  chatId: string,
  branch: string,
  pageSizes: readonly number[],
): Promise<{ newestFirst: MessageNodeRecord[]; pages: number; done: boolean }> {
  const head = await store.getBranch({ chatId, name: branch });
  let cursor = head?.headMessageId ?? null;
  const newestFirst: MessageNodeRecord[] = [];
  let pages = 0;
  for (const limit of pageSizes) {
    if (cursor === null) break;
    const page = await store.getChain({ chatId, headMessageId: cursor, limit });
    expect(page.nodes.length).toBeLessThanOrEqual(limit);
    newestFirst.push(...page.nodes.slice().reverse());
    cursor = page.nextCursor;
    pages += 1;
  }
  return { newestFirst, pages, done: cursor === null };
}

const ids = (nodes: readonly MessageNodeRecord[]): string[] => nodes.map((node) => node.id);

/**
 * Comparing branches (the engine's `compareBranches`) reads two branches' chains with
 * `getChain` paging, newest first, from the side whose oldest node read is newer, until one side
 * reads a node the other has read. These tests prove what that relies on, on every store (no
 * optional ability): pages follow `nextCursor` from any branch head back to the root, a shared
 * node is the same record from either branch, sequences grow along every chain, and an empty
 * branch or one grown from an empty branch shares nothing.
 */
export function defineCompareTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('paging two branches apart (what comparing branches relies on)', () => {
    it(
      'pages each branch from its head back to the root, newest first, the shared part alike',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, c, d, e, f] = sequentialIds(uniqueId('cmp'), 6);
        await appendMessages(store, chatId, [a, b, c, d] as string[]);
        await store.createBranch({ chatId, name: 'alt', headMessageId: b as string });
        await appendMessages(store, chatId, [e, f] as string[], 'alt');
        const main = await pageChain(store, chatId, 'main', [1, 2, 4, 8]);
        const alt = await pageChain(store, chatId, 'alt', [1, 2, 4, 8]);
        expect(main).toMatchObject({ pages: 3, done: true });
        expect(ids(main.newestFirst)).toEqual([d, c, b, a]);
        expect(ids(alt.newestFirst)).toEqual([f, e, b, a]);
        // The node where they part is one record, whichever branch reached it.
        expect(alt.newestFirst[2]).toEqual(main.newestFirst[2]);
        expect(main.newestFirst[2]).toMatchObject({ chatId, id: b, parentId: a });
        // Sequences grow along every chain, so the newer side's oldest node is never shared yet.
        for (const chain of [main.newestFirst, alt.newestFirst])
          for (let index = 1; index < chain.length; index += 1)
            expect((chain[index] as MessageNodeRecord).sequence).toBeLessThan(
              (chain[index - 1] as MessageNodeRecord).sequence,
            );
      },
      timeout,
    );

    it(
      'gives an empty branch no chain, and a branch grown from an empty one a root of its own',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, c, r1, r2] = sequentialIds(uniqueId('cmp'), 5);
        await appendMessages(store, chatId, [a, b, c] as string[]);
        await store.createBranch({ chatId, name: 'empty', headMessageId: null });
        expect(await pageChain(store, chatId, 'empty', [8])).toEqual({
          newestFirst: [],
          pages: 0,
          done: true,
        });
        await store.createBranch({ chatId, name: 'island', headMessageId: null });
        await appendMessages(store, chatId, [r1, r2] as string[], 'island');
        const island = await pageChain(store, chatId, 'island', [8]);
        expect(ids(island.newestFirst)).toEqual([r2, r1]);
        expect(island.newestFirst.at(-1)?.parentId).toBeNull();
        expect(await store.getBranch({ chatId, name: uniqueId('no-such-branch') })).toBeNull();
      },
      timeout,
    );

    it(
      'reaches where two long branches part in a few small pages, not the shared history',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const prefix = uniqueId('long');
        const shared = sequentialIds(prefix, 600);
        for (let start = 0; start < shared.length; start += 100)
          await appendMessages(store, chatId, shared.slice(start, start + 100));
        const fork = shared.at(-1) as string;
        await store.createBranch({ chatId, name: 'alt', headMessageId: fork });
        const mainOwn = sequentialIds(`${prefix}-m`, 3);
        const altOwn = sequentialIds(`${prefix}-a`, 5);
        await appendMessages(store, chatId, mainOwn);
        await appendMessages(store, chatId, altOwn, 'alt');
        const main = await pageChain(store, chatId, 'main', [8]);
        const alt = await pageChain(store, chatId, 'alt', [8]);
        expect(main.done || alt.done).toBe(false);
        expect(ids(main.newestFirst)).toEqual([
          ...mainOwn.slice().reverse(),
          ...shared.slice(-5).reverse(),
        ]);
        expect(ids(alt.newestFirst)).toEqual([
          ...altOwn.slice().reverse(),
          ...shared.slice(-3).reverse(),
        ]);
        // The first page of each side already holds the fork, as the same record.
        const fromMain = main.newestFirst.find((node) => node.id === fork);
        expect(fromMain).toBeDefined();
        expect(alt.newestFirst.find((node) => node.id === fork)).toEqual(fromMain);
      },
      slowTimeout,
    );
  });
}
