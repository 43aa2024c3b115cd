import type { ChatChange } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { LiveWorker } from './__fixtures__/live-process';
import { tempDirectory } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('live');
afterAll(() => temp.remove());

/** The notices of one chat, and a wait for a condition re-checked after each (never a sleep). */
function probe(store: SqliteContextStore, chatId: string) {
  const notices: ChatChange[] = [];
  let wake: (() => void)[] = [];
  const stop = store.watchChat(chatId, (change) => {
    notices.push(change);
    const waiting = wake;
    wake = [];
    for (const resolve of waiting) resolve();
  });
  const next = (count: number): Promise<void> =>
    notices.length > count ? Promise.resolve() : new Promise((resolve) => wake.push(resolve));
  return {
    notices,
    stop,
    next,
    async until(condition: () => Promise<boolean> | boolean): Promise<void> {
      for (;;) {
        const seen = notices.length;
        if (await condition()) return;
        await next(seen);
      }
    },
  };
}

describe('live replies across processes on one file', () => {
  it('follows a reply another process writes: its start, its chunks, a stop asked here, its save', async () => {
    const path = temp.file();
    const store = new SqliteContextStore(path);
    const chatId = 'shared';
    await store.openChat({ chatId, userId: 'worker' });
    const feed = probe(store, chatId);
    await feed.next(0);
    const worker = new LiveWorker(['serve', path]);
    try {
      const reply = { chatId, replyId: 'reply-1', owner: 'worker-process' };
      const { questionId } = await worker.send({ op: 'ask', ...reply });
      await feed.until(async () => (await store.getLiveState(chatId)).replies.length === 1);
      const live = await store.readReply({ chatId, replyId: 'reply-1' });
      expect(live?.record).toMatchObject({ owner: 'worker-process', afterNodeId: questionId });

      let seen = feed.notices.length;
      await worker.send({ op: 'append', ...reply, from: 0, count: 3 });
      await feed.until(() =>
        feed.notices
          .slice(seen)
          .some((notice) => notice.type === 'chunks' && notice.chunkCount === 3),
      );
      expect((await store.readReply({ chatId, replyId: 'reply-1', from: 1 }))?.chunks).toEqual([
        { type: 'text-delta', id: 'text-1', delta: 'chunk 1' },
        { type: 'text-delta', id: 'text-1', delta: 'chunk 2' },
      ]);

      // A stop asked in this process reaches the writer with its next append.
      await store.stopReply({ chatId, replyId: 'reply-1' });
      const appended = await worker.send({ op: 'append', ...reply, from: 3, count: 1 });
      expect(appended).toMatchObject({ chunkCount: 4, stopRequested: true });

      seen = feed.notices.length;
      await worker.send({ op: 'save', ...reply, after: questionId, text: 'chunk 0 to 3' });
      await feed.next(seen);
      await feed.until(
        async () => (await store.readReply({ chatId, replyId: 'reply-1' }))?.record.endedAt != null,
      );
      expect((await store.getLiveState(chatId)).replies).toEqual([]);
      // Ended and saved in one write: the notice that shows the end shows the save.
      expect((await store.getMessage({ chatId, messageId: 'reply-1' }))?.message.parts).toEqual([
        { type: 'text', text: 'chunk 0 to 3' },
      ]);
    } finally {
      feed.stop();
      await worker.kill();
      await store.close();
    }
  }, 60_000);

  it('takes over the reply of a process that was killed, once its lease ran out, with every chunk it appended', async () => {
    const path = temp.file();
    const worker = new LiveWorker(['serve', path]);
    const reply = { chatId: 'orphan', replyId: 'reply-1', owner: 'doomed' };
    let questionId: unknown;
    try {
      ({ questionId } = await worker.send({ op: 'ask', ...reply, leaseMs: 60_000 }));
      await worker.send({ op: 'append', ...reply, from: 0, count: 2 });
      await worker.send({ op: 'append', ...reply, from: 2, count: 2 });
    } finally {
      await worker.kill();
    }
    const exit = await worker.exited;
    expect(exit.signal).toBe('SIGKILL');

    // A clock past the lease, instead of waiting a minute.
    const store = new SqliteContextStore({ path, clock: () => Date.now() + 120_000 });
    try {
      const taken = await store.takeOverReply({ ...reply, owner: 'rescuer', leaseMs: 10_000 });
      expect(taken?.record).toMatchObject({ owner: 'rescuer', chunkCount: 4 });
      expect(taken?.chunks).toHaveLength(4);
      await store.commit({
        chatId: 'orphan',
        branch: 'main',
        expectedHeadId: questionId as string,
        messages: [
          {
            id: 'reply-1',
            message: {
              id: 'reply-1',
              role: 'assistant',
              parts: [{ type: 'text', text: '4 chunks' }],
            },
          },
        ],
        endReply: { replyId: 'reply-1', owner: 'rescuer' },
      });
      const ended = await store.readReply({ chatId: 'orphan', replyId: 'reply-1' });
      expect(ended?.record.endedAt).not.toBeNull();
      expect(ended?.chunks).toHaveLength(4);
      expect((await store.getHead({ chatId: 'orphan', branch: 'main' })).headMessageId).toBe(
        'reply-1',
      );
    } finally {
      await store.close();
    }
  }, 60_000);

  it('keeps an ended reply readable for endedReplyGraceMs, then a later end deletes its rows', async () => {
    const path = temp.file();
    const clock = { now: 1_000_000 };
    const store = new SqliteContextStore({
      path,
      clock: () => clock.now,
      endedReplyGraceMs: 30_000,
    });
    const raw = new Database(path, { readonly: true });
    const rows = () => ({
      replies: raw.prepare('SELECT count(*) FROM ctxgraph_live_replies').pluck().get(),
      chunks: raw.prepare('SELECT count(*) FROM ctxgraph_live_chunks').pluck().get(),
    });
    try {
      await store.openChat({ chatId: 'grace', userId: 'u' });
      const start = { chatId: 'grace', branch: 'main', afterNodeId: null, leaseMs: 1000 } as const;
      for (const replyId of ['r1', 'r2']) {
        await store.startReply({ ...start, replyId, owner: 'o' });
        await store.appendReplyChunks({
          chatId: 'grace',
          replyId,
          owner: 'o',
          from: 0,
          chunks: [1, 2],
          leaseMs: 1000,
        });
        await store.appendReplyChunks({
          chatId: 'grace',
          replyId,
          owner: 'o',
          from: 2,
          chunks: [3],
          leaseMs: 1000,
        });
      }
      await store.endReply({ chatId: 'grace', replyId: 'r1', owner: 'o' });
      expect(rows()).toEqual({ replies: 2, chunks: 4 });
      clock.now += 29_999;
      expect((await store.readReply({ chatId: 'grace', replyId: 'r1' }))?.chunks).toEqual([
        1, 2, 3,
      ]);
      clock.now += 1;
      expect(await store.readReply({ chatId: 'grace', replyId: 'r1' })).toBeNull();
      expect(rows(), 'nothing runs on a timer: the rows wait for a later end').toEqual({
        replies: 2,
        chunks: 4,
      });
      await store.endReply({ chatId: 'grace', replyId: 'r2', owner: 'o' });
      expect(rows(), 'r1 deleted, r2 kept for its own grace period').toEqual({
        replies: 1,
        chunks: 2,
      });
      expect((await store.readReply({ chatId: 'grace', replyId: 'r2', from: 2 }))?.chunks).toEqual([
        3,
      ]);
      // The purge reads the partial index on ended_at, never the live replies.
      const plan = raw
        .prepare(
          'EXPLAIN QUERY PLAN SELECT chat_id, reply_id FROM ctxgraph_live_replies WHERE ended_at IS NOT NULL AND ended_at <= ? ORDER BY ended_at LIMIT 100',
        )
        .all(0) as { detail: string }[];
      expect(plan.map((step) => step.detail).join(' ')).toContain('ctxgraph_live_replies_ended');
      // A start's next start order reads the live replies only, never the ended ones kept.
      const order = raw
        .prepare(
          'EXPLAIN QUERY PLAN SELECT max(start_order) FROM ctxgraph_live_replies WHERE chat_id = ? AND ended_at IS NULL',
        )
        .all('grace') as { detail: string }[];
      expect(order.map((step) => step.detail).join(' ')).toContain('ctxgraph_live_replies_live');
    } finally {
      raw.close();
      await store.close();
    }
  });

  for (const then of ['unsubscribe', 'close'] as const) {
    it(`a watched store lets its process exit once the last watcher leaves (${then})`, async () => {
      const path = temp.file();
      const setup = new SqliteContextStore(path);
      await setup.openChat({ chatId: 'idle', userId: 'u' });
      await setup.close();
      // The worker returns from main after this: it exits only if no timer of the feed is left.
      const worker = new LiveWorker(['watch', path, 'idle', then]);
      try {
        expect(await worker.next()).toEqual({ done: true });
        const exit = await worker.exited;
        expect(exit).toMatchObject({ code: 0, signal: null });
      } finally {
        // A worker kept alive by a timer would outlive the test: never leave it behind.
        await worker.kill();
      }
    }, 60_000);
  }
});
