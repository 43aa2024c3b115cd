import { assistantText, user } from '@ctxgraph/codecs';
import {
  LiveReplyConflictError,
  LiveReplyLostError,
  UnsupportedCapabilityError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { LineRenderer, withoutOptionalCapabilities } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

const renderer = new LineRenderer();

describe('save({ startReply, endReply }): a live reply in the same store write', () => {
  it('starts the reply with the question and ends it with the answer, on a continued position', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({ store, chatId: 'live-1', userId: 'u', renderer });
    await engine.continueFrom(null, { activate: false });
    engine.set(user('Hello?', { id: 'q1' }));
    await engine.save({ startReply: { replyId: 'r1', owner: 'writer', leaseMs: 5_000 } });
    const live = await store.getLiveState?.('live-1');
    expect(live?.replies.map((reply) => [reply.replyId, reply.afterNodeId])).toEqual([
      ['r1', 'q1'],
    ]);
    engine.set(assistantText('Hi.', { id: 'r1' }));
    await engine.save({ endReply: { replyId: 'r1', owner: 'writer' } });
    expect((await store.getLiveState?.('live-1'))?.replies).toEqual([]);
    expect((await engine.resolve()).messages.map((message) => message.id)).toEqual(['q1', 'r1']);
  });

  it('writes nothing when the live part is refused: the messages stay pending', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({ store, chatId: 'live-2', userId: 'u', renderer });
    engine.set(user('Hello?', { id: 'q1' }));
    await engine.save({ startReply: { replyId: 'r1', owner: 'writer', leaseMs: 5_000 } });
    engine.set(user('Again?', { id: 'q2' }));
    await expect(
      engine.save({ startReply: { replyId: 'r1', owner: 'other', leaseMs: 5_000 } }),
    ).rejects.toSatisfy((error) => LiveReplyConflictError.isInstance(error));
    engine.set(assistantText('Hi.', { id: 'r2' }));
    await expect(engine.save({ endReply: { replyId: 'r9', owner: 'writer' } })).rejects.toSatisfy(
      (error) => LiveReplyLostError.isInstance(error),
    );
    const fresh = new ContextEngine({ store, chatId: 'live-2', userId: 'u', renderer });
    expect((await fresh.resolve()).messages.map((message) => message.id)).toEqual(['q1']);
    await engine.save();
    expect((await fresh.resolve()).messages.map((message) => message.id)).toEqual([
      'q1',
      'q2',
      'r2',
    ]);
  });

  it('is refused on a store without live replies, before anything is written', async () => {
    const memory = new InMemoryContextStore();
    const store = withoutOptionalCapabilities(memory);
    const engine = new ContextEngine({ store, chatId: 'live-3', userId: 'u', renderer });
    engine.set(user('Hello?', { id: 'q1' }));
    for (const [options, method] of [
      [{ startReply: { replyId: 'r1', owner: 'writer', leaseMs: 5_000 } }, 'save({ startReply })'],
      [{ endReply: { replyId: 'r1', owner: 'writer' } }, 'save({ endReply })'],
    ] as const) {
      const error = await engine.save(options).catch((caught: unknown) => caught);
      expect(UnsupportedCapabilityError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ capability: 'liveReplies' });
      expect((error as Error).message).toContain(method);
    }
    expect(await memory.getChat('live-3')).toBeNull();
    await engine.save();
    expect((await engine.resolve()).messages.map((message) => message.id)).toEqual(['q1']);
  });
});
