import { type ContextStore, StoreError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  askWithLiveReply,
  FeedProbe,
  type LiveStore,
  liveOf,
  liveOrSkip,
  replyMessage,
  textChunks,
} from './live-reply-harness';
import { appendMessages, openFreshChat, type StoreHarness, uniqueId } from './store-harness';

/**
 * The change feed (`watchChat`, with `capabilities.liveReplies`): a first notice once the store
 * watches the chat, then notices for commits, live starts, stops and ends and for appended chunks,
 * whichever store over the same data made them (another connection, as another process would),
 * and none once unsubscribed. Every wait is for a notice after which the state shows the change:
 * nothing here depends on timing.
 */
export function defineLiveFeedTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  /**
   * Watches a chat on `watcher` while `writer` (the same store or another over the same data)
   * commits, starts, appends, stops and ends, and waits for the notice after which each change
   * shows.
   */
  async function followChanges(watcher: ContextStore, writer: ContextStore): Promise<void> {
    const live = liveOf(watcher);
    const writerLive = liveOf(writer);
    const { chatId } = await openFreshChat(writer);
    const probe = new FeedProbe(live, chatId);
    try {
      await probe.ready();
      expect(probe.notices[0]).toEqual({ type: 'chat', chatId });
      const version = async (): Promise<number> => (await live.getLiveState(chatId)).changeRevision;
      const grows = async (change: () => Promise<unknown>, what: string): Promise<void> => {
        const before = await version();
        await change();
        await probe
          .until(async () => (await version()) > before)
          .catch((error: unknown) => {
            throw new Error(`${what}: ${String(error)}`);
          });
      };
      await grows(() => appendMessages(writer, chatId, [uniqueId('m')]), 'a commit');
      let started: Awaited<ReturnType<typeof askWithLiveReply>> | undefined;
      await grows(async () => {
        started = await askWithLiveReply(writer, chatId);
      }, 'a question with its live reply');
      const { replyId, owner, questionId } = started as NonNullable<typeof started>;
      expect((await live.getLiveState(chatId)).replies.map((record) => record.replyId)).toEqual([
        replyId,
      ]);
      const seen = probe.notices.length;
      await writerLive.appendReplyChunks({
        chatId,
        replyId,
        owner,
        from: 0,
        chunks: textChunks(0, 3),
        leaseMs: 60_000,
      });
      // A chunks notice carries the reply's count: wait for it, then read up to it.
      const counted = (): boolean =>
        probe.notices
          .slice(seen)
          .some(
            (notice) =>
              notice.type === 'chunks' && notice.replyId === replyId && notice.chunkCount === 3,
          );
      await probe.until(async () => counted());
      expect((await live.readReply({ chatId, replyId, from: 0 }))?.chunks).toEqual(
        textChunks(0, 3),
      );
      await grows(() => writerLive.stopReply({ chatId, replyId }), 'a stop');
      await grows(
        () =>
          writer.commit({
            chatId,
            branch: 'main',
            expectedHeadId: questionId,
            messages: [replyMessage(replyId, 'saved')],
            endReply: { replyId, owner },
          }),
        'the final save',
      );
      // The notice that shows the end shows the save too: never neither.
      expect((await live.readReply({ chatId, replyId }))?.record.endedAt).not.toBeNull();
      expect((await live.getLiveState(chatId)).replies).toEqual([]);
      expect((await watcher.getMessage({ chatId, messageId: replyId }))?.id).toBe(replyId);
      await grows(
        () =>
          writerLive.startReply({
            chatId,
            replyId: uniqueId('reply'),
            branch: null,
            afterNodeId: replyId,
            owner,
            leaseMs: 1000,
          }),
        'a continuation started',
      );
    } finally {
      probe.stop();
    }
  }

  describe('change feed', () => {
    it(
      'sends a first notice, then notices for commits, live starts, chunks, stops and ends',
      async ({ skip }) => {
        const store = harness.store();
        liveOrSkip(store, skip);
        await followChanges(store, store);
      },
      slowTimeout,
    );

    it(
      'reports changes made through another store over the same data (another connection)',
      async ({ skip }) => {
        const store = harness.store();
        liveOrSkip(store, skip);
        if (harness.options.reopenStore === undefined) skip('reopenStore was not given');
        await harness.withReopened(store, async (reopened) => {
          await followChanges(store, reopened);
          await followChanges(reopened, store);
        });
      },
      slowTimeout,
    );

    it(
      'each watcher gets its own notices, and an unsubscribed one gets none',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const other = await openFreshChat(store);
        const leaving = new FeedProbe(live, chatId);
        const staying = new FeedProbe(live, chatId);
        const elsewhere = new FeedProbe(live, other.chatId);
        try {
          await Promise.all([leaving.ready(), staying.ready(), elsewhere.ready()]);
          leaving.stop();
          leaving.stop();
          const left = leaving.notices.length;
          const quiet = elsewhere.notices.length;
          const before = (await live.getLiveState(chatId)).changeRevision;
          await askWithLiveReply(store, chatId);
          await staying.until(
            async () => (await live.getLiveState(chatId)).changeRevision > before,
          );
          // The staying watcher (subscribed after the leaving one) has its notice: the leaving
          // one would have had it by now.
          expect(leaving.notices.length, 'no notice after unsubscribing').toBe(left);
          expect(
            elsewhere.notices.slice(quiet).filter((notice) => notice.chatId === chatId),
            'another chat’s watcher hears nothing of this chat',
          ).toEqual([]);
          expect(staying.notices.every((notice) => notice.chatId === chatId)).toBe(true);
        } finally {
          staying.stop();
          elsewhere.stop();
        }
      },
      timeout,
    );

    it(
      'watches a chat that does not exist yet, and reports its creation and deletion',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const chatId = uniqueId('chat');
        const probe = new FeedProbe(live, chatId);
        try {
          await probe.ready();
          // Each write is followed by a notice of its own (not one that came before it), after
          // which the chat shows it. (A chat created and deleted between two looks of a polling
          // store may make no notice at all: it looks as it did.)
          let seen = probe.notices.length;
          await store.openChat({ chatId, userId: uniqueId('user') });
          await probe.next(seen);
          await probe.until(async () => (await store.getChat(chatId)) !== null);
          await appendMessages(store, chatId, [uniqueId('m')]);
          seen = probe.notices.length;
          await store.deleteChat(chatId);
          await probe.next(seen);
          await probe.until(async () => (await store.getChat(chatId)) === null);
        } finally {
          probe.stop();
        }
      },
      timeout,
    );

    it(
      'close() ends the feed: watchChat is refused after it, and unsubscribing stays safe',
      async ({ skip }) => {
        liveOrSkip(harness.store(), skip);
        await harness.withOwnStore(async (store) => {
          const live: LiveStore = liveOf(store);
          const { chatId } = await openFreshChat(store);
          const probe = new FeedProbe(live, chatId);
          await probe.ready();
          await store.close();
          probe.stop();
          expect(() => live.watchChat(chatId, () => {})).toThrow(StoreError);
        });
      },
      timeout,
    );
  });
}
