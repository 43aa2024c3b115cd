import { LiveReplyLostError, LiveReplyOffsetError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { askWithLiveReply, liveOrSkip, textChunks } from './live-reply-harness';
import { expectRejection, openFreshChat, type StoreHarness, uniqueId } from './store-harness';

/**
 * Live replies (`capabilities.liveReplies`) while they stream: chunks appended at an offset and
 * read from any offset, the lease (renewed by each append, taken over once it ran out by the
 * store's clock, by one of concurrent takers) and stop marks.
 */
export function defineLiveReplyStreamTests(harness: StoreHarness): void {
  const { timeout, slowTimeout, clock } = harness;

  describe('live replies: chunks, leases and stops', () => {
    it(
      'appends chunks at their offset, refuses any other offset, and reads from any offset',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner } = await askWithLiveReply(store, chatId);
        const first = await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 2),
          leaseMs: 60_000,
        });
        expect(first).toMatchObject({ chunkCount: 2, stopRequested: false });
        const odd = [
          { type: 'data-x', data: { '': 'empty key', n: -1.5e-7, e: 'a\u2028b' } },
          7,
          'text',
          null,
        ];
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 2,
          chunks: odd,
          leaseMs: 60_000,
        });
        const all = [...textChunks(0, 2), ...odd];
        const before = await live.readReply({ chatId, replyId });
        expect(before?.chunks).toEqual(all);
        expect(before?.record.chunkCount).toBe(6);
        for (const from of [0, 1, 2, 3, 5, 6, 7, 1000])
          expect((await live.readReply({ chatId, replyId, from }))?.chunks, `from ${from}`).toEqual(
            all.slice(from),
          );
        for (const from of [0, 5, 7]) {
          const error = await expectRejection(
            () =>
              live.appendReplyChunks({
                chatId,
                replyId,
                owner,
                from,
                chunks: textChunks(100, 1),
                leaseMs: 60_000,
              }),
            LiveReplyOffsetError,
          );
          expect(error).toMatchObject({ chatId, replyId, from, chunkCount: 6 });
        }
        expect(await live.readReply({ chatId, replyId }), 'nothing was written').toEqual(before);
        const many = textChunks(6, 500);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 6,
          chunks: many,
          leaseMs: 60_000,
        });
        const long = await live.readReply({ chatId, replyId, from: 250 });
        expect(long?.chunks).toEqual([...all, ...many].slice(250));
      },
      timeout,
    );

    it(
      'reads a page of at most `limit` chunks from any offset, across and inside batches',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner } = await askWithLiveReply(store, chatId);
        // Batches of 3, 1, 5 and 300 chunks.
        let from = 0;
        for (const count of [3, 1, 5, 300]) {
          await live.appendReplyChunks({
            chatId,
            replyId,
            owner,
            from,
            chunks: textChunks(from, count),
            leaseMs: 60_000,
          });
          from += count;
        }
        const all = textChunks(0, from);
        for (const [start, limit] of [
          [0, 0],
          [0, 1],
          [0, 3],
          [1, 3],
          [2, 4],
          [4, 5],
          [3, 7],
          [9, 256],
          [100, 256],
          [300, 256],
          [308, 5],
          [309, 5],
          [1000, 10],
        ] as const) {
          const page = await live.readReply({ chatId, replyId, from: start, limit });
          expect(page?.chunks, `from ${start}, limit ${limit}`).toEqual(
            all.slice(start, start + limit),
          );
          expect(page?.record.chunkCount).toBe(from);
        }
        // Page by page, the whole reply.
        const paged: unknown[] = [];
        for (let offset = 0; ; ) {
          const page = await live.readReply({ chatId, replyId, from: offset, limit: 256 });
          const chunks = page?.chunks ?? [];
          paged.push(...chunks);
          offset += chunks.length;
          if (chunks.length < 256) break;
        }
        expect(paged).toEqual(all);
      },
      timeout,
    );

    it(
      'an append renews the lease from the store clock; an empty batch only renews it',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner } = await askWithLiveReply(store, chatId, { leaseMs: 1000 });
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 1),
          leaseMs: 1000,
        });
        clock.advance(10_000);
        const earliest = clock.now();
        const renewed = await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 1,
          chunks: [],
          leaseMs: 2000,
        });
        expect(renewed.chunkCount).toBe(1);
        expect(renewed.leaseExpiresAt).toBeGreaterThanOrEqual(earliest + 2000);
        expect(renewed.leaseExpiresAt).toBeLessThanOrEqual(clock.now() + 2000);
        const read = await live.readReply({ chatId, replyId });
        expect(read?.record.leaseExpiresAt).toBe(renewed.leaseExpiresAt);
        expect(read?.chunks).toEqual(textChunks(0, 1));
        // A renewed lease has not run out: no one may take the reply.
        expect(
          await live.takeOverReply({ chatId, replyId, owner: 'taker', leaseMs: 1000 }),
        ).toBeNull();
      },
      timeout,
    );

    it(
      'a stop mark is seen by the writer’s next append; stopping is idempotent and may name no reply',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const one = await askWithLiveReply(store, chatId);
        const two = await askWithLiveReply(store, chatId);
        const before = await live.getLiveState(chatId);
        const marked = await live.stopReply({ chatId, replyId: one.replyId });
        expect(marked).toHaveLength(1);
        expect(marked[0]?.replyId).toBe(one.replyId);
        const stoppedAt = marked[0]?.stopRequestedAt;
        expect(typeof stoppedAt).toBe('number');
        const afterStop = await live.getLiveState(chatId);
        expect(afterStop.changeRevision).toBeGreaterThan(before.changeRevision);
        const appended = await live.appendReplyChunks({
          chatId,
          replyId: one.replyId,
          owner: one.owner,
          from: 0,
          chunks: textChunks(0, 1),
          leaseMs: 60_000,
        });
        expect(appended.stopRequested, 'the writer learns of the stop').toBe(true);
        const other = await live.appendReplyChunks({
          chatId,
          replyId: two.replyId,
          owner: two.owner,
          from: 0,
          chunks: [],
          leaseMs: 60_000,
        });
        expect(other.stopRequested, 'the other reply was not asked').toBe(false);
        clock.advance(5000);
        const again = await live.stopReply({ chatId, replyId: one.replyId });
        expect(again[0]?.stopRequestedAt, 'the first mark is kept').toBe(stoppedAt);
        expect((await live.getLiveState(chatId)).changeRevision, 'nothing new was marked').toBe(
          afterStop.changeRevision,
        );
        const all = await live.stopReply({ chatId });
        expect(all.map((record) => record.replyId)).toEqual([one.replyId, two.replyId]);
        expect(all.every((record) => record.stopRequestedAt !== null)).toBe(true);
        expect(await live.stopReply({ chatId, replyId: uniqueId('unknown') })).toEqual([]);
      },
      timeout,
    );

    it(
      'takes a reply over only once its lease ran out by the store clock, and the old owner is refused',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner } = await askWithLiveReply(store, chatId, { leaseMs: 60_000 });
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 3),
          leaseMs: 60_000,
        });
        expect(
          await live.takeOverReply({ chatId, replyId, owner: 'taker', leaseMs: 1000 }),
        ).toBeNull();
        expect(
          await live.takeOverReply({
            chatId,
            replyId: uniqueId('unknown'),
            owner: 'taker',
            leaseMs: 1000,
          }),
        ).toBeNull();
        const before = await live.getLiveState(chatId);
        clock.advance(60_001);
        const taken = await live.takeOverReply({ chatId, replyId, owner: 'taker', leaseMs: 7000 });
        expect(
          taken,
          'the lease ran out by the clock the kit gave createStore: does the store use it?',
        ).not.toBeNull();
        expect(taken?.record).toMatchObject({ replyId, owner: 'taker', chunkCount: 3 });
        expect(taken?.record.leaseExpiresAt).toBeGreaterThanOrEqual(clock.now() - 1000 + 7000);
        expect(taken?.chunks).toEqual(textChunks(0, 3));
        expect((await live.getLiveState(chatId)).changeRevision).toBeGreaterThan(
          before.changeRevision,
        );
        const lost = await expectRejection(
          () =>
            live.appendReplyChunks({
              chatId,
              replyId,
              owner,
              from: 3,
              chunks: textChunks(3, 1),
              leaseMs: 1000,
            }),
          LiveReplyLostError,
        );
        expect(lost).toMatchObject({ chatId, replyId, owner, currentOwner: 'taker' });
        await expectRejection(() => live.endReply({ chatId, replyId, owner }), LiveReplyLostError);
        expect((await live.readReply({ chatId, replyId }))?.record.chunkCount).toBe(3);
        // The new owner holds it: a second taker is refused until its lease runs out too.
        expect(
          await live.takeOverReply({ chatId, replyId, owner: 'third', leaseMs: 1000 }),
        ).toBeNull();
      },
      timeout,
    );

    it(
      'of concurrent takers of an expired reply, exactly one gets it',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId } = await askWithLiveReply(store, chatId, { leaseMs: 1000 });
        clock.advance(1001);
        const takers = Array.from({ length: 8 }, (_, index) => `taker-${index}`);
        const results = await Promise.all(
          takers.map((owner) => live.takeOverReply({ chatId, replyId, owner, leaseMs: 60_000 })),
        );
        const winners = results.filter((result) => result !== null);
        expect(winners).toHaveLength(1);
        const record = (await live.readReply({ chatId, replyId }))?.record;
        expect(record?.owner).toBe(winners[0]?.record.owner);
      },
      slowTimeout,
    );
  });
}
