import { env, runInDurableObject } from 'cloudflare:test';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { describe, expect, it } from 'vitest';
import type { TestChatObject } from './__fixtures__/test-worker';
import type { DurableObjectStorageLike } from './driver/sql-storage';
import { DurableObjectContextStore } from './durable-object-context-store';

// The cost of a turn and of a cold read, counted in statements through the platform's SQL API
// (each one a trip into the runtime: the benchmark's figures are made of them), so a change
// that adds one shows here and not only in a benchmark nobody ran. Counts, never timings.

const chats = (env as unknown as { TEST_CHATS: DurableObjectNamespace<TestChatObject> }).TEST_CHATS;

/** The object's storage, with every statement recorded (its text, whitespace collapsed). */
function countingStorage(storage: DurableObjectStorageLike): {
  storage: DurableObjectStorageLike;
  take: () => string[];
} {
  const statements: string[] = [];
  return {
    storage: {
      sql: {
        exec: (query, ...bindings) => {
          statements.push(query.replace(/\s+/g, ' ').trim());
          return storage.sql.exec(query, ...bindings);
        },
      },
      transactionSync: (closure) => storage.transactionSync(closure),
    },
    take: () => statements.splice(0, statements.length),
  };
}

const turn = (tag: string) => [
  {
    id: `${tag}-q`,
    message: { id: `${tag}-q`, role: 'user', parts: [{ type: 'text', text: tag }] },
  },
  {
    id: `${tag}-a`,
    message: { id: `${tag}-a`, role: 'assistant', parts: [{ type: 'text', text: `re ${tag}` }] },
  },
];

/** Counts, on a chat of `history` messages: a commit, an engine's save, and a cold read. */
async function countsAt(history: number) {
  return runInDurableObject(
    chats.get(chats.idFromName(`counts-${crypto.randomUUID()}`)),
    async (_object, state) => {
      const { storage, take } = countingStorage(state.storage);
      const store = new DurableObjectContextStore(storage);
      const chatId = 'counted';
      await store.openChat({ chatId, userId: 'ada' });
      let head: string | null = null;
      for (let start = 0; start < history; start += 2) {
        head = (
          await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: head,
            messages: turn(`h${start}`),
          })
        ).headMessageId;
      }
      take();
      await store.commit({ chatId, branch: 'main', expectedHeadId: head, messages: turn('new') });
      const commit = take();

      const renderer = new XmlRenderer();
      const warm = new ContextEngine({ store, chatId, userId: 'ada' });
      warm.set(role('You count.'));
      await warm.resolve({ renderer });
      take();
      warm.set(user('one more'), assistantText('counted'));
      await warm.save();
      const save = take();

      // Cold: a store as a woken object builds it, a new engine, its first resolve().
      const coldStore = new DurableObjectContextStore(storage);
      const construct = take();
      const cold = new ContextEngine({ store: coldStore, chatId, userId: 'ada' });
      cold.set(role('You count.'));
      const { messages } = await cold.resolve({ renderer });
      const coldResolve = take();
      return { commit, save, construct, coldResolve, resolved: messages.length };
    },
  );
}

