import { assistant, assistantText, user } from '@ctxgraph/codecs';
import { role, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from './message-usage';
import { totalUsage, usageOf } from './usage-totals';

/** A model that reports Anthropic-style usage: 1000 input, 800 of them from cache, 100 written. */
function cachingModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    modelId: 'claude-sonnet-4-20250514',
    doGenerate: async () => ({
      content: [{ type: 'text', text: 'Answer.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 1000, noCache: 100, cacheRead: 800, cacheWrite: 100 },
        outputTokens: { total: 50, text: 50, reasoning: undefined },
      },
      warnings: [],
    }),
  });
}

describe('withUsage', () => {
  it("stores the call's usage in the node's engine record, the app's metadata as it was", async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({
      store,
      chatId: 'usage',
      userId: 'u',
      renderer: new LineRenderer(),
    });
    engine.set(role('You help.'), user('Question?', { id: 'q' }));
    const { system, messages } = await engine.resolve({
      budget: { maxInputTokens: 5000 },
      format: 'model',
    });
    const result = await generateText({ model: cachingModel(), system, messages });
    engine.set(
      withUsage(
        assistant(result.text, { id: 'a', metadata: { app: 1, ctxgraph: { compaction: 'kept' } } }),
        { usage: result.usage, modelId: result.response.modelId },
      ),
    );
    await engine.save();
    const node = await store.getMessage({ chatId: 'usage', messageId: 'a' });
    // The app's `ctxgraph` key is reserved: dropped, never read as a record.
    expect(node?.message.metadata).toEqual({ app: 1 });
    expect(node?.engineRecord).toEqual({
      usage: {
        modelId: 'claude-sonnet-4-20250514',
        inputTokens: 1000,
        cacheReadTokens: 800,
        cacheWriteTokens: 100,
        outputTokens: 50,
      },
    });
    expect(node && usageOf(node)?.cacheReadTokens).toBe(800);

    // Sonnet 4: 100 uncached × 3 + 800 read × 0.3 + 100 written × 3.75 + 50 out × 15, per million.
    const totals = await engine.usage();
    expect(totals).toMatchObject({
      calls: 1,
      inputTokens: 1000,
      uncachedInputTokens: 100,
      cacheReadTokens: 800,
      cacheWriteTokens: 100,
      outputTokens: 50,
      unpricedModels: [],
    });
    expect(totals.cost).toBeCloseTo((100 * 3 + 800 * 0.3 + 100 * 3.75 + 50 * 15) / 1e6, 12);
  });

  it('adds up per branch and per chat, and says which models have no price', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({
      store,
      chatId: 'totals',
      userId: 'u',
      renderer: new LineRenderer(),
    });
    const usage = { inputTokens: 100, outputTokens: 10 };
    engine.set(
      user('q1', { id: 'q1' }),
      withUsage(assistantText('a1', { id: 'a1' }), { usage, modelId: 'openai:gpt-4o' }),
    );
    await engine.save();
    await engine.rewind('q1');
    engine.set(withUsage(assistantText('a1b', { id: 'a1b' }), { usage, modelId: 'acme-1' }));
    await engine.save();
    const branch = await engine.usage();
    expect(branch.calls).toBe(1);
    expect(branch.cost).toBeNull();
    expect(branch.unpricedModels).toEqual(['acme-1']);
    const chat = await engine.usage({ scope: 'chat' });
    expect(chat.calls).toBe(2);
    expect(chat.byModel['openai:gpt-4o']?.cost).toBeCloseTo((100 * 2.5 + 10 * 10) / 1e6, 12);
    expect(chat.cost).toBeCloseTo((100 * 2.5 + 10 * 10) / 1e6, 12);
    expect((await engine.usage({ scope: 'chat', prices: { 'acme-1': 1 } })).unpricedModels).toEqual(
      ['acme-1 (output)'],
    );
    const snapshot = await engine.inspect();
    expect(snapshot.usage.branch.calls).toBe(1);
    expect(snapshot.usage.chat.calls).toBe(2);
    await expect(engine.usage({ scope: 'all' as 'chat' })).rejects.toThrow(
      /scope must be 'branch' or 'chat'/,
    );
  });

  it('refuses bad input', () => {
    const usage = { inputTokens: 1 };
    expect(() => withUsage(user('q'), { usage, modelId: 'm' })).toThrow(/this is a user message/);
    expect(() => withUsage(role('r'), { usage, modelId: 'm' })).toThrow(
      /must be a message fragment/,
    );
    expect(() => withUsage(assistantText('a'), { usage, modelId: '' })).toThrow(
      /modelId must be a non-empty string/,
    );
    expect(() =>
      withUsage(assistantText('a'), { usage: { inputTokens: -3 }, modelId: 'm' }),
    ).toThrow(/usage.inputTokens must be a non-negative integer or undefined, received -3/);
    expect(() =>
      withUsage(assistantText('a'), { usage: null as unknown as typeof usage, modelId: 'm' }),
    ).toThrow(ValidationError);
  });

  it('ignores messages without usage and malformed usage', () => {
    const node = (engineRecord: unknown, metadata?: unknown) => ({
      id: 'n',
      message: { id: 'n', role: 'assistant', parts: [], metadata },
      engineRecord: engineRecord as null,
    });
    expect(
      totalUsage(
        [node(null), node({ usage: { modelId: 3 } }), node(null, { ctxgraph: { usage: 'x' } })],
        {},
      ),
    ).toMatchObject({ calls: 0, cost: null, unpricedModels: [] });
  });
});

