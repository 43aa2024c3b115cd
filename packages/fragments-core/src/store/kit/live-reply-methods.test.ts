import { describe, expect, it } from 'vitest';
import { StoreError, ValidationError } from '../../errors/errors';
import { ENDED_REPLY_GRACE, type LiveReplyRecord } from '../live-replies';
import { stubDriver } from './__fixtures__/stub-driver';
import { CheckedContextStore } from './checked-context-store';
import type { ContextStoreDriver, LiveReplyDriver } from './context-store-driver';
import { chunksFrom, endedReplyGraceOption } from './live-reply-input';

// What the kit does around a driver's live-reply methods: the capability gates them and a
// commit's startReply / endReply, every input is checked before the driver is called, and
// watchChat answers synchronously under the closed-store rule.

const reply: LiveReplyRecord = {
  chatId: 'c',
  replyId: 'r',
  branch: 'main',
  afterNodeId: null,
  owner: 'o',
  leaseExpiresAt: 2,
  stopRequestedAt: null,
  chunkCount: 0,
  startedAt: 1,
  endedAt: null,
  data: {},
};

function driverOf(
  live: boolean,
  calls: { method: string; argument: unknown }[],
): ContextStoreDriver {
  const record =
    <T>(method: string, answer: T) =>
    (argument: unknown): T => {
      calls.push({ method, argument });
      return answer;
    };
  const liveMethods: Required<LiveReplyDriver> = {
    startReply: record('startReply', reply),
    appendReplyChunks: record('appendReplyChunks', {
      chunkCount: 1,
      leaseExpiresAt: 3,
      stopRequested: false,
    }),
    readReply: record('readReply', null),
    getLiveState: record('getLiveState', { chatId: 'c', changeRevision: 0, replies: [] }),
    stopReply: record('stopReply', []),
    takeOverReply: record('takeOverReply', null),
    endReply: record('endReply', undefined),
    watchChat: (chatId, listener) => {
      calls.push({ method: 'watchChat', argument: chatId });
      listener({ type: 'chat', chatId });
      return () => calls.push({ method: 'unwatch', argument: chatId });
    },
  };
  return stubDriver(
    {
      name: 'LiveStub',
      capabilities: { persistent: false, multiProcess: false, liveReplies: live },
      ...liveMethods,
    },
    calls,
  ).driver;
}

const question = [{ id: 'q', message: { id: 'q', role: 'user', parts: [] } }];