describe('DurableObjectContextStore statement counts', () => {
  it('a commit the write alone cannot take (a stale head, an id the chat has) is refused or replaces on the checked path, nothing left of the try', async () => {
    const outcome = await runInDurableObject(
      chats.get(chats.idFromName(`counts-${crypto.randomUUID()}`)),
      async (_object, state) => {
        const { storage, take } = countingStorage(state.storage);
        const store = new DurableObjectContextStore(storage);
        const chatId = 'refused';
        await store.openChat({ chatId, userId: 'ada' });
        const first = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: turn('one'),
        });
        const before = await store.getGraph(chatId);
        take();
        const stale = await store
          .commit({ chatId, branch: 'main', expectedHeadId: null, messages: turn('two') })
          .then(
            () => 'written',
            (error: Error) => error.name,
          );
        const afterStale = await store.getGraph(chatId);
        // The same ids again at the head: the reply is replaced in place, no node added.
        const replaced = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: first.headMessageId,
          messages: [
            {
              id: 'one-a',
              message: {
                id: 'one-a',
                role: 'assistant',
                parts: [{ type: 'text', text: 'edited' }],
              },
            },
          ],
        });
        const afterReplace = await store.getGraph(chatId);
        return { before, stale, afterStale, replaced, afterReplace, statements: take() };
      },
    );
    expect(outcome.stale).toBe('HeadConflictError');
    expect(outcome.afterStale).toEqual(outcome.before);
    expect(outcome.replaced.headMessageId).toBe('one-a');
    expect(outcome.replaced.rewrittenAt).toBe(outcome.replaced.revision);
    expect(outcome.afterReplace.nodes.map((node) => node.id)).toEqual(['one-q', 'one-a']);
    expect(outcome.afterReplace.nodes[1]?.message.parts).toEqual([
      { type: 'text', text: 'edited' },
    ]);
    expect(outcome.afterReplace.chat.revision).toBe(outcome.before.chat.revision + 1);
  });

  it('a turn of the chat app (the question starting its live reply, the reply ending it) writes without reading the chat first; a reply ended by another owner is refused, nothing written', async () => {
    const outcome = await runInDurableObject(
      chats.get(chats.idFromName(`counts-${crypto.randomUUID()}`)),
      async (_object, state) => {
        const { storage, take } = countingStorage(state.storage);
        const store = new DurableObjectContextStore(storage);
        const chatId = 'live';
        await store.openChat({ chatId, userId: 'ada' });
        const [question, reply] = turn('live');
        if (question === undefined || reply === undefined) throw new Error('no turn');
        take();
        const asked = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [question],
          startReply: { replyId: reply.id, owner: 'writer', leaseMs: 60_000 },
        });
        const start = take();
        const before = await store.getGraph(chatId);
        const lost = await store
          .commit({
            chatId,
            branch: 'main',
            expectedHeadId: asked.headMessageId,
            messages: [reply],
            endReply: { replyId: reply.id, owner: 'somebody else' },
          })
          .then(
            () => 'written',
            (error: Error) => error.name,
          );
        const afterLost = await store.getGraph(chatId);
        take();
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: asked.headMessageId,
          messages: [reply],
          endReply: { replyId: reply.id, owner: 'writer' },
        });
        const end = take();
        const live = await store.getLiveState(chatId);
        return { start, end, lost, before, afterLost, live: live.replies.length };
      },
    );
    const readsChat = (statements: string[]) =>
      statements.some((statement) => /^SELECT .*FROM ctxgraph_chats/.test(statement));
    expect(outcome.start[0]).toMatch(/^UPDATE ctxgraph_chats/);
    expect(readsChat(outcome.start)).toBe(false);
    expect(outcome.end[0]).toMatch(/^UPDATE ctxgraph_chats/);
    expect(readsChat(outcome.end)).toBe(false);
    expect(outcome.lost).toBe('LiveReplyLostError');
    expect(outcome.afterLost).toEqual(outcome.before);
    expect(outcome.live).toBe(0);
  });

  it('a commit of a turn is its four writes and no read, whatever the chat’s length', async () => {
    const short = await countsAt(10);
    const long = await countsAt(400);
    expect(long.commit).toEqual(short.commit);
    expect(long.commit.map((statement) => statement.split(' ').slice(0, 3).join(' '))).toEqual([
      'UPDATE ctxgraph_chats SET',
      'INSERT INTO ctxgraph_nodes',
      'INSERT INTO ctxgraph_nodes',
      'UPDATE ctxgraph_branches SET',
    ]);
    // The engine's save of a turn (an append at the head) is the same write, the chat's update
    // returning the branch's head as well: nothing read or written beside it.
    const shape = (statements: string[]) =>
      statements.map((statement) => statement.split(' ').slice(0, 3).join(' '));
    expect(shape(long.save)).toEqual(shape(long.commit));
    expect(long.save.slice(1)).toEqual(long.commit.slice(1));
    expect(long.save).toEqual(short.save);
  });

  it('a woken store reads its schema version in one statement; a cold read is one statement a store call', async () => {
    const short = await countsAt(10);
    const long = await countsAt(400);
    expect(long.resolved).toBe(404);
    expect(short.construct).toHaveLength(1);
    expect(long.construct).toHaveLength(1);
    // openChat's one read (the chat and its active branch), then one recursive walk a page of the
    // chain: the engine reads 64 nodes first, then the rest in one page.
    const walk = (statements: string[]) =>
      statements.filter((statement) => statement.startsWith('WITH RECURSIVE chain')).length;
    expect(short.coldResolve).toHaveLength(2);
    expect(walk(short.coldResolve)).toBe(1);
    expect(long.coldResolve).toHaveLength(3);
    expect(walk(long.coldResolve)).toBe(2);
  });
});
