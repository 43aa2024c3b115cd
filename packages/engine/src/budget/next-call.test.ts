import { assistantText, user } from '@ctxgraph/codecs';
import { role, type Tokenizer, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import type { BudgetReport } from './budget-report';
import { estimateNextCall } from './next-call';

/** One token per word: counts a test can work out by hand. */
const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

/** A chat of `turns` exchanges of `size` words each way, and a new question pending. */
async function chatWith(chatId: string, turns: number, size: number): Promise<ContextEngine> {
  const engine = new ContextEngine({
    store: new InMemoryContextStore(),
    chatId,
    userId: 'u',
    renderer: new LineRenderer(),
    tokenizer: words,
  });
  engine.set(role('You help.'));
  for (let turn = 0; turn < turns; turn += 1) {
    engine.set(
      user(`question ${turn} ${'word '.repeat(size - 2)}`, { id: `q${turn}` }),
      assistantText(`answer ${turn} ${'word '.repeat(size - 2)}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
  return engine;
}

/** The plan of an inspect snapshot, which must have fitted. */
function planOf(budget: BudgetReport | { exceeded: unknown } | null): BudgetReport {
  if (budget === null || 'exceeded' in budget) throw new Error('expected a plan');
  return budget;
}

describe('the next call’s estimate', () => {
  it('is planned with the cache profile of the model asked about, not the default marks', async () => {
    const engine = await chatWith('openai-short', 3, 20);
    // The call an app made (for the same model), then a new question.
    await engine.resolve({ budget: { maxInputTokens: 1000, model: 'gpt-4o-mini' } });
    engine.set(user('and now?', { id: 'q-next' }));
    const snapshot = await engine.inspect({
      modelId: 'gpt-4o-mini',
      budget: { maxInputTokens: 1000 },
    });
    const plan = planOf(snapshot.budget);
    expect(plan.cache.profile).toBe('openai');
    // The new call repeats the last one's input, but OpenAI caches nothing under 1,024 tokens:
    // the estimate is what the provider would read, not the repeated prefix.
    expect(plan.prefix.reusedTokens).toBeGreaterThan(100);
    expect(plan.cache.readTokens).toBe(0);
    expect(snapshot.nextCall).toEqual({
      profile: 'openai',
      modelId: 'gpt-4o-mini',
      cachedTokens: 0,
      writtenTokens: 0,
      uncachedTokens: plan.totalTokens,
      cost: (plan.totalTokens * 0.15) / 1e6,
    });
  });

  it('counts what the profile predicts is read from the cache, priced per token kind', async () => {
    const engine = await chatWith('openai-long', 30, 40); // about 2,400 tokens
    await engine.resolve({ budget: { maxInputTokens: 100_000, model: 'openai:gpt-4o-mini' } });
    engine.set(user('and now?', { id: 'q-next' }));
    const snapshot = await engine.inspect({
      modelId: 'openai:gpt-4o-mini',
      budget: { maxInputTokens: 100_000 },
    });
    const plan = planOf(snapshot.budget);
    expect(plan.cache.profile).toBe('openai');
    // OpenAI reads the repeated prefix from 1,024 tokens on, in steps of 128.
    const read = plan.cache.readTokens;
    expect(read).toBeGreaterThanOrEqual(1024);
    expect((read - 1024) % 128).toBe(0);
    expect(plan.prefix.reusedTokens - read).toBeLessThan(128);
    expect(snapshot.nextCall).toEqual({
      profile: 'openai',
      modelId: 'openai:gpt-4o-mini',
      cachedTokens: read,
      writtenTokens: 0,
      uncachedTokens: plan.totalTokens - read,
      cost: (read * 0.075 + (plan.totalTokens - read) * 0.15) / 1e6,
    });
    // One function: the snapshot's figure is the one an app computes from the same plan.
    expect(snapshot.nextCall).toEqual(estimateNextCall(plan, { modelId: 'openai:gpt-4o-mini' }));
  });

  it('predicts nothing read for a model with no known cache', async () => {
    const engine = await chatWith('no-cache', 30, 40);
    await engine.resolve({ budget: { maxInputTokens: 100_000, model: 'echo' } });
    engine.set(user('and now?', { id: 'q-next' }));
    const snapshot = await engine.inspect({
      modelId: 'echo',
      prices: { echo: 2 },
      budget: { maxInputTokens: 100_000 },
    });
    const plan = planOf(snapshot.budget);
    expect(plan.prefix.reusedTokens).toBeGreaterThan(1024);
    expect(plan.cache.profile).toBe('none');
    expect(snapshot.nextCall).toEqual({
      profile: 'none',
      modelId: 'echo',
      cachedTokens: 0,
      writtenTokens: 0,
      uncachedTokens: plan.totalTokens,
      cost: (plan.totalTokens * 2) / 1e6,
    });
  });

  it('prices cache writes where the profile predicts them (Anthropic)', async () => {
    const engine = await chatWith('anthropic', 30, 40);
    const first = await engine.resolve({
      budget: { maxInputTokens: 100_000, model: 'claude-sonnet-4' },
    });
    const plan = first.budget as BudgetReport;
    expect(plan.cache.profile).toBe('anthropic');
    expect(plan.cache.writeTokens).toBeGreaterThan(1024);
    const estimate = estimateNextCall(plan);
    expect(estimate.modelId).toBe('claude-sonnet-4');
    expect(estimate.writtenTokens).toBe(plan.cache.writeTokens);
    expect(estimate.cachedTokens).toBe(plan.cache.readTokens);
    expect(estimate.cachedTokens + estimate.writtenTokens + estimate.uncachedTokens).toBe(
      plan.totalTokens,
    );
    expect(estimate.cost).toBeCloseTo(
      (estimate.cachedTokens * 0.3 + estimate.writtenTokens * 3.75 + estimate.uncachedTokens * 3) /
        1e6,
      12,
    );
  });

  it('a budget that names its model or profile keeps it; no price gives no cost', async () => {
    const engine = await chatWith('named', 2, 10);
    const snapshot = await engine.inspect({
      modelId: 'mystery-model',
      budget: { maxInputTokens: 1000, model: { provider: 'anthropic.messages', modelId: 'x' } },
    });
    expect(planOf(snapshot.budget).cache.profile).toBe('anthropic');
    expect(snapshot.nextCall?.cost).toBeNull();
    expect(snapshot.nextCall?.modelId).toBe('mystery-model');
    const unmarked = await engine.inspect({
      modelId: 'gpt-4o',
      budget: { maxInputTokens: 1000, cacheMarkers: 'none' },
    });
    expect(planOf(unmarked.budget).cache.profile).toBe('none');
  });

  it('refuses a price table it cannot use, naming the entry', async () => {
    const engine = await chatWith('bad-prices', 1, 10);
    const result = await engine.resolve({ budget: { maxInputTokens: 1000 } });
    expect(() =>
      estimateNextCall(result.budget as BudgetReport, { prices: { x: '3' } as never }),
    ).toThrow(ValidationError);
    expect(() =>
      estimateNextCall(result.budget as BudgetReport, { prices: { x: '3' } as never }),
    ).toThrow(/prices\["x"\]/);
  });
});
