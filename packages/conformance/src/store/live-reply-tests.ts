import {
  ChatNotFoundError,
  type ContextStore,
  LiveReplyConflictError,
  LiveReplyLostError,
  LiveReplyOffsetError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  askWithLiveReply,
  liveOf,
  liveOrSkip,
  replyMessage,
  textChunks,
} from './live-reply-harness';
import {
  expectRejection,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/**
 * Live replies (`capabilities.liveReplies`): a question and its reply's record in one commit,
 * chunks appended at an offset and read from any offset, the lease (renewed by each append, taken
 * over once it ran out by the store's clock), stop marks, and the end of the reply in the same
 * commit as its save, so a reader finds it live or saved, never both and never neither.
 */
export function defineLiveReplyTests(harness: StoreHarness): void {
  const { timeout, slowTimeout, clock } = harness;

  describe('live replies', () => {
    it(
      'a commit with startReply writes the question and the live record in one write',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const before = await live.getLiveState(chatId);
        expect(before).toEqual({ chatId, changeVersion: before.changeVersion, replies: [] });
        const data = { metadata: { model: 'm-1', 'ключ 🔑': [1, null, { nested: true }] } };
        const earliest = clock.now();
        const started = await askWithLiveReply(store, chatId, { leaseMs: 30_000, data });
        expect(started.commit.headMessageId).toBe(started.questionId);
        const read = await live.readReply({ chatId, replyId: started.replyId });
        expect(read).not.toBeNull();
        const record = read?.record;
        expect(record).toEqual({
          chatId,
          replyId: started.replyId,
          branch: 'main',
          afterNodeId: started.questionId,
          owner: started.owner,
          leaseExpiresAt: (record?.startedAt ?? 0) + 30_000,
          stopRequestedAt: null,
          chunkCount: 0,
          startedAt: record?.startedAt,
          data,
        });
        expect(record?.startedAt, 'startedAt comes from the store clock').toBeGreaterThanOrEqual(
          earliest,
        );
        expect(read?.chunks).toEqual([]);
        const state = await live.getLiveState(chatId);
        expect(state.replies).toEqual([record]);
        expect(state.changeVersion).toBeGreaterThan(before.changeVersion);
        expect((await store.getMessage({ chatId, messageId: started.questionId }))?.id).toBe(
          started.questionId,
        );
      },
      timeout,
    );

    it(
      'a second start of a live reply is refused with LiveReplyConflictError and writes nothing',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const started = await askWithLiveReply(store, chatId);
        const graph = await snapshot(store, chatId);
        const state = await live.getLiveState(chatId);
        const again = uniqueId('question');
        const error = await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: started.questionId,
              messages: [{ id: again, message: textMessage(again) }],
              startReply: { replyId: started.replyId, owner: 'another', leaseMs: 1000 },
            }),
          LiveReplyConflictError,
        );
        expect(error).toMatchObject({ chatId, replyId: started.replyId });
        await expectRejection(
          () =>
            live.startReply({
              chatId,
              replyId: started.replyId,
              branch: 'main',
              afterNodeId: started.questionId,
              owner: 'another',
              leaseMs: 1000,
            }),
          LiveReplyConflictError,
        );
        expect(await snapshot(store, chatId), 'no message was written').toEqual(graph);
        expect(await live.getLiveState(chatId), 'the record is as it was').toEqual(state);
      },
      timeout,
    );

    it(
      'startReply starts a reply without a message write (a continuation)',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const question = uniqueId('question');
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: question, message: textMessage(question) }],
        });
        const graph = await snapshot(store, chatId);
        const before = await live.getLiveState(chatId);
        const replyId = uniqueId('reply');
        const record = await live.startReply({
          chatId,
          replyId,
          branch: null,
          afterNodeId: question,
          owner: 'continuer',
          leaseMs: 5000,
          data: { continues: true },
        });
        expect(record).toEqual({
          chatId,
          replyId,
          branch: null,
          afterNodeId: question,
          owner: 'continuer',
          leaseExpiresAt: record.startedAt + 5000,
          stopRequestedAt: null,
          chunkCount: 0,
          startedAt: record.startedAt,
          data: { continues: true },
        });
        const after = await live.getLiveState(chatId);
        expect(after.replies).toEqual([record]);
        expect(after.changeVersion).toBeGreaterThan(before.changeVersion);
        expect(await snapshot(store, chatId), 'no message was written').toEqual(graph);
      },
      timeout,
    );

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
        expect(afterStop.changeVersion).toBeGreaterThan(before.changeVersion);
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
        expect((await live.getLiveState(chatId)).changeVersion, 'nothing new was marked').toBe(
          afterStop.changeVersion,
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
        expect((await live.getLiveState(chatId)).changeVersion).toBeGreaterThan(
          before.changeVersion,
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

    it(
      'a commit with endReply saves the reply and ends its record in one write',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner, questionId } = await askWithLiveReply(store, chatId);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 4),
          leaseMs: 60_000,
        });
        const before = await live.getLiveState(chatId);
        const saved = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: questionId,
          messages: [replyMessage(replyId, 'the whole reply')],
          endReply: { replyId, owner },
        });
        expect(saved.headMessageId).toBe(replyId);
        expect(await live.readReply({ chatId, replyId })).toBeNull();
        const after = await live.getLiveState(chatId);
        expect(after.replies).toEqual([]);
        expect(after.changeVersion).toBeGreaterThan(before.changeVersion);
        expect((await store.getMessage({ chatId, messageId: replyId }))?.message.parts).toEqual([
          { type: 'text', text: 'the whole reply' },
        ]);
        // The same reply id may be live again later (a continuation of the saved reply).
        await live.startReply({
          chatId,
          replyId,
          branch: 'main',
          afterNodeId: questionId,
          owner: 'continuer',
          leaseMs: 1000,
        });
        expect((await live.readReply({ chatId, replyId }))?.record.chunkCount).toBe(0);
      },
      timeout,
    );

    it(
      'a commit with endReply by an owner that does not hold the reply writes nothing',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner, questionId } = await askWithLiveReply(store, chatId);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 2),
          leaseMs: 60_000,
        });
        const graph = await snapshot(store, chatId);
        const state = await live.getLiveState(chatId);
        const save = (by: string, reply: string, expectedHeadId: string | null) =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId,
            messages: [replyMessage(reply, 'not saved')],
            endReply: { replyId: reply, owner: by },
          });
        const error = await expectRejection(
          () => save('impostor', replyId, questionId),
          LiveReplyLostError,
        );
        expect(error).toMatchObject({ chatId, replyId, owner: 'impostor', currentOwner: owner });
        // The owner check comes before the head check.
        await expectRejection(
          () => save('impostor', replyId, uniqueId('stale')),
          LiveReplyLostError,
        );
        const unknown = uniqueId('reply');
        const notLive = await expectRejection(
          () => save(owner, unknown, questionId),
          LiveReplyLostError,
        );
        expect(notLive.currentOwner).toBeNull();
        expect(await snapshot(store, chatId), 'no message was written').toEqual(graph);
        expect(await live.getLiveState(chatId), 'the reply is still live').toEqual(state);
      },
      timeout,
    );

    it(
      'endReply ends a reply without a save, for its owner only',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner } = await askWithLiveReply(store, chatId);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 2),
          leaseMs: 60_000,
        });
        await expectRejection(
          () => live.endReply({ chatId, replyId, owner: 'impostor' }),
          LiveReplyLostError,
        );
        const graph = await snapshot(store, chatId);
        const before = await live.getLiveState(chatId);
        await live.endReply({ chatId, replyId, owner });
        expect(await live.readReply({ chatId, replyId })).toBeNull();
        const after = await live.getLiveState(chatId);
        expect(after.replies).toEqual([]);
        expect(after.changeVersion).toBeGreaterThan(before.changeVersion);
        expect(await snapshot(store, chatId), 'no message was written').toEqual(graph);
        await expectRejection(() => live.endReply({ chatId, replyId, owner }), LiveReplyLostError);
        await expectRejection(
          () =>
            live.appendReplyChunks({ chatId, replyId, owner, from: 2, chunks: [], leaseMs: 1000 }),
          LiveReplyLostError,
        );
      },
      timeout,
    );

    it(
      'lists live replies oldest start first, however their ids sort',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const ids = ['z-reply', 'a-reply', 'm-reply', '漢-reply', 'B-reply'];
        for (const replyId of ids) {
          await live.startReply({
            chatId,
            replyId,
            branch: 'main',
            afterNodeId: null,
            owner: 'o',
            leaseMs: 1000,
          });
        }
        expect((await live.getLiveState(chatId)).replies.map((record) => record.replyId)).toEqual(
          ids,
        );
        await live.endReply({ chatId, replyId: 'm-reply', owner: 'o' });
        await live.startReply({
          chatId,
          replyId: 'm-reply',
          branch: 'main',
          afterNodeId: null,
          owner: 'o',
          leaseMs: 1000,
        });
        expect((await live.getLiveState(chatId)).replies.map((record) => record.replyId)).toEqual([
          'z-reply',
          'a-reply',
          '漢-reply',
          'B-reply',
          'm-reply',
        ]);
      },
      timeout,
    );

    it(
      'a fork-commit starts and ends a reply on the branch it creates',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const root = uniqueId('root');
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: root, message: textMessage(root) }],
        });
        const question = uniqueId('question');
        const replyId = uniqueId('reply');
        const forked = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: root,
          messages: [{ id: question, message: textMessage(question) }],
          fork: { from: 'main' },
          startReply: { replyId, owner: 'o', leaseMs: 60_000 },
        });
        expect(forked.branch).toBe('main-v2');
        const record = (await live.readReply({ chatId, replyId }))?.record;
        expect(record).toMatchObject({ branch: 'main-v2', afterNodeId: question });
        const saved = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: question,
          messages: [replyMessage(replyId, 'answer')],
          fork: { from: 'main' },
          endReply: { replyId, owner: 'o' },
        });
        expect(saved.branch).toBe('main-v3');
        expect(await live.readReply({ chatId, replyId })).toBeNull();
      },
      timeout,
    );

    it(
      'deleting a chat deletes its live replies; a chat created again under its id has none',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId, userId } = await openFreshChat(store);
        const { replyId, owner } = await askWithLiveReply(store, chatId);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 3),
          leaseMs: 1000,
        });
        expect(await store.deleteChat(chatId)).toBe(true);
        await expectRejection(() => live.readReply({ chatId, replyId }), ChatNotFoundError);
        await store.openChat({ chatId, userId });
        expect(await live.readReply({ chatId, replyId })).toBeNull();
        expect((await live.getLiveState(chatId)).replies).toEqual([]);
        await live.startReply({
          chatId,
          replyId,
          branch: 'main',
          afterNodeId: null,
          owner,
          leaseMs: 1000,
        });
        expect((await live.readReply({ chatId, replyId }))?.chunks).toEqual([]);
      },
      timeout,
    );

    it(
      'every method refuses an unknown chat with ChatNotFoundError',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const chatId = uniqueId('missing-chat');
        const reply = { chatId, replyId: 'r', owner: 'o' };
        const calls: [string, () => Promise<unknown>][] = [
          [
            'startReply',
            () => live.startReply({ ...reply, branch: 'main', afterNodeId: null, leaseMs: 1000 }),
          ],
          [
            'appendReplyChunks',
            () => live.appendReplyChunks({ ...reply, from: 0, chunks: [], leaseMs: 1000 }),
          ],
          ['readReply', () => live.readReply(reply)],
          ['getLiveState', () => live.getLiveState(chatId)],
          ['stopReply', () => live.stopReply({ chatId })],
          ['takeOverReply', () => live.takeOverReply({ ...reply, leaseMs: 1000 })],
          ['endReply', () => live.endReply(reply)],
          [
            'commit with startReply',
            () =>
              store.commit({
                chatId,
                branch: 'main',
                expectedHeadId: null,
                messages: [{ id: 'q', message: textMessage('q') }],
                startReply: { replyId: 'r', owner: 'o', leaseMs: 1000 },
              }),
          ],
        ];
        for (const [name, call] of calls) {
          const error = await expectRejection(call, ChatNotFoundError).catch((failure: unknown) => {
            throw new Error(`${name}: ${String(failure)}`);
          });
          expect(error.chatId, name).toBe(chatId);
        }
        expect(await store.getChat(chatId)).toBeNull();
      },
      timeout,
    );

    it(
      'the change version only grows: commits, starts, stops, takeovers and ends each raise it',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const seen: number[] = [(await live.getLiveState(chatId)).changeVersion];
        const record = async (): Promise<void> => {
          seen.push((await live.getLiveState(chatId)).changeVersion);
        };
        const { replyId, owner, questionId } = await askWithLiveReply(store, chatId, {
          leaseMs: 1000,
        });
        await record();
        await live.stopReply({ chatId });
        await record();
        clock.advance(1001);
        await live.takeOverReply({ chatId, replyId, owner: 'taker', leaseMs: 1000 });
        await record();
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: questionId,
          messages: [replyMessage(replyId, 'interrupted')],
          endReply: { replyId, owner: 'taker' },
        });
        await record();
        await live.startReply({
          chatId,
          replyId,
          branch: 'main',
          afterNodeId: replyId,
          owner,
          leaseMs: 1000,
        });
        await record();
        await live.endReply({ chatId, replyId, owner });
        await record();
        for (let index = 1; index < seen.length; index += 1)
          expect(seen[index], `step ${index} of ${JSON.stringify(seen)}`).toBeGreaterThan(
            seen[index - 1] as number,
          );
        const head = await store.getHead({ chatId, branch: 'main' });
        expect(seen.at(-1)).toBeGreaterThanOrEqual(head.version);
      },
      timeout,
    );

    it(
      'a reader finds a reply live or saved, never both and never neither, while it is saved',
      async ({ skip }) => {
        const store = harness.store();
        liveOrSkip(store, skip);
        const run = async (writer: ContextStore, reader: ContextStore): Promise<void> => {
          const writerLive = liveOf(writer);
          const readerLive = liveOf(reader);
          const { chatId } = await openFreshChat(writer);
          const rounds = 6;
          for (let round = 0; round < rounds; round += 1) {
            const { replyId, owner, questionId } = await askWithLiveReply(writer, chatId);
            await writerLive.appendReplyChunks({
              chatId,
              replyId,
              owner,
              from: 0,
              chunks: textChunks(0, 3),
              leaseMs: 60_000,
            });
            let saving = true;
            const readers = Array.from({ length: 3 }, async () => {
              let reads = 0;
              while (saving || reads === 0) {
                reads += 1;
                // Live first, then saved: once ended, a reply stays saved. Saved first, then
                // live: once saved, it is not live.
                const live = await readerLive.readReply({ chatId, replyId });
                const saved = await reader.getMessage({ chatId, messageId: replyId });
                if (live === null) expect(saved, 'ended but not saved').not.toBeNull();
                const savedFirst = await reader.getMessage({ chatId, messageId: replyId });
                const liveAfter = await readerLive.readReply({ chatId, replyId });
                if (savedFirst !== null) expect(liveAfter, 'saved and still live').toBeNull();
              }
            });
            await writer.commit({
              chatId,
              branch: 'main',
              expectedHeadId: questionId,
              messages: [replyMessage(replyId, `reply ${round}`)],
              endReply: { replyId, owner },
            });
            saving = false;
            await Promise.all(readers);
          }
        };
        await run(store, store);
        if (harness.options.reopenStore !== undefined)
          await harness.withReopened(store, (reopened) => run(store, reopened));
      },
      slowTimeout,
    );

    it(
      'of concurrent starts of one reply (question commits and continuations), exactly one wins',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const race = async (stores: readonly ContextStore[]): Promise<void> => {
          const { chatId } = await openFreshChat(store);
          const root = uniqueId('root');
          await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: null,
            messages: [{ id: root, message: textMessage(root) }],
          });
          const replyId = uniqueId('reply');
          const attempts = Array.from({ length: 8 }, (_, index) => {
            const target = stores[index % stores.length] as ContextStore;
            const owner = `owner-${index}`;
            if (index % 2 === 0)
              return liveOf(target).startReply({
                chatId,
                replyId,
                branch: 'main',
                afterNodeId: root,
                owner,
                leaseMs: 60_000,
              });
            const question = uniqueId('question');
            // Fork-commits never conflict on the head, so only the live record decides.
            return target.commit({
              chatId,
              branch: 'main',
              expectedHeadId: root,
              messages: [{ id: question, message: textMessage(question) }],
              fork: { from: 'main' },
              startReply: { replyId, owner, leaseMs: 60_000 },
            });
          });
          const settled = await Promise.allSettled(attempts);
          const won = settled.filter((result) => result.status === 'fulfilled');
          const refused = settled.filter((result) => result.status === 'rejected');
          for (const result of refused) {
            const reason = (result as PromiseRejectedResult).reason;
            expect(LiveReplyConflictError.isInstance(reason), String(reason)).toBe(true);
          }
          expect(won.length, 'one start wins').toBe(1);
          expect((await live.getLiveState(chatId)).replies).toHaveLength(1);
        };
        await race([store]);
        if (store.capabilities.multiProcess === true && harness.options.reopenStore !== undefined)
          await harness.withReopened(store, (reopened) => race([store, reopened]));
      },
      slowTimeout,
    );
  });
}
