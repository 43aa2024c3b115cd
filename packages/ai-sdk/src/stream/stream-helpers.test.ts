import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { CallUsage, sumUsage } from './call-usage';
import { createMemoryResumableStreams } from './resumable-streams';
import { settleReply } from './settle-reply';

async function readAll(stream: ReadableStream<string>): Promise<string[]> {
  const out: string[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

describe('settleReply', () => {
  it('settles streaming text and reasoning, and tool calls without results', () => {
    const reply = {
      id: 'a',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: 'hm', state: 'streaming' },
        { type: 'text', text: 'Hel', state: 'streaming' },
        { type: 'tool-getWeather', toolCallId: 't', state: 'input-streaming', input: { ci: 1 } },
        {
          type: 'tool-getWeather',
          toolCallId: 'u',
          state: 'output-available',
          input: {},
          output: 1,
        },
      ],
    } as unknown as UIMessage;
    const settled = settleReply(reply, 'stopped') as UIMessage;
    expect(JSON.stringify(settled)).not.toContain('streaming');
    expect(settled.parts[3]).toMatchObject({ state: 'output-error', errorText: 'stopped' });
    expect(settled.parts[4]).toEqual(reply.parts[4]);
  });

  it('drops a reply that has nothing but step boundaries', () => {
    expect(
      settleReply({ id: 'a', role: 'assistant', parts: [{ type: 'step-start' }] }, 'x'),
    ).toBeUndefined();
  });

  it('leaves out text and reasoning that never got a character, and drops a reply left empty', () => {
    const empty = {
      id: 'a',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: '', state: 'streaming' },
        { type: 'text', text: '', state: 'streaming' },
      ],
    } as UIMessage;
    expect(settleReply(empty, 'x')).toBeUndefined();
    const started = {
      id: 'b',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'text', text: 'Hi', state: 'done' },
        { type: 'step-start' },
        { type: 'text', text: '', state: 'streaming' },
      ],
    } as UIMessage;
    expect(settleReply(started, 'x')?.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Hi', state: 'done' },
      { type: 'step-start' },
    ]);
    // A finished empty text part is what the model sent: kept.
    const finished = {
      id: 'c',
      role: 'assistant',
      parts: [{ type: 'step-start' }, { type: 'text', text: '', state: 'done' }],
    } as UIMessage;
    expect(settleReply(finished, 'x')).toEqual(finished);
  });
});

describe('usage', () => {
  it('sums steps, and prefers the total the stream reports', () => {
    expect(
      sumUsage([
        { inputTokens: 1200, outputTokens: 10, inputTokenDetails: { cacheReadTokens: 100 } },
        { inputTokens: 1200, outputTokens: 30 },
      ]),
    ).toEqual({
      inputTokens: 2400,
      outputTokens: 40,
      inputTokenDetails: { cacheReadTokens: 100, cacheWriteTokens: undefined },
    });
    const call = new CallUsage();
    call.observe({
      type: 'finish-step',
      usage: { inputTokens: 5, outputTokens: 1 },
      response: { modelId: 'm' },
    });
    call.observe({ type: 'finish-step', usage: { inputTokens: 6, outputTokens: 2 } });
    expect(call.usage()).toMatchObject({ inputTokens: 11, outputTokens: 3 });
    expect(call.modelId).toBe('m');
    call.observe({ type: 'finish', totalUsage: { inputTokens: 11, outputTokens: 3 } });
    expect(call.usage()).toEqual({ inputTokens: 11, outputTokens: 3 });
  });
});

describe('createMemoryResumableStreams', () => {
  it('replays the active stream from its start and follows it; null when none is active', async () => {
    const streams = createMemoryResumableStreams();
    expect(await streams.resume('chat')).toBeNull();
    let push!: ReadableStreamDefaultController<string>;
    await streams.publish({
      chatId: 'chat',
      streamId: 's1',
      stream: new ReadableStream<string>({
        start(controller) {
          push = controller;
        },
      }),
    });
    push.enqueue('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const resumed = await streams.resume('chat');
    push.enqueue('b');
    push.close();
    expect(await readAll(resumed as ReadableStream<string>)).toEqual(['a', 'b']);
    await streams.finish({ chatId: 'chat', streamId: 'other' });
    await streams.finish({ chatId: 'chat', streamId: 's1' });
    expect(await streams.resume('chat')).toBeNull();
  });
});