describe('live replies in the store kit', () => {
  it('exposes the live-reply methods exactly when the driver declares liveReplies', () => {
    const without = new CheckedContextStore(driverOf(false, []));
    const withLive = new CheckedContextStore(driverOf(true, []));
    for (const method of [
      'startReply',
      'appendReplyChunks',
      'readReply',
      'getLiveState',
      'stopReply',
      'takeOverReply',
      'endReply',
      'watchChat',
    ] as const) {
      expect(typeof without[method], method).toBe('undefined');
      expect(typeof withLive[method], method).toBe('function');
    }
  });

  it('refuses a driver that declares liveReplies without every method', () => {
    const { watchChat: _watch, takeOverReply: _take, ...partial } = driverOf(true, []);
    expect(() => new CheckedContextStore(partial as ContextStoreDriver)).toThrow(
      /takeOverReply: capabilities.liveReplies is true.*watchChat: capabilities.liveReplies is true/,
    );
  });

  it('refuses a commit with startReply or endReply on a store without liveReplies, before the driver', async () => {
    const calls: { method: string; argument: unknown }[] = [];
    const store = new CheckedContextStore(driverOf(false, calls));
    const base = { chatId: 'c', branch: 'main', expectedHeadId: null, messages: question };
    for (const extra of [
      { startReply: { replyId: 'r', owner: 'o', leaseMs: 1000 } },
      { endReply: { replyId: 'r', owner: 'o' } },
    ]) {
      const error = await store.commit({ ...base, ...extra }).catch((caught: unknown) => caught);
      expect(ValidationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/capabilities\.liveReplies/);
    }
    expect(calls).toEqual([]);
  });

  it('hands the driver checked, serialized copies (data and chunks as JSON text)', async () => {
    const calls: { method: string; argument: unknown }[] = [];
    const store = new CheckedContextStore(driverOf(true, calls));
    const data = { metadata: { model: 'm' } };
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: question,
      startReply: { replyId: 'r', owner: 'o', leaseMs: 1000, data },
    });
    const chunks = [{ type: 'text-delta', delta: 'a' }, 7];
    await store.appendReplyChunks?.({
      chatId: 'c',
      replyId: 'r',
      owner: 'o',
      from: 0,
      chunks,
      leaseMs: 500,
    });
    await store.readReply?.({ chatId: 'c', replyId: 'r' });
    await store.stopReply?.({ chatId: 'c' });
    expect(calls.map((call) => call.method)).toEqual([
      'commit',
      'appendReplyChunks',
      'readReply',
      'stopReply',
    ]);
    expect(calls[0]?.argument).toMatchObject({
      startReply: { replyId: 'r', owner: 'o', leaseMs: 1000, dataJson: JSON.stringify(data) },
    });
    expect(calls[0]?.argument).not.toHaveProperty('endReply');
    expect(calls[1]?.argument).toEqual({
      chatId: 'c',
      replyId: 'r',
      owner: 'o',
      from: 0,
      leaseMs: 500,
      count: 2,
      chunksJson: JSON.stringify(chunks),
    });
    expect(calls[2]?.argument).toEqual({ chatId: 'c', replyId: 'r', from: 0 });
    expect(calls[3]?.argument).toEqual({ chatId: 'c', replyId: undefined });
  });

  it('watchChat checks its input, answers synchronously, and is refused once closed', async () => {
    const calls: { method: string; argument: unknown }[] = [];
    const store = new CheckedContextStore(driverOf(true, calls));
    const watch = store.watchChat as NonNullable<typeof store.watchChat>;
    expect(() => watch('', () => {})).toThrow(ValidationError);
    expect(() => watch('c', 'listener' as never)).toThrow(/listener must be a function/);
    const notices: unknown[] = [];
    const stop = watch('c', (change) => notices.push(change));
    expect(notices).toEqual([{ type: 'chat', chatId: 'c' }]);
    stop();
    stop();
    expect(calls.filter((call) => call.method === 'unwatch')).toHaveLength(1);
    await store.close();
    expect(() => watch('c', () => {})).toThrow(StoreError);
    expect(() => watch('c', () => {})).toThrow(/closed/);
  });

  it('chunksFrom reads stored batches from any offset', () => {
    const batches = [
      { seq: 0, count: 2, json: '["a","b"]' },
      { seq: 2, count: 1, json: '["c"]' },
      { seq: 3, count: 3, json: '["d","e","f"]' },
    ];
    expect(chunksFrom(batches, 0)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(chunksFrom(batches, 1)).toEqual(['b', 'c', 'd', 'e', 'f']);
    expect(chunksFrom(batches, 4)).toEqual(['e', 'f']);
    expect(chunksFrom(batches, 6)).toEqual([]);
    expect(chunksFrom(batches.slice(2), 5)).toEqual(['f']);
  });

  it('endedReplyGraceOption: the default, the bounds, and a clear error naming the store', () => {
    expect(endedReplyGraceOption('S', undefined)).toBe(ENDED_REPLY_GRACE.defaultMs);
    expect(ENDED_REPLY_GRACE.defaultMs).toBe(60_000);
    expect(endedReplyGraceOption('S', ENDED_REPLY_GRACE.minMs)).toBe(30_000);
    expect(endedReplyGraceOption('S', ENDED_REPLY_GRACE.maxMs)).toBe(86_400_000);
    for (const bad of [29_999, 86_400_001, 45_000.5, Number.NaN, '60000', null, -1]) {
      expect(() => endedReplyGraceOption('MyStore', bad)).toThrow(ValidationError);
      expect(() => endedReplyGraceOption('MyStore', bad)).toThrow(
        /^MyStore: endedReplyGraceMs expected an integer of milliseconds from 30000 to 86400000/,
      );
    }
  });
});
