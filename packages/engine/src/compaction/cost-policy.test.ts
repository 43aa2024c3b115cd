import { assistantText, user } from '@ctxgraph/codecs';
import {
  type ContextStore,
  readCompaction,
  role,
  type Tokenizer,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { afterAll, describe, expect, it } from 'vitest';
import { storePairs } from '../__fixtures__/store-pairs';
import { LineRenderer } from '../__fixtures__/test-kit';
import type { BudgetReport } from '../budget/budget-report';
import type { CacheRules } from '../cache/cache-profile';
import { ContextEngine } from '../context-engine';
import type { ContextEngineOptions } from '../context-engine-options';
import type { ResolvedModelPrice } from '../model-prices';
import type { AutoCompactOptions } from './auto-compact';
import { decideCompaction } from './compaction-cost';

// autoCompact: { policy: 'cost' } (issue #39): compact after the call, in the background, only
// when the cache prediction and the prices say it saves money over the next calls; before the
// call only when the budget would otherwise leave history out.

/** One token per word: counts a test can work out by hand. */
const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};
const renderer = new LineRenderer();

// ---------------------------------------------------------------------------------------------
// The model, alone.

const anthropicPrice: ResolvedModelPrice = {
  model: 'sonnet',
  input: 3,
  cacheRead: 0.3,
  cacheWrite: 3.75,
  output: 15,
};
const breakpointRules: CacheRules = {
  mode: 'breakpoints',
  maxBreakpoints: 4,
  minCacheableTokens: 1024,
  ttlSeconds: 300,
  prefixStep: 1,
  reportsWrites: true,
};

/** A plan of `turns` turns of `turnTokens` (half question, half reply), plus a pending question. */
function plan(turns: number, turnTokens: number, maxInputTokens: number): BudgetReport {
  const messages = [];
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push({ id: `q${turn}`, role: 'user', tokens: turnTokens / 2, pending: false });
    messages.push({ id: `a${turn}`, role: 'assistant', tokens: turnTokens / 2, pending: false });
  }
  messages.push({ id: 'q-next', role: 'user', tokens: turnTokens / 2, pending: true });
  const system = 500;
  const totalTokens = system + messages.reduce((sum, message) => sum + message.tokens, 0);
  return {
    maxInputTokens,
    totalTokens,
    systemPromptTokens: system,
    messages,
    droppedHistory: { messages: 0, tokens: 0 },
  } as unknown as BudgetReport;
}

const settings = { horizon: 20, growthTokens: undefined, summaryTokens: 1000, keep: 2 };

