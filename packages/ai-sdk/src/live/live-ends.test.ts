import type { ContextStore } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { textOf } from '../cycle/__fixtures__/cycle-test-kit';
import type { ChatCycle } from '../cycle/chat-cycle';
import {
  ask,
  cycleOn,
  dyingStore,
  gatedReads,
  lastType,
  liveStorePairs,
  newChatId,
  type SseReader,
  sseReader,
  startTurn,
  textIn,
  untilChanged,
} from './__fixtures__/live-test-kit';

// How a reply's end reaches readers: a resumer that is behind when the reply ends still gets
// every chunk (the store keeps an ended reply's chunks readable for a while); a reply whose
// process died is marked `interrupted` by whichever process looks next, a read included; an
// event says `live: null` only once the ended reply can be read.

const { pairs, closeAll } = liveStorePairs('ctxgraph_ai_sdk_live_ends');
afterAll(closeAll);

/** The events of `cycle.events` read as they come. */
async function openEvents(
  cycle: ChatCycle,
  chatId: string,
): Promise<{ reader: SseReader; close(): Promise<void> }> {
  const controller = new AbortController();
  const reader = sseReader(await cycle.events(chatId, { userId: 'u', signal: controller.signal }));
  await reader.until((seen) => seen.length > 0);
  return {
    reader,
    async close() {
      controller.abort();
      await reader.toEnd();
    },
  };
}

const liveOf = (event: unknown): string | null => (event as { live: string | null }).live;

describe.each(pairs)('the end of a reply (%s)', (_name, open) => {
  it('a resumer that is behind when the reply ends gets every chunk and a finish', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const gated = gatedReads(storeB);
    const [a, b] = [cycleOn(storeA), cycleOn(gated.store)];
    const chatId = newChatId('tail');
    const writer = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
    writer.hand.say('One, ');
    const follower = sseReader(await b.resume(chatId, { userId: 'u' }));
    await follower.until((seen) => textIn(seen) === 'One, ');
    // The resumer falls behind: its reads wait while the reply goes on, ends and is saved.
    gated.shut();
    writer.hand.say('two, ');
    writer.hand.say('three.');
    writer.hand.end();
    const written = await writer.finished;
    expect(textIn(written)).toBe('One, two, three.');
    gated.open();
    const chunks = await follower.toEnd();
    expect(textIn(chunks)).toBe('One, two, three.');
    expect(chunks).toEqual(written);
    expect(lastType(chunks)).toBe('finish');
  });

  it('a reply whose process died is saved interrupted by another process’s read, and its outcome is reported', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const dying = dyingStore(storeA);
    const [a, b] = [cycleOn(dying.store), cycleOn(storeB)];
    const chatId = newChatId('died-read');
    const writer = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
    writer.hand.say('Half an ');
    await waitForChunks(storeB, chatId, writer.turn.replyId, 'Half an ');
    dying.kill();
    writer.hand.say('answer never stored');
    clock.now += 10_001;
    // Nothing but a read looks at the chat: it ends the reply first, then reads.
    const read = await b.conversation(chatId, { userId: 'u' });
    expect(read.messages.map((message) => message.id)).toEqual(['q1', writer.turn.replyId]);
    expect(textOf(read.messages[1])).toBe('Half an ');
    expect(read.outcomes).toEqual({ [writer.turn.replyId]: 'interrupted' });
    expect((await storeB.getLiveState?.(chatId))?.replies).toEqual([]);
    const messages = await b.messages(chatId, { userId: 'u' });
    expect(messages.map((message) => message.id)).toEqual(['q1', writer.turn.replyId]);
  });

  for (const state of ['streaming', 'done'] as const) {
    it(`a tab that saw more of a reply than its dead process stored sends its copy (${state}) with its next question: not an edit, the stored reply stands`, async () => {
      const clock = { now: 1_000_000 };
      const [storeA, storeB] = open(clock);
      const dying = dyingStore(storeA);
      const [a, b] = [cycleOn(dying.store), cycleOn(storeB)];
      const chatId = newChatId(`died-copy-${state}`);
      const writer = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
      writer.hand.say('Half an ');
      await waitForChunks(storeB, chatId, writer.turn.replyId, 'Half an ');
      dying.kill();
      // The tab had words the dead process never stored (sent before their batch was written).
      writer.hand.say('answer the store never got');
      clock.now += 10_001;
      const replyId = writer.turn.replyId;
      const copy: UIMessage = {
        id: replyId,
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'text', text: 'Half an answer the store never got', state },
        ],
      };
      const next = await startTurn(b, chatId, [ask('q1', 'Tell me'), copy, ask('q2', 'Go on')]);
      next.hand.say('Going on.');
      next.hand.end();
      await next.finished;
      const read = await b.conversation(chatId, { userId: 'u' });
      expect(read.messages.map((message) => message.id)).toEqual([
        'q1',
        replyId,
        'q2',
        next.turn.replyId,
      ]);
      expect(textOf(read.messages[1])).toBe('Half an ');
      expect(read.outcomes).toEqual({ [replyId]: 'interrupted' });
      // No second version of the reply was written.
      expect(await storeB.getMessage({ chatId, messageId: `${replyId}~2` })).toBeNull();
      expect(await b.versions(chatId, replyId, { userId: 'u' })).toHaveLength(1);
    });
  }

  for (const by of ['an events stream', 'a resume'] as const) {
    it(`a reply whose process died, ended by ${by} of another process, reads back interrupted`, async () => {
      const clock = { now: 1_000_000 };
      const [storeA, storeB] = open(clock);
      const dying = dyingStore(storeA);
      const [a, b] = [
        cycleOn(dying.store, { live: { flushMs: 5, leaseMs: 200 } }),
        cycleOn(storeB, { live: { flushMs: 5, leaseMs: 200 } }),
      ];
      const chatId = newChatId('died-follow');
      const writer = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
      writer.hand.say('Half an ');
      await waitForChunks(storeB, chatId, writer.turn.replyId, 'Half an ');
      const events = await openEvents(b, chatId);
      const follower =
        by === 'a resume' ? sseReader(await b.resume(chatId, { userId: 'u' })) : undefined;
      dying.kill();
      clock.now += 10_001;
      if (follower !== undefined) {
        const chunks = await follower.toEnd();
        expect(textIn(chunks)).toBe('Half an ');
        expect(lastType(chunks)).toBe('finish');
      }
      await events.reader.until((seen) => seen.length > 1 && liveOf(seen.at(-1)) === null);
      await events.close();
      const read = await b.conversation(chatId, { userId: 'u' });
      expect(textOf(read.messages.at(-1))).toBe('Half an ');
      expect(read.outcomes).toEqual({ [writer.turn.replyId]: 'interrupted' });
    });
  }

  it('an event says live: null only once the ended reply can be read, for a reply that ends, is stopped or dies', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const dying = dyingStore(storeA);
    const live = { flushMs: 5, leaseMs: 200 };
    const [a, b] = [cycleOn(storeA, { live }), cycleOn(storeB, { live })];
    const chatId = newChatId('events');
    const first = await startTurn(a, chatId, [ask('q1', 'One')]);
    const events = await openEvents(b, chatId);
    const checker = checkEvents(events.reader, b, chatId);
    first.hand.say('First.');
    first.hand.end();
    await first.finished;
    await checker.until(1);
    const second = await startTurn(a, chatId, [
      ...(await a.messages(chatId, { userId: 'u' })),
      ask('q2', 'Two'),
    ]);
    second.hand.say('Sec');
    await waitForChunks(storeB, chatId, second.turn.replyId, 'Sec');
    await b.stop(chatId, { userId: 'u' });
    await second.finished;
    await checker.until(2);
    const third = await startTurn(cycleOn(dying.store, { live }), chatId, [
      ...(await a.messages(chatId, { userId: 'u' })),
      ask('q3', 'Three'),
    ]);
    third.hand.say('Thi');
    await waitForChunks(storeB, chatId, third.turn.replyId, 'Thi');
    dying.kill();
    clock.now += 10_001;
    await checker.until(3);
    await events.close();
    await checker.done;
    expect(checker.checked).toEqual([first.turn.replyId, second.turn.replyId, third.turn.replyId]);
    expect(checker.failures).toEqual([]);
  });
});

