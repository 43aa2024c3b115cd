import type { ChatChange } from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LiveWorker } from './__fixtures__/live-process';
import { adminClient, databaseUrl, dropSchema, randomSchema } from './__fixtures__/test-database';
import { PostgresContextStore, type PostgresContextStoreOptions } from './postgres-context-store';

const admin = adminClient();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

/** A migrated store over a fresh schema (dropped after the file). */
async function freshStore(
  options: Omit<PostgresContextStoreOptions, 'connectionString' | 'schema'> = {},
): Promise<PostgresContextStore> {
  const schema = randomSchema();
  schemas.push(schema);
  const store = new PostgresContextStore({ connectionString: databaseUrl(), schema, ...options });
  await store.migrate();
  return store;
}

/** The notices of one chat, and a wait for a condition re-checked after each (never a sleep). */
function probe(store: PostgresContextStore, chatId: string) {
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

const viaPgbouncer = inject('throughPgbouncer');

describe('live replies across processes on one schema', () => {
  // A poll a minute apart: after the first notice, only NOTIFY can wake the watcher in time.
  it.skipIf(viaPgbouncer)(
    'LISTEN wakes a watcher at once for a reply another process writes: its start, chunks, stop and save',
    async () => {
      const store = await freshStore({ changeFeed: { pollIntervalMs: 60_000 } });
      const chatId = 'shared';
      await store.openChat({ chatId, userId: 'worker' });
      const feed = probe(store, chatId);
      await feed.next(0);
      const worker = new LiveWorker(['serve', databaseUrl(), store.schema]);
      try {
        const reply = { chatId, replyId: 'reply-1', owner: 'worker-process' };
        const { questionId } = await worker.send({ op: 'ask', ...reply });
        await feed.until(async () => (await store.getLiveState(chatId)).replies.length === 1);

        let seen = feed.notices.length;
        await worker.send({ op: 'append', ...reply, from: 0, count: 3 });
        await feed.until(() =>
          feed.notices
            .slice(seen)
            .some(
              (notice) =>
                notice.type === 'chunks' && notice.replyId === 'reply-1' && notice.chunkCount === 3,
            ),
        );
        expect((await store.readReply({ chatId, replyId: 'reply-1', from: 2 }))?.chunks).toEqual([
          { type: 'text-delta', id: 'text-1', delta: 'chunk 2' },
        ]);

        await store.stopReply({ chatId, replyId: 'reply-1' });
        const appended = await worker.send({ op: 'append', ...reply, from: 3, count: 1 });
        expect(appended).toMatchObject({ chunkCount: 4, stopRequested: true });

        seen = feed.notices.length;
        await worker.send({ op: 'save', ...reply, after: questionId, text: 'four chunks' });
        await feed.next(seen);
        await feed.until(
          async () =>
            (await store.readReply({ chatId, replyId: 'reply-1' }))?.record.endedAt != null,
        );
        expect((await store.getLiveState(chatId)).replies).toEqual([]);
        expect((await store.getMessage({ chatId, messageId: 'reply-1' }))?.message.parts).toEqual([
          { type: 'text', text: 'four chunks' },
        ]);
      } finally {
        feed.stop();
        await worker.kill();
        await store.close();
      }
    },
    60_000,
  );

  it('without LISTEN (PgBouncer in transaction mode), the poll carries every notice', async () => {
    const store = await freshStore({ changeFeed: { listen: false, pollIntervalMs: 20 } });
    const other = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema: store.schema,
    });
    const chatId = 'polled';
    try {
      await store.openChat({ chatId, userId: 'u' });
      const feed = probe(store, chatId);
      await feed.next(0);
      const head = await other.commit({
        chatId,
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'q', message: { id: 'q', role: 'user', parts: [] } }],
        startReply: { replyId: 'r', owner: 'o', leaseMs: 60_000 },
      });
      await feed.until(async () => (await store.getLiveState(chatId)).replies.length === 1);
      const seen = feed.notices.length;
      await other.appendReplyChunks({
        chatId,
        replyId: 'r',
        owner: 'o',
        from: 0,
        chunks: [1, 2],
        leaseMs: 60_000,
      });
      await feed.until(() =>
        feed.notices
          .slice(seen)
          .some((notice) => notice.type === 'chunks' && notice.chunkCount === 2),
      );
      await other.commit({
        chatId,
        branch: 'main',
        expectedHeadId: head.headMessageId,
        messages: [{ id: 'r', message: { id: 'r', role: 'assistant', parts: [] } }],
        endReply: { replyId: 'r', owner: 'o' },
      });
      await feed.until(async () => (await store.getLiveState(chatId)).replies.length === 0);
      feed.stop();
    } finally {
      await other.close();
      await store.close();
    }
  }, 60_000);

  it('takes over the reply of a process that was killed, once its lease ran out, with every chunk it appended', async () => {
    const setup = await freshStore();
    const schema = setup.schema;
    await setup.close();
    const worker = new LiveWorker(['serve', databaseUrl(), schema]);
    const reply = { chatId: 'orphan', replyId: 'reply-1', owner: 'doomed' };
    let questionId: unknown;
    try {
      ({ questionId } = await worker.send({ op: 'ask', ...reply, leaseMs: 60_000 }));
      await worker.send({ op: 'append', ...reply, from: 0, count: 2 });
      await worker.send({ op: 'append', ...reply, from: 2, count: 3 });
    } finally {
      await worker.kill();
    }
    expect((await worker.exited).signal).toBe('SIGKILL');
    // A clock past the lease, instead of waiting a minute.
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      clock: () => Date.now() + 120_000,
    });
    try {
      const taken = await store.takeOverReply({ ...reply, owner: 'rescuer', leaseMs: 10_000 });
      expect(taken?.record).toMatchObject({ owner: 'rescuer', chunkCount: 5 });
      expect(taken?.chunks).toHaveLength(5);
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
              parts: [{ type: 'text', text: '5 chunks' }],
            },
          },
        ],
        endReply: { replyId: 'reply-1', owner: 'rescuer' },
      });
      const ended = await store.readReply({ chatId: 'orphan', replyId: 'reply-1' });
      expect(ended?.record.endedAt).not.toBeNull();
      expect(ended?.chunks).toHaveLength(5);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('keeps an ended reply readable for endedReplyGraceMs, then a later end deletes its rows (of any chat, through the partial index)', async () => {
    const clock = { now: 1_000_000 };
    const store = await freshStore({ clock: () => clock.now, endedReplyGraceMs: 30_000 });
    const count = async (table: string): Promise<number> => {
      const [row] = await admin.unsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "${store.schema}".${table}`,
      );
      return row?.n ?? -1;
    };
    const rows = async () => ({
      replies: await count('ctxgraph_live_replies'),
      chunks: await count('ctxgraph_live_chunks'),
    });
    try {
      for (const chatId of ['one', 'two']) await store.openChat({ chatId, userId: 'u' });
      const start = { branch: 'main', afterNodeId: null, owner: 'o', leaseMs: 1000 } as const;
      const stream = async (chatId: string, replyId: string): Promise<void> => {
        await store.startReply({ ...start, chatId, replyId });
        await store.appendReplyChunks({
          chatId,
          replyId,
          owner: 'o',
          from: 0,
          chunks: [1, 2],
          leaseMs: 1000,
        });
        await store.appendReplyChunks({
          chatId,
          replyId,
          owner: 'o',
          from: 2,
          chunks: [3],
          leaseMs: 1000,
        });
      };
      await stream('one', 'r1');
      await stream('two', 'r2');
      await store.endReply({ chatId: 'one', replyId: 'r1', owner: 'o' });
      expect(await rows()).toEqual({ replies: 2, chunks: 4 });
      clock.now += 29_999;
      expect((await store.readReply({ chatId: 'one', replyId: 'r1' }))?.chunks).toEqual([1, 2, 3]);
      clock.now += 1;
      expect(await store.readReply({ chatId: 'one', replyId: 'r1' })).toBeNull();
      expect(await rows(), 'nothing runs on a timer').toEqual({ replies: 2, chunks: 4 });
      // Another chat's end (here a commit that saves its reply) deletes r1.
      await store.commit({
        chatId: 'two',
        branch: 'main',
        expectedHeadId: null,
        messages: [
          {
            id: 'r2',
            message: { id: 'r2', role: 'assistant', parts: [{ type: 'text', text: '123' }] },
          },
        ],
        endReply: { replyId: 'r2', owner: 'o' },
      });
      expect(await rows(), 'r1 deleted, r2 kept for its own grace period').toEqual({
        replies: 1,
        chunks: 2,
      });
      expect((await store.readReply({ chatId: 'two', replyId: 'r2', from: 2 }))?.chunks).toEqual([
        3,
      ]);
      // A commit that starts r2 again replaces the ended record (its chunks go).
      await store.commit({
        chatId: 'two',
        branch: 'main',
        expectedHeadId: 'r2',
        messages: [
          { id: 'q', message: { id: 'q', role: 'user', parts: [{ type: 'text', text: '?' }] } },
        ],
        startReply: { replyId: 'r2', owner: 'again', leaseMs: 1000 },
      });
      expect(await store.readReply({ chatId: 'two', replyId: 'r2' })).toMatchObject({
        record: { owner: 'again', chunkCount: 0, endedAt: null, afterNodeId: 'q' },
        chunks: [],
      });
      expect(await rows()).toEqual({ replies: 1, chunks: 0 });
      // The purge reads the partial index on ended_at.
      await admin.unsafe('SET enable_seqscan = off');
      const plan = await admin.unsafe(
        `EXPLAIN SELECT chat_id, reply_id FROM "${store.schema}".ctxgraph_live_replies WHERE ended_at IS NOT NULL AND ended_at <= 5 ORDER BY ended_at LIMIT 100`,
      );
      const order = await admin.unsafe(
        `EXPLAIN SELECT max(start_order) FROM "${store.schema}".ctxgraph_live_replies WHERE chat_id = 'two' AND ended_at IS NULL`,
      );
      await admin.unsafe('RESET enable_seqscan');
      expect(JSON.stringify(plan)).toContain('ctxgraph_live_replies_ended_idx');
      // A start's next start order reads the live replies only, never the ended ones kept.
      expect(JSON.stringify(order)).toContain('ctxgraph_live_replies_live_idx');
    } finally {
      await store.close();
    }
  });

  for (const then of ['unsubscribe', 'close'] as const) {
    it.skipIf(viaPgbouncer)(
      `a watched store on the app's client lets its process exit once the last watcher leaves (${then})`,
      async () => {
        const store = await freshStore();
        await store.openChat({ chatId: 'idle', userId: 'u' });
        await store.close();
        // The worker ends its own client and returns: it exits only if the feed's LISTEN
        // connection and timers are gone.
        const worker = new LiveWorker(['watch', databaseUrl(), store.schema, 'idle', then]);
        try {
          expect(await worker.next()).toEqual({ done: true });
          expect(await worker.exited).toMatchObject({ code: 0, signal: null });
        } finally {
          await worker.kill();
        }
      },
      60_000,
    );
  }
});