describe('decideCompaction (the cost model)', () => {
  it('waits while the history is short, and compacts once the reads it saves pay for the summary', () => {
    const decide = (turns: number) =>
      decideCompaction({
        report: plan(turns, 1000, 200_000),
        rules: breakpointRules,
        price: anthropicPrice,
        modelId: 'sonnet',
        settings,
        previousSummaryTokens: undefined,
        summaryMessageId: undefined,
      });
    const short = decide(4);
    expect(short?.compact).toBe(false);
    expect(short?.costIfCompacted).toBeGreaterThan(short?.costIfWaiting ?? 0);
    const long = decide(60);
    expect(long?.compact).toBe(true);
    expect(long).toMatchObject({
      horizon: 20,
      growthTokens: 1000,
      summaryTokens: 1000,
      inputTokens: 500 + 60 * 1000 + 500,
      keptTokens: 1500,
    });
    expect(long?.spanTokens).toBe(59 * 1000);
  });

  it('counts reads at the cache price: without a cache, compacting pays much sooner', () => {
    const at = (turns: number, rules: CacheRules) =>
      decideCompaction({
        report: plan(turns, 1000, 200_000),
        rules,
        price: anthropicPrice,
        modelId: 'sonnet',
        settings,
        previousSummaryTokens: undefined,
        summaryMessageId: undefined,
      })?.compact;
    const noCache: CacheRules = { ...breakpointRules, mode: 'none', reportsWrites: false };
    const firstPaying = (rules: CacheRules): number => {
      for (let turns = 3; turns < 200; turns += 1) if (at(turns, rules)) return turns;
      return Number.POSITIVE_INFINITY;
    };
    expect(firstPaying(noCache)).toBeLessThan(firstPaying(breakpointRules));
  });

  it('a short horizon never pays for a summary; a budget about to cut is counted', () => {
    const input = {
      report: plan(20, 1000, 200_000),
      rules: breakpointRules,
      price: anthropicPrice,
      modelId: 'sonnet',
      previousSummaryTokens: undefined,
      summaryMessageId: undefined,
    };
    expect(decideCompaction({ ...input, settings: { ...settings, horizon: 1 } })?.compact).toBe(
      false,
    );
    // Near the budget, waiting means the compaction the budget forces, within the horizon:
    // input 21,000 (system 500); next call 22,000 reads 21,000 and writes 1,000; the one after
    // would pass 22,000, so it is compacted first (span 20,988 in, 1,000 out) and the call of
    // 3,012 (system 500, summary 1,000 + 12 framing, kept 1,500) reads nothing (the system
    // prompt is under the 1,024-token minimum) and writes it all.
    const near = decideCompaction({
      ...input,
      report: plan(20, 1000, 22_000),
      settings: { ...settings, horizon: 2 },
    });
    const expected =
      (21_000 * 0.3 + 1000 * 3.75 + (20_988 * 3 + 1000 * 15) + 3012 * 3.75) / 1_000_000;
    expect(near?.costIfWaiting).toBeCloseTo(expected, 9);
  });

  it('has nothing to decide with fewer turns than keep', () => {
    expect(
      decideCompaction({
        report: plan(1, 1000, 200_000),
        rules: breakpointRules,
        price: anthropicPrice,
        modelId: 'sonnet',
        settings,
        previousSummaryTokens: undefined,
        summaryMessageId: undefined,
      }),
    ).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// The engine, on every store that writes.

const { pairs: kinds, closeAll } = storePairs('cost-policy');
afterAll(closeAll);

const newChatId = (): string => `cost-${Math.random().toString(36).slice(2)}`;

/** A model with no known cache (nothing is read from a cache), priced by the engine's table. */
const budget = { maxInputTokens: 2000, model: 'house-model' } as const;
const prices = { 'house-model': { input: 1, output: 4 } };

function engineFor(
  store: ContextStore,
  chatId: string,
  autoCompact: Partial<AutoCompactOptions> & { summarize?: AutoCompactOptions['summarize'] },
  extra: Partial<ContextEngineOptions> = {},
): ContextEngine {
  return new ContextEngine({
    store,
    chatId,
    userId: 'u',
    renderer,
    tokenizer: words,
    autoCompact: { policy: 'cost', summarize: () => 'short summary', ...autoCompact },
    prices,
    ...extra,
  }).set(role('You help.'));
}

/** Saves `turns` exchanges of 20 words each way (24 tokens a message), ids q<from>…, a<from>… */
async function seed(engine: ContextEngine, turns: number, from = 0): Promise<void> {
  for (let turn = from; turn < from + turns; turn += 1) {
    engine.set(
      user(`question ${turn} ${'word '.repeat(18)}`, { id: `q${turn}` }),
      assistantText(`answer ${turn} ${'word '.repeat(18)}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
}

describe.each(kinds)('autoCompact policy cost (%s)', (_label, handles) => {
  it('decides before the call, sends the call uncompacted, and compacts after the save', async () => {
    const [store] = handles();
    const chatId = newChatId();
    const spans: number[] = [];
    const engine = engineFor(store, chatId, {
      summarize: (messages) => {
        spans.push(messages.length);
        return 'short summary';
      },
      summaryTokens: 20,
      keep: 1,
    });
    await seed(engine, 12);
    engine.set(user('and now?', { id: 'q12' }));
    const result = await engine.resolve({ budget });
    expect(result.compaction?.status).toBe('deferred');
    if (result.compaction?.status !== 'deferred') return;
    expect(result.compaction.decision.costIfCompacted).toBeLessThan(
      result.compaction.decision.costIfWaiting,
    );
    // Nobody waited for the summary: the call went out as the branch is.
    expect(spans).toEqual([]);
    expect(result.messages).toHaveLength(25);
    engine.set(assistantText('reply 12', { id: 'a12' }));
    await engine.save();
    const ran = await engine.runDeferredCompaction();
    expect(ran?.status).toBe('compacted');
    expect(spans).toEqual([24]);
    // Written on top of the saved reply; the boundary keeps the last turn.
    const head = await store.getHead({ chatId, branch: 'main' });
    const node = await store.getMessage({ chatId, messageId: head.headMessageId as string });
    expect(node?.parentId).toBe('a12');
    expect(node && readCompaction(node)?.boundaryId).toBe('a11');
    // Once: nothing is due any more.
    expect(await engine.runDeferredCompaction()).toBeUndefined();
    // The next call (and a fresh engine's) sends the summary and the kept turn.
    engine.set(user('next', { id: 'q13' }));
    const next = await engine.resolve({ budget });
    expect(next.messages.map((message) => message.id).slice(1)).toEqual(['q12', 'a12', 'q13']);
    const fresh = await engineFor(store, chatId, {}).resolve();
    expect(fresh.messages.map((message) => message.id).slice(1)).toEqual(['q12', 'a12']);
  });

  it('two engines that decided the same compaction write one: the other is superseded', async () => {
    const [first, second] = handles();
    const chatId = newChatId();
    await seed(engineFor(first, chatId, {}), 12);
    let summaries = 0;
    const summarize = async () => {
      summaries += 1;
      // Both summaries are under way at the same time.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return 'short summary';
    };
    const engines = [
      engineFor(first, chatId, { summarize, summaryTokens: 20, keep: 1 }),
      engineFor(second, chatId, { summarize, summaryTokens: 20, keep: 1 }),
    ];
    for (const engine of engines)
      expect((await engine.resolve({ budget })).compaction?.status).toBe('deferred');
    const outcomes = await Promise.all(engines.map((engine) => engine.runDeferredCompaction()));
    expect(outcomes.map((outcome) => outcome?.status).sort()).toEqual(['compacted', 'superseded']);
    const graph = await first.getGraph(chatId);
    expect(graph.nodes.filter((node) => readCompaction(node) !== null)).toHaveLength(1);
    expect(summaries).toBeLessThanOrEqual(2);
    // A third engine that decided before the compaction was written writes nothing either.
    const late = engineFor(second, chatId, { summarize, summaryTokens: 20, keep: 1 });
    await late.continueFrom('a11');
    expect((await late.resolve({ budget })).compaction?.status).toBe('deferred');
    expect((await late.runDeferredCompaction())?.status).toBe('superseded');
  });

  it('a turn saved by another writer while the summary is made is kept after it', async () => {
    const [first, second] = handles();
    const chatId = newChatId();
    const engine = engineFor(first, chatId, {
      summarize: async () => {
        await seed(engineFor(second, chatId, {}), 1, 12);
        return 'short summary';
      },
      summaryTokens: 20,
      keep: 1,
    });
    await seed(engine, 12);
    expect((await engine.resolve({ budget })).compaction?.status).toBe('deferred');
    expect((await engine.runDeferredCompaction())?.status).toBe('compacted');
    const shown = await engineFor(second, chatId, {}).resolve();
    expect(shown.messages.map((message) => message.id).slice(1)).toEqual([
      'q11',
      'a11',
      'q12',
      'a12',
    ]);
  });

  it('continueFrom(reply, { pastCompaction }) continues after the compaction written right after it', async () => {
    const [first, second] = handles();
    const chatId = newChatId();
    const engine = engineFor(first, chatId, { summaryTokens: 20, keep: 1 });
    await seed(engine, 12);
    expect((await engine.resolve({ budget })).compaction?.status).toBe('deferred');
    const ran = await engine.runDeferredCompaction();
    const compactionId = ran?.status === 'compacted' ? ran.result.messageId : '';
    // What a chat client does next: continue from the reply it was shown.
    const client = engineFor(second, chatId, {});
    expect(await client.continueFrom('a11', { pastCompaction: true })).toEqual({
      nodeId: compactionId,
      branch: 'main',
    });
    client.set(user('next question', { id: 'q12' }));
    await client.save();
    expect((await client.resolve()).messages.map((message) => message.id).slice(1)).toEqual([
      'q11',
      'a11',
      'q12',
    ]);
    // Without the option the reply is no branch's head: the next save would start a branch.
    const plain = engineFor(second, chatId, {});
    expect(await plain.continueFrom('a11')).toEqual({ nodeId: 'a11', branch: null });
    // A node the compaction does not follow directly is not moved.
    expect(await plain.continueFrom('a10', { pastCompaction: true })).toEqual({
      nodeId: 'a10',
      branch: null,
    });
    await expect(
      plain.continueFrom('a11', { pastCompaction: 'yes' as unknown as boolean }),
    ).rejects.toThrow(/pastCompaction must be a boolean/);
  });

  it('a failing summary writes nothing and says why', async () => {
    const [store] = handles();
    const chatId = newChatId();
    const engine = engineFor(store, chatId, {
      summarize: () => {
        throw new Error('model down');
      },
      summaryTokens: 20,
    });
    await seed(engine, 12);
    expect((await engine.resolve({ budget })).compaction?.status).toBe('deferred');
    const graph = await store.getGraph(chatId);
    expect(await engine.runDeferredCompaction()).toEqual({
      status: 'failed',
      error: expect.stringMatching(/summarizer failed \(model down\)\. Nothing was written/),
    });
    expect(await store.getGraph(chatId)).toEqual(graph);
  });
});

describe('autoCompact policy cost', () => {
  it('not worth it: says so with the sums, and nothing is due', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor(store, 'cost-wait', { horizon: 1, summaryTokens: 5000 });
    await seed(engine, 12);
    const result = await engine.resolve({ budget });
    expect(result.compaction?.status).toBe('not-worth-it');
    if (result.compaction?.status !== 'not-worth-it') return;
    expect(result.compaction.decision.costIfCompacted).toBeGreaterThan(
      result.compaction.decision.costIfWaiting,
    );
    expect(await engine.runDeferredCompaction()).toBeUndefined();
    expect((await store.getGraph('cost-wait')).nodes).toHaveLength(24);
  });

  it('compacts before the call when the budget would leave history out, as the threshold policy does', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor(store, 'cost-forced', { horizon: 1, summaryTokens: 5000, keep: 1 });
    await seed(engine, 12);
    const result = await engine.resolve({ budget: { ...budget, maxInputTokens: 300 } });
    expect(result.compaction?.status).toBe('compacted');
    expect(result.budget?.droppedHistory).toEqual({ messages: 0, tokens: 0 });
    expect(await engine.runDeferredCompaction()).toBeUndefined();
  });

  it('without a price for the model it compacts only when the budget would cut', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor(store, 'cost-unpriced', { summaryTokens: 20 });
    await seed(engine, 12);
    const unpriced = { maxInputTokens: 2000, model: 'my-own-model' };
    expect((await engine.resolve({ budget: unpriced })).compaction).toBeUndefined();
    // The engine's prices name it: now it is weighed.
    const priced = engineFor(
      store,
      'cost-unpriced',
      { summaryTokens: 20 },
      { prices: { 'my-own-model': { input: 1, output: 4 } } },
    );
    expect((await priced.resolve({ budget: unpriced })).compaction?.status).toBe('deferred');
  });

  it('a new resolve decides anew: a deferred compaction not run is dropped', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor(store, 'cost-again', { summaryTokens: 20 });
    await seed(engine, 12);
    expect((await engine.resolve({ budget })).compaction?.status).toBe('deferred');
    // A resolve with a budget decides anew (here: an unpriced model, so nothing is due).
    expect(
      (await engine.resolve({ budget: { ...budget, model: 'my-own-model' } })).compaction,
    ).toBe(undefined);
    expect(await engine.runDeferredCompaction()).toBeUndefined();
  });

  it('refuses bad cost options when the engine is made, saying which', () => {
    const store = new InMemoryContextStore();
    const cases: Array<[unknown, RegExp]> = [
      [{ policy: 'cheap' }, /autoCompact\.policy must be 'threshold' or 'cost', received "cheap"/],
      [{ policy: 'cost', horizon: 0 }, /autoCompact\.horizon must be a whole number from 1/],
      [{ policy: 'cost', horizon: 2.5 }, /autoCompact\.horizon/],
      [{ policy: 'cost', growthTokens: -1 }, /autoCompact\.growthTokens/],
      [{ policy: 'cost', summaryTokens: '500' }, /autoCompact\.summaryTokens .*received "500"/],
      [{ policy: 'cost', summaryTokens: Number.NaN }, /autoCompact\.summaryTokens/],
    ];
    for (const [options, message] of cases) {
      const make = () =>
        new ContextEngine({
          store,
          chatId: 'bad',
          userId: 'u',
          autoCompact: { summarize: () => 'S', ...(options as object) } as AutoCompactOptions,
        });
      expect(make).toThrow(ValidationError);
      expect(make).toThrow(message);
    }
  });
});
