import { assistantText, user } from '@ctxgraph/codecs';
import { role, type Tokenizer, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import {
  generateText,
  jsonSchema,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from '../usage/message-usage';
import type { CachePrediction } from './cache-prediction';

const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

interface Reported {
  readonly input: number;
  readonly read: number;
  readonly write: number | undefined;
}

/** A mock model that reports, per call, the usage the test queued for it. */
function reportingModel(provider: string, modelId: string) {
  const queue: Reported[] = [];
  const model = new MockLanguageModelV3({
    provider,
    modelId,
    doGenerate: async () => {
      const next = queue.shift() ?? { input: 0, read: 0, write: 0 };
      return {
        content: [{ type: 'text', text: 'noted' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: {
            total: next.input,
            noCache: next.input - next.read - (next.write ?? 0),
            cacheRead: next.read,
            cacheWrite: next.write,
          },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
  return { model, queue };
}

async function chat(chatId: string, store = new InMemoryContextStore()) {
  const engine = new ContextEngine({
    store,
    chatId,
    userId: 'u',
    renderer: new LineRenderer(),
    tokenizer: words,
  });
  engine.set(role('You are the support assistant.'));
  for (let turn = 0; turn < 3; turn += 1) {
    engine.set(
      user(`question ${turn} ${'word '.repeat(300)}`, { id: `q${turn}` }),
      assistantText(`answer ${turn} ${'word '.repeat(300)}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
  return { engine, store };
}

/**
 * One turn: a question, a budgeted resolve, the call (reporting what `report` says for the
 * prediction), and the reply saved with its usage and the prediction.
 */
async function turn(
  engine: ContextEngine,
  reporting: ReturnType<typeof reportingModel>,
  id: string,
  report: (cache: CachePrediction) => Reported,
): Promise<CachePrediction> {
  engine.set(user(`question ${id} ${'word '.repeat(40)}`, { id }));
  const result = await engine.resolve({
    format: 'model',
    budget: { maxInputTokens: 100_000, model: reporting.model },
  });
  const cache = result.budget?.cache as CachePrediction;
  reporting.queue.push(report(cache));
  const reply = await generateText({
    model: reporting.model,
    system: result.system,
    messages: result.messages,
    ...(result.providerOptions === undefined ? {} : { providerOptions: result.providerOptions }),
  });
  engine.set(
    withUsage(assistantText(reply.text, { id: `r-${id}` }), {
      usage: reply.usage,
      modelId: reporting.model.modelId,
      cache,
    }),
  );
  await engine.save();
  return cache;
}

/** What a provider that follows the prediction reports, in its own count (10% more tokens). */
const agreeing = (cache: CachePrediction): Reported => ({
  input: Math.round(cache.inputTokens * 1.1),
  read: Math.round(cache.readTokens * 1.1),
  write: Math.round(cache.writeTokens * 1.1),
});

afterEach(() => {
  vi.useRealTimers();
});

describe('cache predictions, confirmed by the reported usage', () => {
  it('usage that agrees: reads what the previous call wrote, writes only new tokens', async () => {
    const { engine, store } = await chat('agree');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    const first = await turn(engine, anthropic, 'p1', agreeing);
    expect(first).toMatchObject({
      profile: 'anthropic',
      readTokens: 0,
      writeTokens: first.inputTokens,
      break: { kind: 'system', cause: 'first-call' },
    });
    const second = await turn(engine, anthropic, 'p2', agreeing);
    // The previous input ended at p1, which this call marks again: read up to there.
    expect(second.readTokens).toBe(first.inputTokens);
    expect(second.writeTokens).toBe(second.inputTokens - first.inputTokens);
    expect(second.newTokens).toBe(second.writeTokens);
    expect(second.break).toBeNull();

    const usage = await engine.usage();
    expect(usage.cache).toMatchObject({ calls: 2, agreed: 2, readLess: 0, readMore: 0 });
    expect(usage.cache.hitRate).toBeCloseTo(
      second.readTokens / (first.inputTokens + second.inputTokens),
      2,
    );
    expect(usage.cache.writeAmplification).toBeCloseTo(1, 2);
    expect(usage.cache.misses).toEqual([
      {
        messageId: 'r-p1',
        status: 'agreed',
        predicted: { kind: 'system', id: 'system', name: 'system', cause: 'first-call' },
        confirmed: { kind: 'system', id: 'system', name: 'system', cause: 'first-call' },
      },
    ]);
    // Stored with the reply: a new engine on the chat reads the same reconciliation.
    const fresh = new ContextEngine({ store, chatId: 'agree', userId: 'u', tokenizer: words });
    expect((await fresh.usage()).cache).toEqual(usage.cache);
    const snapshot = await engine.inspect();
    expect(snapshot.usage.branch.cache).toEqual(usage.cache);
  });

  it('usage that disagrees: the provider read nothing; the miss is named where the read stopped', async () => {
    const { engine } = await chat('disagree');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    await turn(engine, anthropic, 'p1', agreeing);
    const second = await turn(engine, anthropic, 'p2', (cache) => ({
      input: cache.inputTokens,
      read: 0,
      write: cache.inputTokens,
    }));
    expect(second.readTokens).toBeGreaterThan(0);
    const usage = await engine.usage();
    expect(usage.cache).toMatchObject({ calls: 2, agreed: 1, readLess: 1 });
    expect(usage.cache.misses.at(-1)).toEqual({
      messageId: 'r-p2',
      status: 'read-less',
      predicted: null,
      confirmed: { kind: 'system', id: 'system', name: 'system', cause: 'unexplained' },
    });
    // It wrote the whole input again: more than the new tokens.
    expect(usage.cache.writeAmplification ?? 0).toBeGreaterThan(1.5);

    // A provider that read half of what was predicted stops inside the history: named there.
    const third = await turn(engine, anthropic, 'p3', (cache) => ({
      input: cache.inputTokens,
      read: Math.round(cache.readTokens / 2),
      write: cache.inputTokens - Math.round(cache.readTokens / 2),
    }));
    expect(third.readTokens).toBeGreaterThan(0);
    const miss = (await engine.usage()).cache.misses.at(-1);
    expect(miss?.status).toBe('read-less');
    expect(miss?.confirmed).toMatchObject({ kind: 'message', cause: 'unexplained' });
  });

  it('names the fragment that broke the prefix, predicted and confirmed', async () => {
    const { engine } = await chat('fragment');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    await turn(engine, anthropic, 'p1', agreeing);
    engine.replaceContext([role('You are the billing assistant now.')]);
    const changed = await turn(engine, anthropic, 'p2', agreeing);
    expect(changed.readTokens).toBe(0);
    expect(changed.break).toEqual({ kind: 'fragment', id: '#0', name: 'role', cause: 'changed' });
    const miss = (await engine.usage()).cache.misses.at(-1);
    expect(miss).toEqual({
      messageId: 'r-p2',
      status: 'agreed',
      predicted: { kind: 'fragment', id: '#0', name: 'role', cause: 'changed' },
      confirmed: { kind: 'fragment', id: '#0', name: 'role', cause: 'changed' },
    });
  });

  it('names the first message a history cut left out', async () => {
    const { engine } = await chat('cut');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    await turn(engine, anthropic, 'p1', agreeing);
    engine.set(user('a short one', { id: 'p2' }));
    const result = await engine.resolve({
      format: 'model',
      budget: { maxInputTokens: 1500, model: anthropic.model },
    });
    expect(result.budget?.droppedHistory.messages).toBeGreaterThan(0);
    expect(result.budget?.cache.break).toEqual({
      kind: 'message',
      id: 'q0',
      name: 'user',
      cause: 'removed',
    });
  });

  it('predicts expiry after the time to live, and a model switch', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-27T10:00:00Z'));
    const { engine } = await chat('ttl');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    await turn(engine, anthropic, 'p1', agreeing);
    vi.setSystemTime(new Date('2026-11-27T10:06:00Z'));
    const late = await turn(engine, anthropic, 'p2', agreeing);
    expect(late.readTokens).toBe(0);
    expect(late.break?.cause).toBe('expired');
    const other = reportingModel('anthropic.messages', 'claude-opus-4-1');
    const switched = await turn(engine, other, 'p3', agreeing);
    expect(switched.break?.cause).toBe('model-changed');
  });

  it('OpenAI: reads the shared prefix in 128-token steps; writes are not reported', async () => {
    const { engine } = await chat('openai');
    const openai = reportingModel('openai.responses', 'gpt-5');
    const noWrites = (cache: CachePrediction): Reported => ({
      input: cache.inputTokens,
      read: cache.readTokens,
      write: undefined,
    });
    const first = await turn(engine, openai, 'p1', noWrites);
    const second = await turn(engine, openai, 'p2', noWrites);
    expect(second.readTokens).toBe(1024 + Math.floor((first.inputTokens - 1024) / 128) * 128);
    expect(second.writeTokens).toBe(0);
    const usage = await engine.usage();
    expect(usage.cache).toMatchObject({ calls: 2, agreed: 2, writeTokens: null });
    expect(usage.cache.writeAmplification).toBeNull();
  });

  it('inspect({ budget }) predicts the next call without remembering it', async () => {
    const { engine } = await chat('inspect');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    const first = await turn(engine, anthropic, 'p1', agreeing);
    engine.set(user('one more', { id: 'p2' }));
    const budget = { maxInputTokens: 100_000, model: anthropic.model };
    const planned = await engine.inspect({ budget });
    if (planned.budget === null || 'exceeded' in planned.budget) throw new Error('expected a plan');
    expect(planned.budget.cache.readTokens).toBe(first.inputTokens);
    const again = await engine.inspect({ budget });
    expect(again.budget).toEqual(planned.budget);
  });

  it('refuses a prediction it did not make, before anything is set', async () => {
    const { engine } = await chat('forged');
    const anthropic = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    engine.set(user('q', { id: 'p1' }));
    const result = await engine.resolve({
      format: 'model',
      budget: { maxInputTokens: 100_000, model: anthropic.model },
    });
    const copy: unknown = JSON.parse(JSON.stringify(result.budget?.cache));
    const usage = { inputTokens: 10, outputTokens: 1 };
    expect(() =>
      withUsage(assistantText('a', { id: 'r' }), { usage, modelId: 'm', cache: copy }),
    ).toThrow(ValidationError);
    expect(() =>
      withUsage(assistantText('a', { id: 'r' }), { usage, modelId: 'm', cache: { profile: 'x' } }),
    ).toThrow(/cache must be the prediction a budgeted resolve returned/);
    expect((await engine.inspect()).fragments.pending.map((entry) => entry.id)).toEqual(['p1']);
  });
});

describe('a tool-calling call: one provider call per step, reconciled step by step', () => {
  /** A mock Anthropic model whose first step calls a tool and second answers, each with its usage. */
  function twoStepModel(steps: readonly Reported[]) {
    const prompts: unknown[] = [];
    let call = 0;
    const model = new MockLanguageModelV3({
      provider: 'anthropic.messages',
      modelId: 'claude-sonnet-4-5',
      doStream: async (options) => {
        prompts.push(options.prompt);
        const report = steps[call] ?? { input: 0, read: 0, write: 0 };
        const content =
          call === 0
            ? [
                {
                  type: 'tool-call' as const,
                  toolCallId: 'call-1',
                  toolName: 'lookup',
                  input: JSON.stringify({ order: 'A-17' }),
                },
              ]
            : [
                { type: 'text-start' as const, id: 't' },
                { type: 'text-delta' as const, id: 't', delta: 'It shipped.' },
                { type: 'text-end' as const, id: 't' },
              ];
        call += 1;
        return {
          stream: simulateReadableStream({
            chunks: [
              ...content,
              {
                type: 'finish' as const,
                finishReason: {
                  unified: call === 1 ? ('tool-calls' as const) : ('stop' as const),
                  raw: undefined,
                },
                usage: {
                  inputTokens: {
                    total: report.input,
                    noCache: report.input - report.read - (report.write ?? 0),
                    cacheRead: report.read,
                    cacheWrite: report.write,
                  },
                  outputTokens: { total: 20, text: 20, reasoning: undefined },
                },
              },
            ],
          }),
        };
      },
    });
    return { model, prompts };
  }

  async function run(
    chatId: string,
    report: (cache: CachePrediction) => readonly Reported[],
  ): Promise<{ engine: ContextEngine; cache: CachePrediction }> {
    const { engine } = await chat(chatId);
    engine.set(user(`where is my order ${'word '.repeat(40)}`, { id: 'p1' }));
    const probe = reportingModel('anthropic.messages', 'claude-sonnet-4-5');
    const result = await engine.resolve({
      format: 'model',
      budget: { maxInputTokens: 100_000, model: probe.model },
    });
    const cache = result.budget?.cache as CachePrediction;
    const { model } = twoStepModel(report(cache));
    const streamed = streamText({
      model,
      system: result.system,
      messages: result.messages,
      tools: {
        lookup: tool({
          inputSchema: jsonSchema<{ order: string }>({
            type: 'object',
            properties: { order: { type: 'string' } },
          }),
          execute: async ({ order }) => `order ${order} shipped on Monday ${'detail '.repeat(50)}`,
        }),
      },
      stopWhen: stepCountIs(2),
    });
    const text = await streamed.text;
    const steps = await streamed.steps;
    expect(steps).toHaveLength(2);
    engine.set(
      withUsage(assistantText(text, { id: 'r-p1' }), {
        modelId: 'claude-sonnet-4-5',
        steps,
        cache,
      }),
    );
    await engine.save();
    return { engine, cache };
  }

  it('usage that agrees: the second step reads what the first wrote and writes nothing', async () => {
    let firstInput = 0;
    const { engine, cache } = await run('steps-agree', (planned) => {
      // The provider's count is 10% above the engine's; step 2 adds the tool call and result.
      firstInput = Math.round(planned.inputTokens * 1.1);
      const cached = Math.round((planned.readTokens + planned.writeTokens) * 1.1);
      return [
        {
          input: firstInput,
          read: Math.round(planned.readTokens * 1.1),
          write: Math.round(planned.writeTokens * 1.1),
        },
        { input: firstInput + 90, read: cached, write: 0 },
      ];
    });
    const usage = await engine.usage();
    // Recorded: both steps' figures, summed; two provider calls.
    expect(usage.calls).toBe(2);
    expect(usage.inputTokens).toBe(firstInput * 2 + 90);
    expect(usage.outputTokens).toBe(40);
    expect(usage.cache).toMatchObject({ calls: 2, agreed: 2, readLess: 0, readMore: 0 });
    // Over both steps: the second read the first one's writes; only new tokens were written.
    const cached = Math.round((cache.readTokens + cache.writeTokens) * 1.1);
    expect(usage.cache.readTokens).toBe(Math.round(cache.readTokens * 1.1) + cached);
    expect(usage.cache.inputTokens).toBe(firstInput * 2 + 90);
    expect(usage.cache.writeAmplification ?? 0).toBeLessThanOrEqual(1.1);
    const record = usage.cache.misses.filter((miss) => miss.step !== undefined);
    expect(record).toEqual([]);
  });

  it('usage that disagrees: a second step that read nothing is a miss of its own, named and counted', async () => {
    const { engine } = await run('steps-disagree', (planned) => {
      const firstInput = Math.round(planned.inputTokens * 1.1);
      return [
        {
          input: firstInput,
          read: Math.round(planned.readTokens * 1.1),
          write: Math.round(planned.writeTokens * 1.1),
        },
        { input: firstInput + 90, read: 0, write: firstInput + 90 },
      ];
    });
    const usage = await engine.usage();
    expect(usage.cache).toMatchObject({ calls: 2, agreed: 1, readLess: 1 });
    expect(usage.cache.misses.at(-1)).toEqual({
      messageId: 'r-p1',
      status: 'read-less',
      predicted: null,
      confirmed: { kind: 'system', id: 'system', name: 'system', cause: 'unexplained' },
      step: 2,
    });
    // It wrote everything again in step 2: the amplification shows it.
    expect(usage.cache.writeAmplification ?? 0).toBeGreaterThan(1.5);
  });

  it("refuses steps that are not the call's steps, before anything is set", () => {
    for (const steps of [[], 'x', [null], [{ usage: 'x' }]]) {
      expect(() =>
        withUsage(assistantText('a', { id: 'a' }), {
          modelId: 'm',
          steps: steps as never,
        }),
      ).toThrow(ValidationError);
    }
  });
});
