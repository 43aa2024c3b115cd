import { BranchNotFoundError, type ContextStore, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { type BranchesApart, readBranchesApart } from './common-ancestor';

// The algorithm's own cases (they ran in the conformance kit while it lived in fragments-core);
// the conformance kit now proves the `getChain` paging it relies on, on every store.

let store: ContextStore;
const chatId = 'chat-1';

beforeEach(async () => {
  store = new InMemoryContextStore();
  await store.openChat({ chatId, userId: 'user-1' });
});

async function append(ids: readonly string[], branch = 'main'): Promise<void> {
  const head = await store.getHead({ chatId, branch });
  await store.commit({
    chatId,
    branch,
    expectedHeadId: head.headMessageId,
    messages: ids.map((id) => ({
      id,
      message: { id, role: 'user', parts: [{ type: 'text', text: id }] },
    })),
  });
}

function ids(apart: BranchesApart): [string | null, string[], string[]] {
  return [
    apart.commonAncestor?.id ?? null,
    apart.left.messages.map((node) => node.id),
    apart.right.messages.map((node) => node.id),
  ];
}

const apart = (left: string, right: string): Promise<BranchesApart> =>
  readBranchesApart(store, { chatId, left, right });

describe('readBranchesApart', () => {
  it('finds the common ancestor and the messages unique to each side, oldest first', async () => {
    await append(['a', 'b', 'c', 'd']);
    await store.createBranch({ chatId, name: 'alt', headMessageId: 'b' });
    await append(['e', 'f'], 'alt');
    expect(ids(await apart('main', 'alt'))).toEqual(['b', ['c', 'd'], ['e', 'f']]);
    expect(ids(await apart('alt', 'main'))).toEqual(['b', ['e', 'f'], ['c', 'd']]);
    const result = await apart('main', 'alt');
    expect(result.left).toMatchObject({ branch: 'main', headMessageId: 'd' });
    expect(result.right).toMatchObject({ branch: 'alt', headMessageId: 'f' });
    expect(result.commonAncestor).toMatchObject({ chatId, id: 'b', parentId: 'a' });
  });

  it('handles a branch against itself, an ancestor, an empty branch and a separate root', async () => {
    await append(['a', 'b', 'c']);
    expect(ids(await apart('main', 'main'))).toEqual(['c', [], []]);
    await store.createBranch({ chatId, name: 'behind', headMessageId: 'a' });
    expect(ids(await apart('main', 'behind'))).toEqual(['a', ['b', 'c'], []]);
    expect(ids(await apart('behind', 'main'))).toEqual(['a', [], ['b', 'c']]);
    await store.createBranch({ chatId, name: 'empty', headMessageId: null });
    expect(ids(await apart('main', 'empty'))).toEqual([null, ['a', 'b', 'c'], []]);
    await store.createBranch({ chatId, name: 'island', headMessageId: null });
    await append(['r1', 'r2'], 'island');
    expect(ids(await apart('main', 'island'))).toEqual([null, ['a', 'b', 'c'], ['r1', 'r2']]);
  });

  it('reads only back to the meeting point, not the shared history', async () => {
    const shared = Array.from({ length: 600 }, (_, index) => `s-${String(index).padStart(5, '0')}`);
    for (let start = 0; start < shared.length; start += 100)
      await append(shared.slice(start, start + 100));
    const fork = shared.at(-1) as string;
    await store.createBranch({ chatId, name: 'alt', headMessageId: fork });
    await append(['m1', 'm2', 'm3']);
    await append(['a1', 'a2', 'a3', 'a4', 'a5'], 'alt');
    const result = await apart('main', 'alt');
    expect(ids(result)).toEqual([fork, ['m1', 'm2', 'm3'], ['a1', 'a2', 'a3', 'a4', 'a5']]);
    // A page past the meeting point at most on each side, never the 600 shared nodes.
    expect(result.nodesRead).toBeLessThan(60);
  });

  it('refuses an unknown branch with BranchNotFoundError and a non-object input', async () => {
    await expect(apart('main', 'no-such-branch')).rejects.toSatisfy(
      (error) => BranchNotFoundError.isInstance(error) && /no-such-branch/.test(String(error)),
    );
    await expect(readBranchesApart(store, null as never)).rejects.toThrow(ValidationError);
  });
});