describe('withUsage add and outcome', () => {
  const usage = { inputTokens: 10, outputTokens: 2 };

  it('refuses a bad add or outcome before anything is set', () => {
    for (const [input, message] of [
      [{ usage, modelId: 'm', add: 'yes' }, 'add must be a boolean'],
      [
        { usage, modelId: 'm', outcome: 'stopped' },
        "outcome must be 'complete', 'aborted', 'error' or 'interrupted'",
      ],
      [
        { usage, modelId: 'm', outcome: null },
        "outcome must be 'complete', 'aborted', 'error' or 'interrupted'",
      ],
    ] as const) {
      expect(() => withUsage(assistantText('a'), input as never)).toThrow(message);
      expect(() => withUsage(assistantText('a'), input as never)).toThrow(ValidationError);
    }
  });

  it('records the outcome and counts replies by it; old records read as one complete call', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({
      store,
      chatId: 'outcomes',
      userId: 'u',
      renderer: new LineRenderer(),
    });
    engine.set(
      user('q1', { id: 'q1' }),
      withUsage(assistantText('a1', { id: 'a1' }), { usage, modelId: 'm' }),
    );
    engine.set(
      user('q2', { id: 'q2' }),
      withUsage(assistantText('a2', { id: 'a2' }), { usage, modelId: 'm', outcome: 'aborted' }),
    );
    engine.set(
      user('q3', { id: 'q3' }),
      withUsage(assistantText('a3', { id: 'a3' }), { usage, modelId: 'm', outcome: 'error' }),
    );
    await engine.save();
    const node = await store.getMessage({ chatId: 'outcomes', messageId: 'a2' });
    expect(node?.engineRecord).toEqual({
      usage: {
        modelId: 'm',
        inputTokens: 10,
        cacheReadTokens: null,
        cacheWriteTokens: null,
        outputTokens: 2,
        outcome: 'aborted',
      },
    });
    // The app's message carries none of it.
    expect(node?.message.metadata).toBeUndefined();
    expect(
      usageOf({
        id: 'x',
        message: { id: 'x', role: 'assistant', parts: [] },
        engineRecord: { usage: { modelId: 'old' } },
      }),
    ).toMatchObject({
      calls: 1,
      outcome: 'complete',
    });
    const totals = await engine.usage();
    expect(totals.calls).toBe(3);
    expect(totals.replies).toEqual({ complete: 1, aborted: 1, error: 1, interrupted: 0 });
    expect(totals.byModel.m?.replies).toEqual({
      complete: 1,
      aborted: 1,
      error: 1,
      interrupted: 0,
    });
    const inspected = await engine.inspect();
    expect(inspected.usage.branch.replies).toEqual({
      complete: 1,
      aborted: 1,
      error: 1,
      interrupted: 0,
    });
  });

  it('add on a new node is its usage alone; on a replaced node, summed with what was recorded', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({
      store,
      chatId: 'adds',
      userId: 'u',
      renderer: new LineRenderer(),
    });
    await engine
      .set(
        user('q', { id: 'q' }),
        withUsage(assistantText('part 1', { id: 'r' }), { usage, modelId: 'm', add: true }),
      )
      .save();
    expect(await engine.usage()).toMatchObject({ calls: 1, inputTokens: 10 });
    await engine.resolve();
    await engine
      .set(
        withUsage(assistantText('part 1 and 2', { id: 'r' }), {
          usage: { inputTokens: 30 },
          modelId: 'm',
          add: true,
          outcome: 'aborted',
        }),
      )
      .save();
    expect(await engine.usage()).toMatchObject({
      calls: 2,
      inputTokens: 40,
      outputTokens: 2,
      replies: { complete: 0, aborted: 1, error: 0, interrupted: 0 },
    });
    expect((await store.getMessage({ chatId: 'adds', messageId: 'r' }))?.engineRecord).toEqual({
      usage: {
        modelId: 'm',
        inputTokens: 40,
        cacheReadTokens: null,
        cacheWriteTokens: null,
        outputTokens: 2,
        calls: 2,
        outcome: 'aborted',
      },
    });
  });
});

describe('withUsage overflowRetry', () => {
  const usage = { inputTokens: 10, outputTokens: 2 };

  it('records the retry beside the usage and reads it back; a malformed record reads as none', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({
      store,
      chatId: 'retry',
      userId: 'u',
      renderer: new LineRenderer(),
    });
    const overflowRetry = { limit: 200, sent: 250, maxInputTokens: 140, strategy: 'cut' } as const;
    engine.set(user('Question?', { id: 'q' }));
    engine.set(
      withUsage(assistant('Answer.', { id: 'a' }), { usage, modelId: 'm', overflowRetry }),
    );
    await engine.save();
    const node = await store.getMessage({ chatId: 'retry', messageId: 'a' });
    expect(node === null ? null : usageOf(node)?.overflowRetry).toEqual(overflowRetry);
    const forged = {
      ...node,
      engineRecord: { usage: { modelId: 'm', overflowRetry: { strategy: 'x' } } },
    };
    expect(usageOf(forged as typeof node & object)?.overflowRetry).toBeUndefined();
    // The app's metadata never carries it.
    expect(node?.message.metadata).toBeUndefined();
  });

  it('refuses a malformed retry before anything is set', () => {
    const fragment = assistant('Answer.', { id: 'a' });
    for (const overflowRetry of [
      null,
      { limit: 1, sent: 2, maxInputTokens: 0, strategy: 'cut' },
      { limit: -1, sent: 2, maxInputTokens: 5, strategy: 'cut' },
      { limit: 1, sent: 2, maxInputTokens: 5, strategy: 'drop' },
    ]) {
      expect(() =>
        withUsage(fragment, { usage, modelId: 'm', overflowRetry: overflowRetry as never }),
      ).toThrow(ValidationError);
    }
  });
});
