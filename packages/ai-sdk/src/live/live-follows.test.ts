import { afterAll, describe, expect, it } from 'vitest';
import { REPLY_FOLLOWS_HEADER } from '../stream/reply-response';
import {
  ask,
  cycleOn,
  liveStorePairs,
  newChatId,
  sseReader,
  startTurn,
  textIn,
} from './__fixtures__/live-test-kit';

// Another tab learns which message a live reply answers (the question it follows), from the
// chat's events and from a resume, so it can place the reply where it belongs. Nothing here waits
// for an amount of time: each step waits for the event or chunk it needs.

const { pairs: storePairs, closeAll } = liveStorePairs('ctxgraph_ai_sdk_live_follows');
afterAll(closeAll);

interface ChatEvent {
  version: number;
  live: string | null;
  follows: string | null;
}

describe.each(storePairs)('a live reply names the message it follows (%s)', (_name, open) => {
  it('in the events and in the resume of another process, turn after turn', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
    const chatId = newChatId('follows');
    const first = await startTurn(a, chatId, [ask('q1', 'Hi')]);
    const events = sseReader(await b.events(chatId, { userId: 'u' }));
    const seen = (await events.until((all) =>
      all.some((event) => (event as ChatEvent).live === first.turn.replyId),
    )) as ChatEvent[];
    expect(seen.find((event) => event.live === first.turn.replyId)?.follows).toBe('q1');
    const resumed = await b.resume(chatId, { userId: 'u' });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get(REPLY_FOLLOWS_HEADER)).toBe('q1');
    const resumedChunks = sseReader(resumed);
    first.hand.say('Hello.');
    first.hand.end();
    await first.finished;
    expect(textIn(await resumedChunks.toEnd())).toBe('Hello.');
    const ended = (await events.until((all) =>
      all.some((event, index) => index > 0 && (event as ChatEvent).live === null),
    )) as ChatEvent[];
    expect(ended.at(-1)).toMatchObject({ live: null, follows: null });

    // The next turn answers q2, sent with the whole conversation as a client sends it.
    const history = await a.messages(chatId, { userId: 'u' });
    const second = await startTurn(a, chatId, [...history, ask('q2', 'And then?')]);
    const next = (await events.until((all) =>
      all.some((event) => (event as ChatEvent).live === second.turn.replyId),
    )) as ChatEvent[];
    expect(next.find((event) => event.live === second.turn.replyId)?.follows).toBe('q2');
    const again = await b.resume(chatId, { userId: 'u' });
    expect(again.headers.get(REPLY_FOLLOWS_HEADER)).toBe('q2');
    await again.body?.cancel();
    second.hand.say('Then this.');
    second.hand.end();
    await second.finished;
    await events.cancel();
    // Nothing live: a resume is a 204 and names nothing.
    const none = await b.resume(chatId, { userId: 'u' });
    expect(none.status).toBe(204);
    expect(none.headers.get(REPLY_FOLLOWS_HEADER)).toBeNull();
  });
});
