import type { ContextStore } from '@ctxgraph/fragments-core';
import { streamText, type UIMessage } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { TestChat, textOf } from '../cycle/__fixtures__/cycle-test-kit';
import type { ChatCycle } from '../cycle/chat-cycle';
import {
  ask,
  cycleOn,
  type HandModel,
  handModel,
  lastType,
  liveStorePairs,
  newChatId,
  sseReader,
  textIn,
  untilChanged,
} from './__fixtures__/live-test-kit';

// A client that goes away (its fetch aborted: the POST's request signal aborts and its response
// body is cancelled) is not a stop when live replies are on: the model call runs to its end, the
// reply is saved whole and can be resumed meanwhile, from any process. `stopOnDisconnect: true`
// keeps the old rule for an app that asks for it.

const { pairs, closeAll } = liveStorePairs('ctxgraph_ai_sdk_live_disconnect');
afterAll(closeAll);

/**
 * The app's `POST /api/chat` over `cycle`, with the hand model answering: the request's signal is
 * passed to `begin` as an app does (`signal: request.signal`).
 */
function route(cycle: ChatCycle, hand: HandModel): { fetch: typeof fetch } {
  const handle = async (request: Request): Promise<Response> => {
    const turn = await cycle.begin(await request.json(), { userId: 'u', signal: request.signal });
    return turn.respond(
      streamText({ model: hand.model, messages: turn.messages, abortSignal: turn.abortSignal }),
    );
  };
  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
      handle(new Request(input, init))) as typeof fetch,
  };
}

/** The chat's stored conversation once `replyId` is saved (its live record ended). */
async function savedReply(
  cycle: ChatCycle,
  store: ContextStore,
  chatId: string,
  replyId: string,
): Promise<{ messages: UIMessage[]; outcomes: Record<string, string> }> {
  let read: { messages: UIMessage[]; outcomes: Record<string, string> } | undefined;
  await untilChanged(store, chatId, async () => {
    const live = await store.getLiveState?.(chatId);
    if (live?.replies.some((record) => record.replyId === replyId)) return false;
    read = await cycle.conversation(chatId, { userId: 'u' });
    return read.messages.at(-1)?.id === replyId;
  });
  return read as { messages: UIMessage[]; outcomes: Record<string, string> };
}

describe.each(pairs)('a client that goes away (%s)', (_name, open) => {
  it('the AI SDK client’s stop (its fetch aborted) does not stop the reply: it runs to its end, is saved whole, and is resumed meanwhile', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
    const hand = handModel();
    const chatId = newChatId('gone');
    const chat = new TestChat(chatId, route(a, hand));
    const sending = chat.sendMessage({ text: 'Tell me' });
    await hand.started;
    hand.say('Half ');
    await chat.until((messages) => textOf(messages[1]) === 'Half ');
    const replyId = chat.messages[1]?.id as string;
    await chat.stop();
    await sending;
    // The writer's client is gone; another process resumes the reply while it goes on.
    const follower = sseReader(await b.resume(chatId, { userId: 'u' }));
    await follower.until((seen) => textIn(seen) === 'Half ');
    hand.say('and the rest.');
    await follower.until((seen) => textIn(seen) === 'Half and the rest.');
    hand.end();
    const chunks = await follower.toEnd();
    expect(textIn(chunks)).toBe('Half and the rest.');
    expect(lastType(chunks)).toBe('finish');
    expect(hand.aborted).toBe(0);
    const saved = await savedReply(b, storeB, chatId, replyId);
    expect(textOf(saved.messages.at(-1))).toBe('Half and the rest.');
    expect(saved.outcomes).toEqual({});
  });

  it('neither the request’s signal nor a cancelled response body stops the reply', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
    const chatId = newChatId('cancelled');
    const hand = handModel();
    const request = new AbortController();
    const turn = await a.begin(
      { id: chatId, trigger: 'submit-message', messages: [ask('q1', 'Tell me')] },
      { userId: 'u', signal: request.signal },
    );
    const response = turn.respond(
      streamText({ model: hand.model, messages: turn.messages, abortSignal: turn.abortSignal }),
    );
    const client = sseReader(response);
    await hand.started;
    hand.say('Half ');
    await client.until((seen) => textIn(seen) === 'Half ');
    request.abort();
    await client.cancel();
    expect(turn.abortSignal.aborted).toBe(false);
    hand.say('and the rest.');
    hand.end();
    const saved = await savedReply(b, storeB, chatId, turn.replyId);
    expect(textOf(saved.messages.at(-1))).toBe('Half and the rest.');
    expect(saved.outcomes).toEqual({});
    expect(hand.aborted).toBe(0);
  });

  it('stopOnDisconnect: true keeps the old rule: the reply stops and is saved aborted', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const a = cycleOn(storeA, { stopOnDisconnect: true });
    const b = cycleOn(storeB);
    const hand = handModel();
    const chatId = newChatId('stop-on-disconnect');
    const chat = new TestChat(chatId, route(a, hand));
    const sending = chat.sendMessage({ text: 'Tell me' });
    await hand.started;
    hand.say('Half ');
    await chat.until((messages) => textOf(messages[1]) === 'Half ');
    const replyId = chat.messages[1]?.id as string;
    await chat.stop();
    await sending;
    const saved = await savedReply(b, storeB, chatId, replyId);
    expect(hand.aborted).toBe(1);
    expect(textOf(saved.messages.at(-1))).toBe('Half ');
    expect(saved.outcomes).toEqual({ [replyId]: 'aborted' });
  });
});
