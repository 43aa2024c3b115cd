import {
  type CommitMessage,
  type ContextStore,
  EngineError,
  HeadConflictError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { countingStore, overrideStore } from '../__fixtures__/test-kit';
import { checkEngineOptions } from '../context-engine-options';
import { ChatSession } from './chat-session';
import { conflictBehind, writeMessages } from './write-messages';

const message = (id: string): CommitMessage => ({
  id,
  message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: id }] },
});

async function openSession(store: ContextStore, maxSaveAttempts = 25): Promise<ChatSession> {
  const session = new ChatSession(
    checkEngineOptions({ store, chatId: 'chat-1', userId: 'user-1', maxSaveAttempts }),
  );
  await session.open();
  return session;
}

describe('writeMessages', () => {
  it("'any-head' appends at whatever the head is, one store call", async () => {
    const memory = new InMemoryContextStore();
    const counted = countingStore(memory);
    const session = await openSession(counted.store);
    // Another writer moves the head after the session opened.
    const other = await openSession(memory);
    await writeMessages(other, {
      method: 'save()',
      branch: 'main',
      batch: [message('theirs')],
      attach: 'any-head',
    });
    counted.reset();
    const { result, attachedTo } = await writeMessages(session, {
      method: 'save()',
      branch: 'main',
      batch: [message('ours')],
      attach: 'any-head',
    });
    expect(attachedTo).toBe('theirs');
    expect(result.headMessageId).toBe('ours');
    expect(Object.fromEntries(counted.calls)).toEqual({ append: 1 });
  });

  it("'any-head' with a live reply commits, never appends, on each conflict's head", async () => {
    const memory = new InMemoryContextStore();
    const counted = countingStore(memory);
    const session = await openSession(counted.store);
    const other = await openSession(memory);
    await writeMessages(other, {
      method: 'save()',
      branch: 'main',
      batch: [message('theirs')],
      attach: 'any-head',
    });
    counted.reset();
    const { result, attachedTo } = await writeMessages(session, {
      method: 'save()',
      branch: 'main',
      batch: [message('question')],
      attach: 'any-head',
      live: { startReply: { replyId: 'reply', owner: 'writer', leaseMs: 5_000 } },
    });
    // The first compare-and-set expected the head the session saw (none); the conflict named
    // the other writer's, and the second attempt wrote the question and the live record there.
    expect(attachedTo).toBe('theirs');
    expect(result.headMessageId).toBe('question');
    expect(Object.fromEntries(counted.calls)).toEqual({ commit: 2 });
    const live = await memory.getLiveState?.('chat-1');
    expect(live?.replies.map((reply) => [reply.replyId, reply.afterNodeId])).toEqual([
      ['reply', 'question'],
    ]);
  });

  it('runs beforeAttempt before every attempt, the first included, and lets it refuse', async () => {
    const session = await openSession(new InMemoryContextStore());
    const seen: Array<string | null> = [];
    const written = await writeMessages(session, {
      method: 'compact()',
      branch: 'main',
      batch: [message('first')],
      attach: {
        from: null,
        beforeAttempt: async (head) => {
          seen.push(head);
          return head;
        },
      },
    });
    expect(seen).toEqual([null]);
    expect(written.attachedTo).toBeNull();
    await expect(
      writeMessages(session, {
        method: 'compact()',
        branch: 'main',
        batch: [message('second')],
        attach: {
          from: 'first',
          beforeAttempt: async () => {
            throw new EngineError('compact(): refused');
          },
        },
      }),
    ).rejects.toThrow('compact(): refused');
  });

  it('gives up after maxAttempts with the last conflict as cause, and writes nothing', async () => {
    const memory = new InMemoryContextStore();
    const store = overrideStore(memory, {
      commit: async () => {
        throw new HeadConflictError({
          chatId: 'chat-1',
          branch: 'main',
          expectedHeadId: null,
          currentHeadId: 'elsewhere',
        });
      },
    });
    const session = await openSession(store, 2);
    const error = await writeMessages(session, {
      method: 'save()',
      branch: 'main',
      batch: [message('lost')],
      attach: 'any-head',
      live: { startReply: { replyId: 'reply', owner: 'writer', leaseMs: 5_000 } },
      gaveUpNote: '; the messages are still pending',
    }).catch((caught: unknown) => caught);
    expect(EngineError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'save(): gave up after 2 attempts because other writers kept moving the head of branch "main". Nothing was written; the messages are still pending.',
    );
    expect(conflictBehind(error)?.currentHeadId).toBe('elsewhere');
    expect(conflictBehind(new EngineError('other'))).toBeUndefined();
    expect(await memory.getMessage({ chatId: 'chat-1', messageId: 'lost' })).toBeNull();
  });
});
