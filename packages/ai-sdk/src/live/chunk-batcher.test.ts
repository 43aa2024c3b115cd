import type {
  AppendReplyChunksInput,
  AppendReplyChunksResult,
  ChatChangeListener,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { ChunkBatcher } from './chunk-batcher';
import { type LiveSettings, liveStoreOf } from './live-settings';

/**
 * A memory store's live replies with the appends held until the test lets each go, and the
 * chat's feed listener in the test's hand: the order of a flush, a feed notice and a close is
 * the test's, not the machine's.
 */
async function heldLive() {
  const store = new InMemoryContextStore();
  await store.openChat({ chatId: 'c', userId: 'u' });
  const live = liveStoreOf(store);
  if (live === undefined) throw new Error('the memory store has live replies');
  await live.startReply({
    chatId: 'c',
    replyId: 'r',
    owner: 'o',
    leaseMs: 60_000,
    branch: 'main',
    afterNodeId: null,
  });
  const appends: AppendReplyChunksInput[] = [];
  const waiting: (() => void)[] = [];
  const listeners: ChatChangeListener[] = [];
  const settings: LiveSettings = {
    leaseMs: 60_000,
    flushMs: 60_000,
    store: {
      ...live,
      appendReplyChunks: async (input): Promise<AppendReplyChunksResult> => {
        appends.push(input);
        await new Promise<void>((resolve) => waiting.push(resolve));
        return live.appendReplyChunks(input);
      },
      watchChat: (_chatId, listener) => {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
    },
  };
  return { appends, waiting, listeners, settings };
}

describe('ChunkBatcher', () => {
  it('writes nothing after close: a renewal a feed notice queued behind the final flush does not race the save', async () => {
    const { appends, waiting, listeners, settings } = await heldLive();
    const batcher = new ChunkBatcher(
      settings,
      { chatId: 'c', replyId: 'r', owner: 'o' },
      0,
      () => {},
    );
    batcher.push({ type: 'text-delta', id: 't', delta: 'Hi' });
    const flushed = batcher.flush();
    await expect.poll(() => appends.length).toBe(1);
    // A change of the chat is announced while the final flush is under way.
    for (const listener of [...listeners]) listener({ type: 'chat', chatId: 'c' });
    waiting.shift()?.();
    await flushed;
    batcher.close();
    // Whatever was queued behind the flush has had its turn now.
    for (let round = 0; round < 10; round += 1) await Promise.resolve();
    waiting.shift()?.();
    for (let round = 0; round < 10; round += 1) await Promise.resolve();
    expect(appends.map((input) => input.chunks.length)).toEqual([1]);
  });

  it('renews the lease with an empty append when the feed announces a change (a stop asked for elsewhere)', async () => {
    const { appends, waiting, listeners, settings } = await heldLive();
    const batcher = new ChunkBatcher(
      settings,
      { chatId: 'c', replyId: 'r', owner: 'o' },
      0,
      () => {},
    );
    for (const listener of [...listeners]) listener({ type: 'chat', chatId: 'c' });
    await expect.poll(() => appends.length).toBe(1);
    expect(appends[0]?.chunks).toEqual([]);
    waiting.shift()?.();
    await batcher.flush();
    batcher.close();
  });
});
