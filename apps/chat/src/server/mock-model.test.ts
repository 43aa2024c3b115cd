// The app's built-in model holds nothing per call: no abort listener outlives the word it waited
// for, and no record of a call (its prompt) stays on the model. Counted, never timed.
import { getEventListeners } from 'node:events';
import { type LanguageModel, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { createMockModel } from './mock-model';

type PlainModel = Extract<LanguageModel, { specificationVersion: 'v3' }>;
type CallOptions = Parameters<PlainModel['doStream']>[0];

const words = (count: number): string =>
  Array.from({ length: count }, (_, index) => `word${index}`).join(' ');

const prompt = (text: string): CallOptions['prompt'] => [
  { role: 'user', content: [{ type: 'text', text }] },
];

async function drain(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const parts: unknown[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

/**
 * Every array, map and set the model object reaches (through its own properties, three levels
 * deep), counted by entries: what a per-call record would grow.
 */
function retainedEntries(value: unknown, depth = 0): number {
  if (value === null || typeof value !== 'object' || depth > 3) return 0;
  if (Array.isArray(value))
    return value.length + value.reduce((sum, item) => sum + retainedEntries(item, depth + 1), 0);
  if (value instanceof Map || value instanceof Set) return value.size;
  let total = 0;
  for (const key of Object.keys(value)) {
    total += retainedEntries((value as Record<string, unknown>)[key], depth + 1);
  }
  return total;
}

describe('the mock model', () => {
  it('leaves no abort listener on the signal after replies of many words', async () => {
    const model = createMockModel({ chunkDelayMs: 1 }) as PlainModel;
    const controller = new AbortController();
    for (let reply = 0; reply < 5; reply += 1) {
      const { stream } = await model.doStream({
        prompt: prompt(words(30)),
        abortSignal: controller.signal,
      });
      const parts = await drain(stream);
      expect(parts.filter((part) => (part as { type: string }).type === 'text-delta')).toHaveLength(
        32, // "You said: " is two words
      );
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    }
  });

  it('stops at an abort and leaves no listener behind', async () => {
    const model = createMockModel({ chunkDelayMs: 1 }) as PlainModel;
    const controller = new AbortController();
    const { stream } = await model.doStream({
      prompt: prompt(words(30)),
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    let deltas = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if ((value as { type: string }).type === 'text-delta') {
        deltas += 1;
        if (deltas === 3) controller.abort();
      }
    }
    expect(deltas).toBeLessThan(32);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('keeps no record of its calls: what it holds does not grow with the replies', async () => {
    const model = createMockModel({ chunkDelayMs: 0 }) as PlainModel;
    const before = retainedEntries(model);
    for (let reply = 0; reply < 20; reply += 1) {
      const { stream } = await model.doStream({ prompt: prompt(`question ${reply}`) });
      await drain(stream);
    }
    expect(retainedEntries(model)).toBe(before);
  });

  it('answers through streamText without a MaxListenersExceededWarning, on one signal for many replies', async () => {
    const model = createMockModel({ chunkDelayMs: 1 });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      for (let reply = 0; reply < 3; reply += 1) {
        const result = streamText({
          model,
          prompt: `please repeat ${words(20)}`,
          abortSignal: controller.signal,
        });
        expect(await result.text).toBe(`You said: please repeat ${words(20)}`);
      }
      // Node reports a listener leak on the next tick: let it.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('answers doGenerate as doStream streams: the same text, a tool call for "weather"', async () => {
    const model = createMockModel({ chunkDelayMs: 0 }) as PlainModel;
    const generated = await model.doGenerate({ prompt: prompt('hello there') });
    expect(generated.content).toEqual([{ type: 'text', text: 'You said: hello there' }]);
    expect(generated.finishReason.unified).toBe('stop');
    const tool = await model.doGenerate({ prompt: prompt('what is the weather') });
    expect(tool.content).toEqual([
      expect.objectContaining({ type: 'tool-call', toolName: 'getWeather' }),
    ]);
    expect(tool.finishReason.unified).toBe('tool-calls');
    const before = retainedEntries(model);
    for (let call = 0; call < 10; call += 1) await model.doGenerate({ prompt: prompt(`q${call}`) });
    expect(retainedEntries(model)).toBe(before);
  });
});
