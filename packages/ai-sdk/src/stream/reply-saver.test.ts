// The reply saver on its own: chunks in, the same chunks out, the reply kept (settled, with how it
// ended) before the stream ends, `finish` only after the reply is kept, and a failed save turned
// into an `error` chunk.
import type { ReplyOutcome } from '@ctxgraph/engine';
import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { ReplyNotSavedError } from '../errors';
import { createReplySaver } from './reply-saver';
import { STOPPED_REASON, settleReply } from './settle-reply';

const reply: UIMessage = {
  id: 'r1',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    { type: 'text', text: 'Hel', state: 'streaming' },
    { type: 'tool-confirm', toolCallId: 'c1', state: 'input-available', input: {} },
  ],
} as UIMessage;

const chunksOf = (...types: string[]): UIMessageChunk[] =>
  types.map((type) =>
    type === 'start'
      ? { type: 'start', messageId: 'r1' }
      : type === 'text-delta'
        ? { type: 'text-delta', id: 't', delta: 'Hel' }
        : type === 'error'
          ? { type: 'error', errorText: 'the model failed' }
          : ({ type } as UIMessageChunk),
  );

function streamOf(chunks: UIMessageChunk[]): ReadableStream<UIMessageChunk> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function readAll<T>(stream: ReadableStream<T>, onChunk?: (chunk: T) => void): Promise<T[]> {
  const out: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    onChunk?.(value);
    out.push(value);
  }
}

describe('createReplySaver', () => {
  it('passes every chunk on in order and sends finish only once the reply is kept', async () => {
    const events: string[] = [];
    const saver = createReplySaver<UIMessage>({
      ended: () => ({ responseMessage: reply, isAborted: false }),
      keep: async () => {
        events.push('keeping');
        await Promise.resolve();
        events.push('kept');
      },
    });
    const out = await readAll(
      streamOf(chunksOf('start', 'text-start', 'text-delta', 'text-end', 'finish')).pipeThrough(
        saver,
      ),
      (chunk) => events.push(chunk.type),
    );
    expect(out.map((chunk) => chunk.type)).toEqual([
      'start',
      'text-start',
      'text-delta',
      'text-end',
      'finish',
    ]);
    expect(events.slice(-3)).toEqual(['keeping', 'kept', 'finish']);
  });

  it('keeps a complete reply as it ended, a stopped or failed one settled, with how it ended', async () => {
    const cases: [string[], boolean, ReplyOutcome, UIMessage | undefined][] = [
      [['start', 'text-delta', 'finish'], false, 'complete', reply],
      [['start', 'text-delta', 'abort'], false, 'aborted', settleReply(reply, STOPPED_REASON)],
      [['start', 'text-delta', 'finish'], true, 'aborted', settleReply(reply, STOPPED_REASON)],
      [['start', 'text-delta', 'error'], false, 'error', settleReply(reply, 'x')],
    ];
    for (const [types, isAborted, outcome, kept] of cases) {
      const seen: [UIMessage | undefined, ReplyOutcome][] = [];
      await readAll(
        streamOf(chunksOf(...types)).pipeThrough(
          createReplySaver<UIMessage>({
            ended: () => ({ responseMessage: reply, isAborted }),
            keep: async (each, how) => {
              seen.push([each, how]);
            },
          }),
        ),
      );
      expect(seen.map(([, how]) => how)).toEqual([outcome]);
      const [keptReply] = seen[0] ?? [];
      if (outcome === 'complete') expect(keptReply).toEqual(kept);
      else {
        // Settled: nothing streaming, the waiting call closed with the reason of the outcome.
        expect(JSON.stringify(keptReply)).not.toContain('"streaming"');
        expect(keptReply?.parts[2]).toMatchObject({
          state: 'output-error',
          errorText: outcome === 'aborted' ? STOPPED_REASON : expect.any(String),
        });
      }
    }
  });

  it('has nothing to keep when no reply was built (stopped before its first word)', async () => {
    const seen: unknown[] = [];
    const stopped: UIMessage = { id: 'r1', role: 'assistant', parts: [{ type: 'step-start' }] };
    await readAll(
      streamOf(chunksOf('start', 'abort')).pipeThrough(
        createReplySaver<UIMessage>({
          ended: () => ({ responseMessage: stopped, isAborted: true }),
          keep: async (each, how) => {
            seen.push(each, how);
          },
        }),
      ),
    );
    expect(seen).toEqual([undefined, 'aborted']);
  });

  it('ends a reply that could not be kept with an error chunk instead of finish, and says so', async () => {
    const told: unknown[] = [];
    const out = await readAll(
      streamOf(chunksOf('start', 'text-delta', 'finish')).pipeThrough(
        createReplySaver<UIMessage>({
          ended: () => ({ responseMessage: reply, isAborted: false }),
          keep: () => Promise.reject(new Error('the disk is full')),
          onSaveError: (error) => told.push(error),
        }),
      ),
    );
    expect(out.map((chunk) => chunk.type)).toEqual(['start', 'text-delta', 'error']);
    expect(out.at(-1)).toEqual({
      type: 'error',
      errorText: 'The reply could not be saved: the disk is full',
    });
    expect(told).toHaveLength(1);
    expect(ReplyNotSavedError.isInstance(told[0])).toBe(true);
  });
});
