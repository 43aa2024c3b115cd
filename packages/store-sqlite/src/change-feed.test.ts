import type { ChatChange } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('feed');
afterAll(() => temp.remove());

/** Resolves at the watcher's next notice that satisfies `wanted` (never a sleep). */
function notices(store: SqliteContextStore, chatId: string) {
  const seen: ChatChange[] = [];
  let waiting: (() => void)[] = [];
  const stop = store.watchChat(chatId, (change) => {
    seen.push(change);
    const wake = waiting;
    waiting = [];
    for (const resolve of wake) resolve();
  });
  return {
    seen,
    stop,
    async until(wanted: (changes: readonly ChatChange[]) => boolean): Promise<void> {
      while (!wanted(seen)) await new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}

describe('the change feed and the store’s own chunk appends', () => {
  it('a write of another store on the same connection still shows when an append of this one follows it before the next look', async () => {
    const database = new Database(temp.file());
    const writer = new SqliteContextStore({ database });
    const other = new SqliteContextStore({ database });
    try {
      const chatId = 'feed-own-appends';
      await writer.openChat({ chatId, userId: 'u' });
      await writer.startReply({
        chatId,
        replyId: 'r1',
        owner: 'o',
        branch: null,
        afterNodeId: null,
        leaseMs: 60_000,
      });
      const watched = notices(writer, chatId);
      // The feed's first notice: it has looked at the file once.
      await watched.until((changes) => changes.some((change) => change.type === 'chat'));
      const chatNotices = (): number =>
        watched.seen.filter((change) => change.type === 'chat').length;
      const before = chatNotices();
      // In one tick, before the feed's next look: the other store (same connection) writes to
      // the chat, then this store appends chunks.
      const renamed = other.updateChat({ chatId, title: 'Renamed elsewhere' });
      const appended = writer.appendReplyChunks({
        chatId,
        replyId: 'r1',
        owner: 'o',
        from: 0,
        chunks: ['a', 'b'],
        leaseMs: 60_000,
      });
      await Promise.all([renamed, appended]);
      // The append is announced at once; the other store's write by the next look, all the same.
      expect(watched.seen).toContainEqual({ type: 'chunks', chatId, replyId: 'r1', chunkCount: 2 });
      await watched.until(() => chatNotices() > before);
      expect(chatNotices()).toBeGreaterThan(before);
      watched.stop();
    } finally {
      await writer.close();
      await other.close();
      database.close();
    }
  });
});