/**
 * Reads each event as it comes and, at every `live: null` that follows a live reply, reads the
 * chat through `cycle` at once: the reply that was live must be there. `checked` lists the
 * replies so checked; `failures` the ones that were not readable yet.
 */
function checkEvents(
  reader: SseReader,
  cycle: ChatCycle,
  chatId: string,
): {
  checked: string[];
  failures: string[];
  until(count: number): Promise<void>;
  done: Promise<void>;
} {
  const checked: string[] = [];
  const failures: string[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  const settle = (): void => {
    for (const waiter of waiting.splice(0))
      if (checked.length >= waiter.count) waiter.resolve();
      else waiting.push(waiter);
  };
  const done = (async () => {
    let previous = liveOf(reader.seen[0]);
    for (let index = 1; ; index += 1) {
      await reader.until((seen) => seen.length > index);
      const event = reader.seen[index];
      if (event === undefined) break;
      const current = liveOf(event);
      if (current === null && previous !== null) {
        const read = await cycle.conversation(chatId, { userId: 'u' });
        if (!read.messages.some((message) => message.id === previous)) failures.push(previous);
        checked.push(previous);
        settle();
      }
      previous = current;
    }
    // The stream ended: nothing more will be checked.
    for (const waiter of waiting.splice(0)) waiter.resolve();
  })();
  return {
    checked,
    failures,
    until(count) {
      if (checked.length >= count) return Promise.resolve();
      return new Promise((resolve) => {
        waiting.push({ count, resolve });
      });
    },
    done,
  };
}

/** Resolves once the live reply's stored chunks hold `text` (read after each notice of the feed). */
async function waitForChunks(
  store: ContextStore,
  chatId: string,
  replyId: string,
  text: string,
): Promise<void> {
  await untilChanged(store, chatId, async () => {
    const read = await store.readReply?.({ chatId, replyId });
    return read !== null && read !== undefined && textIn([...read.chunks]) === text;
  });
}
