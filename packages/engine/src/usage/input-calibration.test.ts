import { assistantText, user } from '@ctxgraph/codecs';
import { BudgetExceededError, role, ValidationError } from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, it } from 'vitest';
import { storePairs } from '../__fixtures__/store-pairs';
import { LineRenderer } from '../__fixtures__/test-kit';
import type { BudgetReport } from '../budget/budget-report';
import { wantsCompaction } from '../compaction/auto-compact';
import { ContextEngine } from '../context-engine';
import type { ResolveResult } from '../resolve/budgeted-resolve';
import { withUsage } from './message-usage';

// Budgets calibrated by reported usage (issue #39): a reply's reported input tokens against the
// budget's count of that call correct the next call's plan, per model, from the records in the
// store, so a new engine (a new process) plans exactly as the warm one.

const renderer = new LineRenderer();
const { pairs: kinds, closeAll } = storePairs('calibration');
afterAll(closeAll);

const newChatId = (): string => `calibration-${Math.random().toString(36).slice(2)}`;
const words = (turn: number, count: number): string =>
  Array.from({ length: count }, (_, index) => `word${(turn * 7 + index) % 13}`).join(' ');

/** A provider that reports `ratio` times the budget's count for every call. */
interface Turn {
  readonly engine: ContextEngine;
  readonly resolved: ResolveResult;
}

/** Resolves one turn with a budget and saves the reply with what the "provider" reported. */
async function turn(
  engine: ContextEngine,
  index: number,
  report: (resolved: ResolveResult) => number,
  options: { maxInputTokens?: number; model?: string; modelId?: string } = {},
): Promise<Turn> {
  engine.set(user(`question ${index}: ${words(index, 60)}`, { id: `q${index}` }));
  const resolved = (await engine.resolve({
    budget: {
      maxInputTokens: options.maxInputTokens ?? 100_000,
      ...(options.model === undefined ? {} : { model: options.model }),
    },
  })) as ResolveResult;
  const budget = resolved.budget;
  if (budget === undefined) throw new Error('no budget report');
  engine.set(
    withUsage(assistantText(`answer ${index}: ${words(index + 1, 80)}`, { id: `a${index}` }), {
      usage: { inputTokens: report(resolved), outputTokens: 20 },
      modelId: options.modelId ?? 'claude-sonnet-4-20250514',
      cache: budget.cache,
    }),
  );
  await engine.save();
  return { engine, resolved };
}

const times = (ratio: number) => (resolved: ResolveResult) =>
  Math.round((resolved.budget?.totalTokens ?? 0) * ratio);

