import {
  type ContextStore,
  ENDED_REPLY_GRACE,
  LiveReplyConflictError,
  LiveReplyLostError,
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
 * The end of a live reply (`capabilities.liveReplies`): the final save and the end of the record
 * in one commit (a reader finds the reply live or saved, never both and never neither), an end
 * without a save, and the grace period after it: an ended reply stays readable with its chunks
 * (so a reader that was behind reads its last ones) but is no longer live, reads as never
 * started once the grace period is over, and is replaced by a new start of its id.
 */
export function defineLiveReplyEndTests(harness: StoreHarness): void {
  const { timeout, slowTimeout, clock } = harness;

  describe('live replies: the end of a reply', () => {
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
        const ended = await live.readReply({ chatId, replyId });
        expect(ended?.record.endedAt, 'the record is marked ended').not.toBeNull();
        expect(ended?.chunks, 'its chunks stay readable').toEqual(textChunks(0, 4));
        const after = await live.getLiveState(chatId);
        expect(after.replies).toEqual([]);
        expect(after.changeRevision).toBeGreaterThan(before.changeRevision);
        expect((await store.getMessage({ chatId, messageId: replyId }))?.message.parts).toEqual([
          { type: 'text', text: 'the whole reply' },
        ]);
        // The same reply id may be live again later (a continuation of the saved reply): the ended
        // record is replaced, its chunks dropped.
        await live.startReply({
          chatId,
          replyId,
          branch: 'main',
          afterNodeId: questionId,
          owner: 'continuer',
          leaseMs: 1000,
        });
        const again = await live.readReply({ chatId, replyId });
        expect(again?.record).toMatchObject({ chunkCount: 0, endedAt: null, owner: 'continuer' });
        expect(again?.chunks).toEqual([]);
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
        const ended = await live.readReply({ chatId, replyId });
        expect(ended?.record.endedAt, 'the record is marked ended').not.toBeNull();
        expect(ended?.chunks, 'its chunks stay readable').toEqual(textChunks(0, 2));
        const after = await live.getLiveState(chatId);
        expect(after.replies).toEqual([]);
        expect(after.changeRevision).toBeGreaterThan(before.changeRevision);
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
                // live: once saved, it is not live (it reads as ended, with its chunks).
                const live = await readerLive.readReply({ chatId, replyId });
                const saved = await reader.getMessage({ chatId, messageId: replyId });
                if (live === null || live.record.endedAt !== null)
                  expect(saved, 'ended but not saved').not.toBeNull();
                const savedFirst = await reader.getMessage({ chatId, messageId: replyId });
                const liveAfter = await readerLive.readReply({ chatId, replyId });
                if (savedFirst !== null && liveAfter !== null)
                  expect(liveAfter.record.endedAt, 'saved and still live').not.toBeNull();
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
      'an ended reply stays readable with its chunks for the grace period, and is no longer live',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner, questionId } = await askWithLiveReply(store, chatId, {
          leaseMs: 1000,
        });
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 3),
          leaseMs: 1000,
        });
        const earliest = clock.now();
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: questionId,
          messages: [replyMessage(replyId, 'the reply')],
          endReply: { replyId, owner },
        });
        const ended = await live.readReply({ chatId, replyId });
        expect(ended?.record).toMatchObject({ replyId, owner, chunkCount: 3 });
        expect(ended?.record.endedAt, 'endedAt comes from the store clock').toBeGreaterThanOrEqual(
          earliest,
        );
        expect(ended?.record.endedAt).toBeLessThanOrEqual(clock.now());
        expect(ended?.chunks).toEqual(textChunks(0, 3));
        // A reader that was behind reads from where it was.
        expect((await live.readReply({ chatId, replyId, from: 2 }))?.chunks).toEqual(
          textChunks(2, 1),
        );
        const state = await live.getLiveState(chatId);
        expect(state.replies, 'an ended reply is not live').toEqual([]);
        expect(await live.stopReply({ chatId }), 'nothing to stop').toEqual([]);
        expect(await live.stopReply({ chatId, replyId })).toEqual([]);
        expect((await live.getLiveState(chatId)).changeRevision, 'nothing was marked').toBe(
          state.changeRevision,
        );
        clock.advance(1001);
        expect(
          await live.takeOverReply({ chatId, replyId, owner: 'taker', leaseMs: 1000 }),
          'an ended reply is not taken over, whatever its lease',
        ).toBeNull();
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
        expect(lost).toMatchObject({ chatId, replyId, owner, currentOwner: null });
        await expectRejection(() => live.endReply({ chatId, replyId, owner }), LiveReplyLostError);
        const graph = await snapshot(store, chatId);
        await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: replyId,
              messages: [replyMessage(uniqueId('reply'), 'a second save')],
              endReply: { replyId, owner },
            }),
          LiveReplyLostError,
        );
        expect(await snapshot(store, chatId), 'the second save wrote nothing').toEqual(graph);
        // Half the shortest grace period after its end (the clock also follows real time).
        clock.advance(ENDED_REPLY_GRACE.minMs / 2 - 1001);
        const later = await live.readReply({ chatId, replyId });
        expect(later?.chunks, 'still readable within the shortest grace period').toEqual(
          textChunks(0, 3),
        );
        expect(later?.record.endedAt).toBe(ended?.record.endedAt);
      },
      timeout,
    );

    it(
      'an ended reply reads as never started once the grace period is over, also after later ends',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const first = await askWithLiveReply(store, chatId);
        await live.appendReplyChunks({
          chatId,
          replyId: first.replyId,
          owner: first.owner,
          from: 0,
          chunks: textChunks(0, 2),
          leaseMs: 60_000,
        });
        await live.endReply({ chatId, replyId: first.replyId, owner: first.owner });
        expect((await live.readReply({ chatId, replyId: first.replyId }))?.chunks).toHaveLength(2);
        clock.advance(ENDED_REPLY_GRACE.maxMs + 1);
        expect(
          await live.readReply({ chatId, replyId: first.replyId }),
          'past the longest grace period, by the clock the kit gave createStore',
        ).toBeNull();
        // Another reply's end (the write that deletes replies whose grace is over) changes
        // nothing a reader sees but that.
        const second = await askWithLiveReply(store, chatId);
        await live.endReply({ chatId, replyId: second.replyId, owner: second.owner });
        expect(await live.readReply({ chatId, replyId: first.replyId })).toBeNull();
        expect(
          (await live.readReply({ chatId, replyId: second.replyId }))?.record.endedAt,
        ).not.toBeNull();
        expect((await live.getLiveState(chatId)).replies).toEqual([]);
        await live.startReply({
          chatId,
          replyId: first.replyId,
          branch: 'main',
          afterNodeId: null,
          owner: 'again',
          leaseMs: 1000,
        });
        expect(await live.readReply({ chatId, replyId: first.replyId })).toMatchObject({
          record: { chunkCount: 0, endedAt: null, owner: 'again' },
          chunks: [],
        });
      },
      timeout,
    );

    it(
      'a start of an ended reply’s id replaces it, by startReply or by a commit; a live one is still refused',
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
          chunks: textChunks(0, 5),
          leaseMs: 60_000,
        });
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: questionId,
          messages: [replyMessage(replyId, 'asks for a tool result')],
          endReply: { replyId, owner },
        });
        const before = await live.getLiveState(chatId);
        // A continuation of the saved reply: its live record starts again under its id.
        const again = await live.startReply({
          chatId,
          replyId,
          branch: null,
          afterNodeId: replyId,
          owner: 'continuer',
          leaseMs: 60_000,
          data: { continues: true },
        });
        expect(again).toMatchObject({ chunkCount: 0, endedAt: null, owner: 'continuer' });
        expect((await live.getLiveState(chatId)).replies).toEqual([again]);
        expect((await live.getLiveState(chatId)).changeRevision).toBeGreaterThan(
          before.changeRevision,
        );
        expect(
          (await live.readReply({ chatId, replyId }))?.chunks,
          'the old chunks are gone',
        ).toEqual([]);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner: 'continuer',
          from: 0,
          chunks: textChunks(100, 2),
          leaseMs: 60_000,
        });
        expect((await live.readReply({ chatId, replyId }))?.chunks).toEqual(textChunks(100, 2));
        await expectRejection(
          () =>
            live.startReply({
              chatId,
              replyId,
              branch: null,
              afterNodeId: replyId,
              owner: 'second tab',
              leaseMs: 60_000,
            }),
          LiveReplyConflictError,
        );
        await live.endReply({ chatId, replyId, owner: 'continuer' });
        // A commit's startReply replaces an ended reply of its id the same way.
        const question = uniqueId('question');
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: replyId,
          messages: [{ id: question, message: textMessage(question) }],
          startReply: { replyId, owner: 'committer', leaseMs: 60_000 },
        });
        expect(await live.readReply({ chatId, replyId })).toMatchObject({
          record: { chunkCount: 0, endedAt: null, owner: 'committer', afterNodeId: question },
          chunks: [],
        });
      },
      timeout,
    );

    it(
      'of concurrent starts of an ended reply’s id (two tabs answering its tool call), exactly one wins',
      async ({ skip }) => {
        const store = harness.store();
        liveOrSkip(store, skip);
        const race = async (stores: readonly ContextStore[]): Promise<void> => {
          const { chatId } = await openFreshChat(store);
          const { replyId, owner, questionId } = await askWithLiveReply(store, chatId);
          await liveOf(store).appendReplyChunks({
            chatId,
            replyId,
            owner,
            from: 0,
            chunks: textChunks(0, 3),
            leaseMs: 60_000,
          });
          await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: questionId,
            messages: [replyMessage(replyId, 'waits for a tool result')],
            endReply: { replyId, owner },
          });
          const attempts = Array.from({ length: 8 }, (_, index) =>
            liveOf(stores[index % stores.length] as ContextStore).startReply({
              chatId,
              replyId,
              branch: null,
              afterNodeId: replyId,
              owner: `tab-${index}`,
              leaseMs: 60_000,
            }),
          );
          const settled = await Promise.allSettled(attempts);
          const won = settled.filter((result) => result.status === 'fulfilled');
          for (const result of settled) {
            if (result.status === 'rejected')
              expect(LiveReplyConflictError.isInstance(result.reason), String(result.reason)).toBe(
                true,
              );
          }
          expect(won.length, 'one start wins').toBe(1);
          const winner = (won[0] as PromiseFulfilledResult<{ owner: string }>).value.owner;
          const read = await liveOf(store).readReply({ chatId, replyId });
          expect(read?.record).toMatchObject({ owner: winner, chunkCount: 0, endedAt: null });
          expect(read?.chunks).toEqual([]);
        };
        await race([store]);
        if (store.capabilities.multiProcess === true && harness.options.reopenStore !== undefined)
          await harness.withReopened(store, (reopened) => race([store, reopened]));
      },
      slowTimeout,
    );
  });
}
