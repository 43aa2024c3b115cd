import type { ContextStore, StoredMessage } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { describe, expect, it } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

const text = (id: string, words: string): StoredMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text: words }],
});

/**
 * main: a → b → v (node `v` holds message `b`: a version whose node id is also used, on
 * another branch, as a message id). other: a → w, where node `w` holds message `v`.
 */
async function chatWithAnIdOfBothKinds(store: ContextStore): Promise<string> {
  const chatId = `rewind-target-${Math.random().toString(36).slice(2)}`;
  await store.openChat({ chatId, userId: 'u' });
  await store.commit({
    chatId,
    branch: 'main',
    expectedHeadId: null,
    messages: [
      { id: 'a', message: text('a', 'first') },
      { id: 'v', message: text('b', 'second') },
    ],
  });
  await store.commit({
    chatId,
    branch: 'main',
    expectedHeadId: 'a',
    fork: { from: 'main' },
    messages: [{ id: 'w', message: text('v', 'a message whose id is a node id') }],
  });
  return chatId;
}

describe.each([
  ['memory', () => new InMemoryContextStore()],
  ['SQLite', () => new SqliteContextStore(':memory:')],
] as const)('rewind(id) names the node a fresh engine would (%s)', (_name, makeStore) => {
  it('a node id on the engine path comes before a message id of that name elsewhere', async () => {
    const store = makeStore();
    const chatId = await chatWithAnIdOfBothKinds(store);
    const open = () =>
      new ContextEngine({ store, chatId, userId: 'u', renderer: new LineRenderer() });
    // On main, `v` is the node id of the head: a fresh engine and a warm one fork there.
    const fresh = open();
    await fresh.rewind('v');
    expect((await fresh.resolve()).messages.map((message) => message.id)).toEqual(['a', 'b']);
    const warm = open();
    await warm.resolve();
    await warm.switchBranch('main');
    await warm.rewind('v');
    expect((await warm.resolve()).messages.map((message) => message.id)).toEqual(['a', 'b']);
    // On main-v2, node `v` is not on the path, and message `v` is (node `w`).
    const onOther = open();
    await onOther.switchBranch('main-v2');
    await onOther.rewind('v');
    expect((await onOther.resolve()).messages.map((message) => message.id)).toEqual(['a', 'v']);
    await store.close();
  });
});