describe.each(kinds)('budgets calibrated by reported usage (%s)', (_label, handles) => {
  it('learns the factor from saved replies, and a new engine on the store starts with it', async () => {
    const [store, other] = handles();
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(role('You answer questions about words.'));
    const first = await turn(engine, 1, times(1.3));
    expect(first.resolved.budget?.calibration).toEqual({
      modelId: null,
      factor: 1,
      samples: 0,
      inputTokens: first.resolved.budget?.totalTokens,
    });
    await turn(engine, 2, times(1.3));
    const third = await turn(engine, 3, times(1.3));
    const calibration = third.resolved.budget?.calibration;
    expect(calibration?.modelId).toBe('claude-sonnet-4-20250514');
    expect(calibration?.samples).toBe(2);
    expect(calibration?.factor).toBeCloseTo(1.3, 2);
    const expected = (third.resolved.budget?.totalTokens ?? 0) * 1.3;
    expect(Math.abs((calibration?.inputTokens ?? 0) - expected)).toBeLessThanOrEqual(1);

    // A new engine on another store object (another process) plans exactly as the warm one.
    engine.set(user('next question', { id: 'q4' }));
    const warm = await engine.resolve({ budget: { maxInputTokens: 100_000 } });
    const fresh = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    fresh.set(role('You answer questions about words.'));
    fresh.set(user('next question', { id: 'q4' }));
    const cold = await fresh.resolve({ budget: { maxInputTokens: 100_000 } });
    expect(cold.budget?.calibration).toEqual(warm.budget?.calibration);
    expect(cold.budget?.calibration.samples).toBe(3);
    expect(cold.messages).toEqual(warm.messages);
  });

  it('keeps the input the provider will count within the budget', async () => {
    const [store] = handles();
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    for (let index = 1; index <= 3; index += 1) await turn(engine, index, times(1.5));
    engine.set(user('last question', { id: 'q9' }));
    const uncalibrated = new ContextEngine({
      store,
      chatId,
      userId: 'u',
      renderer,
      calibration: false,
    });
    uncalibrated.set(user('last question', { id: 'q9' }));
    const room = 300;
    const plain = await uncalibrated.resolve({ budget: { maxInputTokens: room } });
    const calibrated = await engine.resolve({ budget: { maxInputTokens: room } });
    expect(plain.budget?.calibration.factor).toBe(1);
    // Planned as counted, the provider would count about 1.5 × as much: over the budget.
    expect((plain.budget?.totalTokens ?? 0) * 1.5).toBeGreaterThan(room);
    expect(calibrated.budget?.calibration.factor).toBeCloseTo(1.5, 2);
    expect(calibrated.budget?.calibration.inputTokens).toBeLessThanOrEqual(room);
    expect(calibrated.messages.length).toBeLessThan(plain.messages.length);
    // Over the budget, the shortfall is told in the provider's tokens.
    engine.set(user(words(9, 400), { id: 'q10' }));
    const refused = await engine.resolve({ budget: { maxInputTokens: room } }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(BudgetExceededError.isInstance(refused)).toBe(true);
    const shortfall = (refused as BudgetExceededError).shortfall;
    expect(shortfall.maxInputTokens).toBe(room);
    expect(shortfall.tokenizer).toMatch(/^estimate:4\.00×1\.5/);
    const counted = uncalibrated.set(user(words(9, 400), { id: 'q10' }));
    const plainShortfall = await counted.resolve({ budget: { maxInputTokens: room } }).then(
      () => null,
      (error: unknown) => (error as BudgetExceededError).shortfall,
    );
    expect(shortfall.requiredTokens).toBeGreaterThan((plainShortfall?.requiredTokens ?? 0) * 1.45);
    // The samples are recorded either way; inspect() shows them.
    const snapshot = await uncalibrated.inspect();
    expect(snapshot.calibration.enabled).toBe(false);
    expect(snapshot.calibration.models[0]?.factor).toBeCloseTo(1.5, 2);
  });

  it('ignores absurd samples and smooths over the last three', async () => {
    const [store] = handles();
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await turn(engine, 1, times(1.2));
    await turn(engine, 2, times(1.2));
    // Nothing reported, a zero, a tiny and an absurd figure: none is learned from.
    await turn(engine, 3, () => 0);
    await turn(engine, 4, () => 10);
    await turn(engine, 5, () => 1_000_000_000);
    let snapshot = await engine.inspect();
    expect(snapshot.calibration.models).toEqual([
      { modelId: 'claude-sonnet-4-20250514', factor: expect.closeTo(1.2, 2), samples: 2 },
    ]);
    expect(snapshot.calibration.samples.slice(0, 3).map((sample) => sample.accepted)).toEqual([
      false,
      false,
      false,
    ]);
    // One outlier among three moves the median nothing.
    await turn(engine, 6, times(2.5));
    snapshot = await engine.inspect();
    expect(snapshot.calibration.models[0]?.factor).toBeCloseTo(1.2, 2);
    expect(snapshot.calibration.models[0]?.samples).toBe(3);
    // A negative figure is refused before anything is recorded.
    engine.set(user('q', { id: 'q7' }));
    const resolved = await engine.resolve({ budget: { maxInputTokens: 100_000 } });
    expect(() =>
      withUsage(assistantText('a', { id: 'a7' }), {
        usage: { inputTokens: -5 },
        modelId: 'claude-sonnet-4-20250514',
        cache: resolved.budget?.cache,
      }),
    ).toThrow(ValidationError);
    // A copy of the prediction (as a client could send back) is not one the engine issued.
    expect(() =>
      withUsage(assistantText('a', { id: 'a7' }), {
        usage: { inputTokens: 500 },
        modelId: 'claude-sonnet-4-20250514',
        cache: JSON.parse(JSON.stringify(resolved.budget?.cache)),
      }),
    ).toThrow(/cache must be the prediction/);
  });

  it("a client's forged record reaches nothing", async () => {
    const [store] = handles();
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await turn(engine, 1, times(1.1));
    const forged = {
      usage: {
        modelId: 'claude-sonnet-4-20250514',
        inputTokens: 100,
        calibration: {
          tokenizer: 'estimate:4.00',
          counted: 100,
          factor: 1,
          reported: 400,
          accepted: true,
          models: [{ modelId: 'claude-sonnet-4-20250514', factor: 4, samples: 9, ratios: [4] }],
        },
      },
    };
    engine.set(
      user('q2', { id: 'q2' }),
      assistantText('forged', { id: 'a2', metadata: { ctxgraph: forged } }),
    );
    await engine.save();
    engine.set(user('q3', { id: 'q3' }));
    const resolved = await engine.resolve({ budget: { maxInputTokens: 100_000 } });
    expect(resolved.budget?.calibration.factor).toBeCloseTo(1.1, 2);
    expect((await engine.inspect()).calibration.samples).toHaveLength(1);
  });

  it('keeps a factor per model, and the budget picks the model it names', async () => {
    const [store] = handles();
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await turn(engine, 1, times(1.4), { modelId: 'anthropic/claude-sonnet-4-20250514' });
    await turn(engine, 2, times(0.8), { modelId: 'openai:gpt-4o', model: 'openai:gpt-4o' });
    engine.set(user('q3', { id: 'q3' }));
    const claude = await engine.resolve({
      budget: { maxInputTokens: 100_000, model: 'claude-sonnet-4' },
    });
    expect(claude.budget?.calibration).toMatchObject({
      modelId: 'anthropic/claude-sonnet-4-20250514',
      samples: 1,
    });
    expect(claude.budget?.calibration.factor).toBeCloseTo(1.4, 2);
    const gpt = await engine.resolve({ budget: { maxInputTokens: 100_000, model: 'gpt-4o' } });
    expect(gpt.budget?.calibration.modelId).toBe('openai:gpt-4o');
    expect(gpt.budget?.calibration.factor).toBeCloseTo(0.8, 2);
    // No model named: the one sampled last.
    const unnamed = await engine.resolve({ budget: { maxInputTokens: 100_000 } });
    expect(unnamed.budget?.calibration.modelId).toBe('openai:gpt-4o');
    // A model never sampled plans as counted.
    const other = await engine.resolve({
      budget: { maxInputTokens: 100_000, model: 'gemini-2.5-flash' },
    });
    expect(other.budget?.calibration).toMatchObject({ modelId: null, factor: 1, samples: 0 });
  });

  it('inspect() shows the drift: counted, predicted and reported per reply', async () => {
    const [store] = handles();
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    const first = await turn(engine, 1, times(1.25));
    const second = await turn(engine, 2, times(1.25));
    const snapshot = await engine.inspect({ budget: { maxInputTokens: 100_000 } });
    const [newest, oldest] = snapshot.calibration.samples;
    expect(oldest).toMatchObject({
      messageId: 'a1',
      modelId: 'claude-sonnet-4-20250514',
      counted: first.resolved.budget?.totalTokens,
      factor: 1,
      accepted: true,
    });
    expect(oldest?.drift).toBeCloseTo(0.25, 2);
    expect(newest?.counted).toBe(second.resolved.budget?.totalTokens);
    expect(newest?.factor).toBeCloseTo(1.25, 2);
    expect(Math.abs(newest?.drift ?? 1)).toBeLessThan(0.01);
    expect(snapshot.budget && 'calibration' in snapshot.budget).toBe(true);
  });

  it('refuses a calibration option that is not a boolean', () => {
    const [store] = handles();
    expect(
      () =>
        new ContextEngine({
          store,
          chatId: newChatId(),
          userId: 'u',
          calibration: 'yes' as unknown as boolean,
        }),
    ).toThrow(/calibration must be a boolean/);
  });
});

describe('auto-compaction reads a calibrated plan in the provider tokens', () => {
  const report = (factor: number) =>
    ({
      totalTokens: 600,
      maxInputTokens: 1000,
      droppedHistory: { messages: 0, tokens: 0 },
      calibration: { modelId: 'm', factor, samples: 3, inputTokens: Math.round(600 * factor) },
    }) as unknown as BudgetReport;

  it('passes the threshold when the provider would count past it', () => {
    expect(wantsCompaction(report(1), 0.8)).toBe(false);
    expect(wantsCompaction(report(1.5), 0.8)).toBe(true);
  });
});
