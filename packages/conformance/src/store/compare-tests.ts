import {
  type BranchComparison,
  BranchNotFoundError,
  type ContextStore,
  compareBranchChains,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRejection,
  openFreshChat,
  type StoreKit,
  sequentialIds,
  uniqueId,
} from './store-test-kit';

function ids(comparison: BranchComparison): [string | null, string[], string[]] {
  return [
    comparison.commonAncestor?.id ?? null,
    comparison.left.messages.map((node) => node.id),
    comparison.right.messages.map((node) => node.id),
  ];
}

function compare(
  store: ContextStore,
  chatId: string,
  left: string,
  right: string,
): Promise<BranchComparison> {
  return compareBranchChains(store, { chatId, left, right });
}

/**
 * Comparing branches (`compareBranchChains` over the store's `getChain` paging): the common
 * ancestor and the messages unique to each side, read only back to where the branches meet.
 * Every store runs it: it needs no optional ability.
 */
export function defineCompareTests(kit: StoreKit): void {
  const { timeout, slowTimeout } = kit;

  describe('comparing branches', () => {
    it(
      'finds the common ancestor and the messages unique to each side, oldest first',
      async () => {
        const store = kit.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, c, d, e, f] = sequentialIds(uniqueId('cmp'), 6);
        await appendMessages(store, chatId, [a, b, c, d] as string[]);
        await store.createBranch({ chatId, name: 'alt', headMessageId: b as string });
        await appendMessages(store, chatId, [e, f] as string[], 'alt');
        expect(ids(await compare(store, chatId, 'main', 'alt'))).toEqual([b, [c, d], [e, f]]);
        expect(ids(await compare(store, chatId, 'alt', 'main'))).toEqual([b, [e, f], [c, d]]);
        const comparison = await compare(store, chatId, 'main', 'alt');
        expect(comparison.left).toMatchObject({ branch: 'main', headMessageId: d });
        expect(comparison.right).toMatchObject({ branch: 'alt', headMessageId: f });
        expect(comparison.commonAncestor).toMatchObject({ chatId, id: b, parentId: a });
      },
      timeout,
    );

    it(
      'handles a branch against itself, an ancestor, an empty branch and a separate root',
      async () => {
        const store = kit.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, c, r1, r2] = sequentialIds(uniqueId('cmp'), 5);
        await appendMessages(store, chatId, [a, b, c] as string[]);
        expect(ids(await compare(store, chatId, 'main', 'main'))).toEqual([c, [], []]);
        await store.createBranch({ chatId, name: 'behind', headMessageId: a as string });
        expect(ids(await compare(store, chatId, 'main', 'behind'))).toEqual([a, [b, c], []]);
        expect(ids(await compare(store, chatId, 'behind', 'main'))).toEqual([a, [], [b, c]]);
        await store.createBranch({ chatId, name: 'empty', headMessageId: null });
        expect(ids(await compare(store, chatId, 'main', 'empty'))).toEqual([null, [a, b, c], []]);
        // A branch grown from an empty one has a root of its own: nothing is shared.
        await store.createBranch({ chatId, name: 'island', headMessageId: null });
        await appendMessages(store, chatId, [r1, r2] as string[], 'island');
        expect(ids(await compare(store, chatId, 'main', 'island'))).toEqual([
          null,
          [a, b, c],
          [r1, r2],
        ]);
      },
      timeout,
    );

    it(
      'reads only back to the meeting point, not the shared history',
      async () => {
        const store = kit.store();
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
        const comparison = await compare(store, chatId, 'main', 'alt');
        expect(ids(comparison)).toEqual([fork, mainOwn, altOwn]);
        // A page past the meeting point at most on each side, never the 600 shared nodes.
        expect(comparison.nodesRead).toBeLessThan(60);
      },
      slowTimeout,
    );

    it(
      'refuses an unknown branch with BranchNotFoundError',
      async () => {
        const store = kit.store();
        const { chatId } = await openFreshChat(store);
        const error = await expectRejection(
          () => compare(store, chatId, 'main', 'no-such-branch'),
          BranchNotFoundError,
        );
        expect(error.message).toContain('no-such-branch');
      },
      timeout,
    );
  });
}
