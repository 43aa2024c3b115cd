import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { textOf } from '../cycle/__fixtures__/cycle-test-kit';
import {
  ask,
  cycleOn,
  lastType,
  liveStorePairs,
  newChatId,
  sseReader,
  startTurn,
  textIn,
} from './__fixtures__/live-test-kit';

// A stop (`cycle.stop`, from the writer's process or another) ends every reader's stream, the
// writer's own POST answer included, with the chunks sent so far and a `finish` chunk; the reply
// is saved `aborted` holding exactly the text of those chunks, the same chunks every reader got.

const { pairs, closeAll } = liveStorePairs('ctxgraph_ai_sdk_live_stop');
afterAll(closeAll);

/** The message the AI SDK's own reader builds from a reader's chunks. */
async function builtFrom(chunks: unknown[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk as UIMessageChunk);
      controller.close();
    },
  });
  let built: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) built = message;
  return built;
}

const types = (chunks: unknown[]): string[] =>
  chunks.map((chunk) => (chunk as { type: string }).type);

describe.each(pairs)('a stop (%s)', (_name, open) => {
  for (const where of ['another process', 'the writer’s process'] as const) {
    it(`from ${where}: the writer’s POST and every resume end with the same chunks and a finish; the reply is saved aborted with exactly their text`, async () => {
      const clock = { now: 1_000_000 };
      const [storeA, storeB] = open(clock);
      const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
      const chatId = newChatId('stop');
      const writer = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
      writer.hand.say('Partial ');
      writer.hand.say('answer');
      const followers = [
        sseReader(await b.resume(chatId, { userId: 'u' })),
        sseReader(await a.resume(chatId, { userId: 'u' })),
      ];
      for (const follower of followers)
        await follower.until((seen) => textIn(seen) === 'Partial answer');
      await writer.client.until((seen) => textIn(seen) === 'Partial answer');
      const stopping = where === 'another process' ? b : a;
      expect(await stopping.stop(chatId, { userId: 'u' })).toEqual({
        messageId: writer.turn.replyId,
      });
      expect(writer.hand.aborted).toBe(1);
      // The model's stream was aborted: nothing it would say now reaches anyone.
      writer.hand.say(' and more');
      const written = await writer.finished;
      expect(lastType(written), `the writer got ${types(written).join(', ')}`).toBe('finish');
      expect(types(written)).not.toContain('abort');
      for (const follower of followers) expect(await follower.toEnd()).toEqual(written);
      const saved = await b.conversation(chatId, { userId: 'u' });
      expect(saved.outcomes).toEqual({ [writer.turn.replyId]: 'aborted' });
      const reply = saved.messages.at(-1);
      expect(reply?.id).toBe(writer.turn.replyId);
      expect(textIn(written)).toBe('Partial answer');
      expect(textOf(reply)).toBe('Partial answer');
      // What the AI SDK's client builds from the stream is the stored reply's text.
      expect(textOf(await builtFrom(written))).toBe(textOf(reply));
      expect((await a.conversation(chatId, { userId: 'u' })).outcomes).toEqual(saved.outcomes);
    });
  }

  it('a reply that finished before the stop reached it is saved complete, and its stream ends with its finish', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
    const chatId = newChatId('late-stop');
    const writer = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
    writer.hand.say('Whole answer');
    writer.hand.end();
    const written = await writer.finished;
    expect(await b.stop(chatId, { userId: 'u' })).toBeNull();
    expect(lastType(written)).toBe('finish');
    const saved = await b.conversation(chatId, { userId: 'u' });
    expect(saved.outcomes).toEqual({});
    expect(textOf(saved.messages.at(-1))).toBe('Whole answer');
  });
});
