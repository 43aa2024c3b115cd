import {
  ChatNotFoundError,
  type ContextStore,
  LiveReplyConflictError,
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
 * Live replies (`capabilities.liveReplies`), their records: a question and its reply's record in
 * one commit, a start without a message write, the record's key as the claim on the reply (one
 * of concurrent starts wins), the order they are listed in, the change revision, and their chat's
 * lifecycle. Chunks, leases and stops are in `live-reply-stream-tests.ts`, the end of a reply in
 * `live-reply-end-tests.ts`.
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
        expect(before).toEqual({ chatId, changeRevision: before.changeRevision, replies: [] });
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
          endedAt: null,
          data,
        });
        expect(record?.startedAt, 'startedAt comes from the store clock').toBeGreaterThanOrEqual(
          earliest,
        );
        expect(read?.chunks).toEqual([]);
        const state = await live.getLiveState(chatId);
        expect(state.replies).toEqual([record]);
        expect(state.changeRevision).toBeGreaterThan(before.changeRevision);
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
          endedAt: null,
          data: { continues: true },
        });
        const after = await live.getLiveState(chatId);
        expect(after.replies).toEqual([record]);
        expect(after.changeRevision).toBeGreaterThan(before.changeRevision);
        expect(await snapshot(store, chatId), 'no message was written').toEqual(graph);
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
        expect((await live.readReply({ chatId, replyId }))?.record.endedAt).not.toBeNull();
        expect((await live.getLiveState(chatId)).replies).toEqual([]);
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
      'the change revision only grows: commits, starts, stops, takeovers and ends each raise it',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const seen: number[] = [(await live.getLiveState(chatId)).changeRevision];
        const record = async (): Promise<void> => {
          seen.push((await live.getLiveState(chatId)).changeRevision);
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
        expect(seen.at(-1)).toBeGreaterThanOrEqual(head.revision);
      },
      timeout,
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
