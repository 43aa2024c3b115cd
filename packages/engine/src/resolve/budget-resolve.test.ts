import { assistantText, message, user } from '@ctxgraph/codecs';
import {
  BudgetExceededError,
  createEstimatorTokenizer,
  hint,
  role,
  type Tokenizer,
  ValidationError,
  withBudget,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { LineRenderer, scriptedModel } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import type { ResolveResult } from '../resolve/budgeted-resolve';

/** One token per word: counts a test can work out by hand. */
const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

const renderer = new LineRenderer();

function engineFor(chatId: string, store = new InMemoryContextStore()): ContextEngine {
  return new ContextEngine({ store, chatId, userId: 'u', renderer, tokenizer: words });
}

/** Saves `turns` exchanges of `size` words each way. */
async function seed(engine: ContextEngine, turns: number, size = 20): Promise<void> {
  for (let turn = 0; turn < turns; turn += 1) {
    engine.set(
      user(`question ${turn} ${'word '.repeat(size - 2)}`, { id: `q${turn}` }),
      assistantText(`answer ${turn} ${'word '.repeat(size - 2)}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
}

describe('resolve({ budget })', () => {
  it('without budget nothing changes and nothing is counted', async () => {
    const engine = engineFor('plain');
    engine.set(role('You help.'));
    await seed(engine, 3);
    const result = await engine.resolve();
    expect(result.messages).toHaveLength(6);
    expect(result).not.toHaveProperty('budget');
  });

  it("cuts in chunks of 0.3 of the budget by default, deeper with releaseRatio 'write-bound'", async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('chunking', store);
    engine.set(role('You help.'));
    await seed(engine, 20); // 40 messages of about 24 tokens
    const ids = async (budget: Record<string, unknown>) =>
      (await engine.resolve({ budget: { maxInputTokens: 700, ...budget } })).messages.length;
    const openai = { model: { provider: 'openai.responses', modelId: 'gpt-4o' } };
    const anthropic = { model: { provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' } };
    // The default is the same on every profile: chunks of 0.3 of the budget.
    const standard = await ids({});
    expect(await ids(openai)).toBe(standard);
    expect(await ids(anthropic)).toBe(standard);
    expect(await ids({ ...anthropic, releaseRatio: 0.3 })).toBe(standard);
    // 'write-bound' (opt-in, for a provider that bills cache writes) cuts deeper, in chunks of
    // the room / 1.1, so the kept history it must write again is small against what the next
    // calls add; the price is less history right after the cut.
    const deep = await ids({ ...anthropic, releaseRatio: 'write-bound' });
    expect(deep).toBeLessThan(standard);
    expect(deep).toBeGreaterThan(0);
  });

  it("refuses a releaseRatio that is neither a number from 0 to 0.9 nor 'write-bound'", async () => {
    const engine = engineFor('bad-ratio');
    await seed(engine, 1);
    for (const releaseRatio of [1, -0.1, 'deep', null])
      await expect(
        engine.resolve({ budget: { maxInputTokens: 700, releaseRatio } as never }),
      ).rejects.toThrow(/releaseRatio must be a number from 0 to 0.9 or 'write-bound'/);
  });

  it('keeps everything that fits and reports tokens per fragment and per message', async () => {
    const engine = engineFor('fits');
    engine.set(role('You help.'), hint('Be brief.'));
    await seed(engine, 2);
    engine.set(user('next question please', { id: 'q2' }));
    const result = await engine.resolve({ budget: { maxInputTokens: 1000 } });
    expect(result.messages.map((message) => message.id)).toEqual(['q0', 'a0', 'q1', 'a1', 'q2']);
    const report = result.budget;
    expect(report?.tokenizer).toBe('words');
    expect(report?.fragments.map((entry) => [entry.name, entry.tokens, entry.kept])).toEqual([
      ['role', 3, true],
      ['hint', 3, true],
    ]);
    // 20 words + 4 tokens of message overhead each; the pending question is 3 words + 4.
    expect(report?.messages.map((entry) => entry.tokens)).toEqual([24, 24, 24, 24, 7]);
    expect(report?.messages.at(-1)?.pending).toBe(true);
    expect(report?.totalTokens).toBe((report?.systemPromptTokens ?? 0) + 24 * 4 + 7);
    expect(report?.leftOut).toEqual([]);
    expect(report?.prefix).toMatchObject({ compared: false, reusedTokens: 0 });
  });

  it('drops the oldest turns in a chunk, keeps the prefix while it fits, never changes the graph', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('chunks', store);
    engine.set(role('You help.'));
    await seed(engine, 10); // 20 messages of 24 tokens
    const before = await store.getGraph('chunks');
    engine.set(user('new question here', { id: 'p0' }));
    const first = await engine.resolve({ budget: { maxInputTokens: 200, releaseRatio: 0.3 } });
    expect(first.budget?.totalTokens).toBeLessThanOrEqual(200);
    // 490 tokens; chunks of 60: the cut lands on the first boundary (turn 7) from which it fits.
    expect(first.messages[0]?.role).toBe('user');
    const firstKept = first.messages[0]?.id;
    expect(first.budget?.leftOut[0]).toMatchObject({ kind: 'history', fromId: 'q0' });
    expect(first.budget?.droppedHistory.messages).toBeGreaterThan(0);
    expect(await store.getGraph('chunks')).toEqual(before);

    // The next turn: same start, so the whole previous input is a reused prefix.
    engine.set(assistantText('short answer', { id: 'p0a' }));
    await engine.save();
    engine.set(user('another one', { id: 'p1' }));
    const second = await engine.resolve({ budget: { maxInputTokens: 200, releaseRatio: 0.3 } });
    expect(second.messages[0]?.id).toBe(firstKept);
    expect(second.budget?.prefix.compared).toBe(true);
    expect(second.budget?.prefix.firstChange).toBeNull();
    expect(second.budget?.prefix.reusedTokens).toBe(first.budget?.totalTokens);
    expect(second.budget?.breakpoints).toEqual([
      { kind: 'system' },
      { kind: 'message', id: 'p0', role: 'previous-input' },
      { kind: 'message', id: 'p1', role: 'input' },
    ]);
  });

  it('names the fragment that first changed bytes', async () => {
    const engine = engineFor('changed');
    engine.set(role('You help.'), hint('Today is Monday.'), hint('Be brief.'));
    await seed(engine, 1);
    await engine.resolve({ budget: { maxInputTokens: 1000 } });
    engine.replaceContext([role('You help.'), hint('Today is Tuesday.'), hint('Be brief.')]);
    const result = await engine.resolve({ budget: { maxInputTokens: 1000 } });
    expect(result.budget?.prefix.firstChange).toEqual({
      kind: 'fragment',
      id: '#1',
      name: 'hint',
      change: 'changed',
    });
    expect(result.budget?.prefix.reusedTokens).toBe(3);
  });

  it('leaves out low-priority fragments before history and keeps required ones', async () => {
    const engine = engineFor('priorities');
    engine.set(
      withBudget(role('You help with everything you can.'), { required: true }),
      withBudget(hint(`Catalogue ${'item '.repeat(60)}`), { priority: -1 }),
    );
    await seed(engine, 2);
    engine.set(user('pending question', { id: 'p' }));
    const result = await engine.resolve({ budget: { maxInputTokens: 120 } });
    expect(result.systemPrompt).not.toContain('Catalogue');
    expect(result.messages).toHaveLength(5);
    expect(result.budget?.leftOut).toEqual([
      { kind: 'fragment', id: '#1', name: 'hint', tokens: 62, rule: 'fragment-below-history' },
    ]);
  });

  it('budget settings survive saveContext() and loadContext() in a fresh engine', async () => {
    const store = new InMemoryContextStore();
    const original = engineFor('lane-budget', store);
    original.set(
      withBudget(role('You help with everything you can.'), { required: true }),
      withBudget(hint(`Catalogue ${'item '.repeat(60)}`), { priority: -3 }),
      withBudget(hint(`Price list ${'price '.repeat(30)}`), { priority: -1 }),
      withBudget(hint(`Returns policy ${'rule '.repeat(40)}`), { priority: 2 }),
      hint('Answer in English.'),
    );
    await original.saveContext();
    await seed(original, 2);
    const budget = { maxInputTokens: 190 };
    original.set(user('pending question', { id: 'p' }));
    const before = await original.resolve({ budget });

    const fresh = engineFor('lane-budget', store);
    const loaded = await fresh.loadContext();
    expect(loaded.map((fragment) => fragment.budget)).toEqual([
      { required: true },
      { priority: -3 },
      { priority: -1 },
      { priority: 2 },
      undefined,
    ]);
    fresh.set(user('pending question', { id: 'p' }));
    const after = await fresh.resolve({ budget });

    // The budget had to choose: the lowest priority (the catalogue) went, the price list at -1
    // stayed, and so did every history turn, in both engines alike.
    expect(before.budget?.leftOut).toEqual([
      { kind: 'fragment', id: '#1', name: 'hint', tokens: 62, rule: 'fragment-below-history' },
    ]);
    expect(after.budget?.leftOut).toEqual(before.budget?.leftOut);
    expect(after.budget?.fragments).toEqual(before.budget?.fragments);
    expect(after.systemPrompt).toBe(before.systemPrompt);
    expect(after.systemPrompt).not.toContain('Catalogue');
    expect(after.messages.map((entry) => entry.id)).toEqual(
      before.messages.map((entry) => entry.id),
    );
  });

  it('saveContext() refuses settings it cannot store, and the stored lane stays', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('lane-bad-budget', store);
    engine.set(withBudget(role('r'), { required: true }));
    await engine.saveContext();
    engine.set({ ...hint('x'), budget: { priority: Number.NaN } });
    const error = await engine.saveContext().catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /context fragment 1 \("hint"\) cannot be serialized: .*budget\.priority: expected a finite number, received NaN/,
    );
    const lane = await store.getContext('lane-bad-budget');
    expect(lane.revision).toBe(1);
    expect(lane.fragments).toEqual([{ type: 'role', text: 'r', budget: { required: true } }]);
  });

  it('throws BudgetExceededError with the breakdown when required parts do not fit', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('exceeded', store);
    engine.set(withBudget(role(`Rules ${'rule '.repeat(50)}`), { required: true }));
    engine.set(user('a pending question', { id: 'p' }));
    const error = await engine
      .resolve({ budget: { maxInputTokens: 40 } })
      .catch((caught) => caught);
    expect(BudgetExceededError.isInstance(error)).toBe(true);
    expect(error.shortfall).toMatchObject({ maxInputTokens: 40, requiredTokens: 52 + 7 });
    expect(error.shortfall.required.map((item: { id: string }) => item.id)).toEqual(['#0', 'p']);
    // Nothing was stored; the message is still pending and resolves without the budget.
    expect((await store.getGraph('exceeded')).nodes).toEqual([]);
    expect((await engine.resolve()).messages).toHaveLength(1);
  });

  it.each([
    [{ maxInputTokens: -1 }, /maxInputTokens must be a positive integer.*received -1/],
    [{ maxInputTokens: Number.NaN }, /maxInputTokens must be a positive integer.*received NaN/],
    [{ maxInputTokens: 0 }, /received 0/],
    [{ maxInputTokens: 10.5 }, /received 10.5/],
    [{ maxInputTokens: '8000' }, /received string/],
    [{ maxInputTokens: 100, releaseRatio: 1 }, /releaseRatio must be a number from 0 to 0.9/],
    [{ maxInputTokens: 100, cacheMarkers: 'openai' }, /cacheMarkers must be 'anthropic' or 'none'/],
    [null, /budget must be an object/],
  ])('refuses budget %j', async (budget, message) => {
    const engine = engineFor('bad');
    engine.set(user('hi'));
    const error = await engine
      .resolve({ budget: budget as never })
      .catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses a tokenizer that is not one', () => {
    expect(
      () =>
        new ContextEngine({
          store: new InMemoryContextStore(),
          chatId: 'c',
          userId: 'u',
          tokenizer: { id: 'x' } as unknown as Tokenizer,
        }),
    ).toThrow(/tokenizer must be a Tokenizer/);
  });

  it("marks Anthropic cache breakpoints on model messages, which reach the model's prompt", async () => {
    const engine = engineFor('markers');
    engine.set(role('You help.'));
    await seed(engine, 2);
    engine.set(user('next', { id: 'q2' }));
    const first = await engine.resolve({ budget: { maxInputTokens: 1000 }, format: 'model' });
    const cacheControl = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    expect(first.system).toEqual({
      role: 'system',
      content: first.systemPrompt,
      providerOptions: cacheControl,
    });
    expect(first.messages.at(-1)?.providerOptions).toEqual(cacheControl);
    // The previous turn's question (q1, the end of the input that was answered last) is marked
    // too, on the first call of this engine as on any: the marks come from the input alone.
    const marked = first.messages.flatMap((message, index) =>
      message.providerOptions === undefined ? [] : [index],
    );
    expect(marked).toEqual([first.messages.length - 3, first.messages.length - 1]);

    const model = scriptedModel('ok');
    await generateText({ model, system: first.system, messages: first.messages });
    const prompt = model.doGenerateCalls[0]?.prompt ?? [];
    expect(prompt[0]?.providerOptions).toEqual(cacheControl);
    expect(prompt.at(-1)?.providerOptions).toEqual(cacheControl);

    const plain = await engine.resolve({
      budget: { maxInputTokens: 1000, cacheMarkers: 'none' },
      format: 'model',
    });
    expect(plain.system).toEqual({ role: 'system', content: plain.systemPrompt });
    expect(plain.messages.some((message) => message.providerOptions)).toBe(false);
  });

  it('inspect({ budget }) plans as resolve would, prices the next call, and remembers nothing', async () => {
    const engine = engineFor('inspect');
    engine.set(role('You help.'));
    await seed(engine, 2);
    engine.set(user('q', { id: 'p0' }));
    const resolved = await engine.resolve({ budget: { maxInputTokens: 1000 } });
    const snapshot = await engine.inspect({
      budget: { maxInputTokens: 1000 },
      modelId: 'claude-sonnet-4',
    });
    const budget = snapshot.budget;
    if (budget === null || 'exceeded' in budget) throw new Error('expected a plan');
    expect(budget.prefix.reusedTokens).toBe(resolved.budget?.totalTokens);
    // The input repeats the last call's, but below Anthropic's 1,024-token minimum nothing is
    // cached: the next call is priced as its cache prediction says, all of it uncached.
    expect(budget.cache.profile).toBe('anthropic');
    expect(snapshot.nextCall).toEqual({
      profile: 'anthropic',
      modelId: 'claude-sonnet-4',
      cachedTokens: 0,
      writtenTokens: 0,
      uncachedTokens: budget.totalTokens,
      cost: (budget.totalTokens * 3) / 1e6,
    });
    const tight = await engine.inspect({ budget: { maxInputTokens: 3 } });
    expect(tight.budget).toMatchObject({ exceeded: { maxInputTokens: 3 } });
    expect(tight.nextCall).toBeNull();
    expect((await engine.inspect()).budget).toBeNull();
    // The dry runs did not replace what the last resolve remembered.
    const again = await engine.resolve({ budget: { maxInputTokens: 1000 } });
    expect(again.budget?.prefix.reusedTokens).toBe(resolved.budget?.totalTokens);
  });

  it('keeps a tool call with its result and marks the tool message that ends the input', async () => {
    const engine = engineFor('tools');
    engine.set(role('You help.'));
    await seed(engine, 6);
    engine.set(
      user('look up order 7', { id: 'q-tool' }),
      message({
        id: 'a-tool',
        role: 'assistant',
        parts: [
          {
            type: 'tool-lookupOrder',
            toolCallId: 'call-1',
            state: 'output-available',
            input: { orderId: 7 },
            output: { status: 'shipped' },
          },
        ],
      }),
    );
    const result = await engine.resolve({ budget: { maxInputTokens: 150 }, format: 'model' });
    expect(result.budget?.droppedHistory.messages).toBeGreaterThan(0);
    expect(result.messages[0]?.role).toBe('user');
    const roles = result.messages.map((entry) => entry.role);
    expect(roles.slice(-3)).toEqual(['user', 'assistant', 'tool']);
    expect(result.messages.at(-1)?.providerOptions).toEqual({
      anthropic: { cacheControl: { type: 'ephemeral' } },
    });
    expect(result.messages.at(-2)?.providerOptions).toBeUndefined();
    const model = scriptedModel('ok');
    await generateText({ model, system: result.system, messages: result.messages });
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

/**
 * What a result shows, sends and reports, without the two things only previous calls can give:
 * the prefix comparison and the cache prediction. The breakpoints are included: a fresh engine
 * marks what a warm one does.
 */
function comparable(result: ResolveResult): unknown {
  // The prefix report and the cache prediction compare with earlier calls: only they may differ.
  const { prefix: _prefix, cache: _cache, ...report } = result.budget ?? ({} as never);
  return { systemPrompt: result.systemPrompt, messages: result.messages, budget: report };
}

/** Resolves with a new engine on the same chat and context, and expects the same as `warm`. */
async function expectAsFresh(
  warm: ContextEngine,
  result: ResolveResult,
  store: InMemoryContextStore,
  chatId: string,
  maxInputTokens: number,
  releaseRatio?: number,
): Promise<void> {
  const fresh = engineFor(chatId, store);
  fresh.set(...warm.context);
  const budget = releaseRatio === undefined ? { maxInputTokens } : { maxInputTokens, releaseRatio };
  expect(comparable(result)).toEqual(comparable(await fresh.resolve({ budget })));
}

describe('a warm engine plans as a fresh one on the same chat', () => {
  it('sends the whole history again once the budget grows (a bigger model)', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('grows', store);
    engine.set(role('You help.'));
    await seed(engine, 20); // 40 messages of 24 tokens
    const small = await engine.resolve({ budget: { maxInputTokens: 500 } });
    expect(small.budget?.droppedHistory.messages).toBeGreaterThan(0);
    const big = await engine.resolve({ budget: { maxInputTokens: 2000 } });
    expect(big.messages).toHaveLength(40);
    expect(big.budget?.droppedHistory).toEqual({ messages: 0, tokens: 0 });
    await expectAsFresh(engine, big, store, 'grows', 2000);
  });

  // With chunks of a fixed share of the budget (an explicit releaseRatio), more room never means
  // less history. (The default for a profile that bills cache writes sizes chunks by the room
  // instead, so there it may cut at a later boundary: see the write-bound tests below.)
  it('sends more history once replaceContext() removes a big fragment', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('shrinks', store);
    engine.set(role('You help.'), hint(`Catalogue ${'item '.repeat(400)}`));
    await seed(engine, 20);
    const budget = { maxInputTokens: 800, releaseRatio: 0.3 };
    const crowded = await engine.resolve({ budget });
    expect(crowded.messages.length).toBeLessThan(20);
    engine.replaceContext([role('You help.')]);
    const roomy = await engine.resolve({ budget });
    expect(roomy.messages.length).toBeGreaterThan(crowded.messages.length);
    await expectAsFresh(engine, roomy, store, 'shrinks', 800, 0.3);
    // Under the default (write-bound: the default profile is Anthropic's), a warm engine still
    // plans as a fresh one.
    const byDefault = await engine.resolve({ budget: { maxInputTokens: 800 } });
    await expectAsFresh(engine, byDefault, store, 'shrinks', 800);
  });

  it('sends the summary compact() just wrote, and the turns after it', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('after-compact', store);
    engine.set(role('You help.'));
    await seed(engine, 20);
    const cut = await engine.resolve({ budget: { maxInputTokens: 500 } });
    expect(cut.budget?.droppedHistory.messages).toBeGreaterThan(0);
    // The last 10 turns stay: the turn the previous call started at (q10) is still shown.
    expect(cut.messages[0]?.id).toBe('q10');
    const compaction = await engine.compact({ summarize: () => 'the early turns', keep: 10 });
    const after = await engine.resolve({ budget: { maxInputTokens: 500 } });
    expect(after.messages[0]?.id).toBe(compaction?.messageId);
    expect(after.messages).toHaveLength(21);
    expect(after.budget?.droppedHistory).toEqual({ messages: 0, tokens: 0 });
    await expectAsFresh(engine, after, store, 'after-compact', 500);
  });

  it("keeps compact()'s summary under a budget too tight for the turns it kept, dropping the oldest of those", async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('tight-after-compact', store);
    engine.set(role('You help.'));
    await seed(engine, 20);
    const compaction = await engine.compact({ summarize: () => 'the early turns', keep: 10 });
    const summaryId = compaction?.messageId;
    expect(summaryId).toBeDefined();
    const tight = await engine.resolve({ budget: { maxInputTokens: 300, releaseRatio: 0.3 } });
    const ids = tight.messages.map((entry) => entry.id);
    // The summary first, then the newest turns; the oldest kept turns (from q10) went.
    expect(ids[0]).toBe(summaryId);
    expect(ids[1]).toMatch(/^q1\d$/);
    expect(ids).not.toContain('q10');
    expect(ids.at(-1)).toBe('a19');
    expect(tight.budget?.messages[0]?.id).toBe(summaryId);
    expect(tight.budget?.totalTokens).toBeLessThanOrEqual(300);
    const history = tight.budget?.leftOut.filter((item) => item.kind === 'history');
    expect(history).toEqual([
      expect.objectContaining({ fromId: 'q10', rule: 'history-oldest-first' }),
    ]);
    // Of the 20 messages kept after the summary, those not sent are reported as dropped.
    expect(tight.budget?.droppedHistory.messages).toBe(20 - (ids.length - 1));
    await expectAsFresh(engine, tight, store, 'tight-after-compact', 300, 0.3);
    // So tight that only the newest turn fits: the summary goes last, and the report says so.
    const tightest = await engine.resolve({ budget: { maxInputTokens: 60, releaseRatio: 0.3 } });
    expect(tightest.messages.map((entry) => entry.id)).toEqual(['q19', 'a19']);
    expect(tightest.budget?.leftOut.map((item) => item.rule)).toEqual([
      'history-oldest-first',
      'compaction-last',
    ]);
    expect(tightest.budget?.droppedHistory.messages).toBe(19);
    await expectAsFresh(engine, tightest, store, 'tight-after-compact', 60, 0.3);
  });

  it('through a mixed run of turns, budgets, context changes and compactions', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('mixed', store);
    // A fixed pseudo-random sequence (a linear congruential generator): the same run every time.
    let state = 7;
    const next = (bound: number): number => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      // The high bits: the low bits of this generator repeat with a short period.
      return Math.floor((state / 2_147_483_648) * bound);
    };
    const lanes = [
      [role('You help.')],
      [role('You help.'), hint(`Catalogue ${'item '.repeat(150)}`)],
      [role('You help.'), withBudget(hint(`Notes ${'note '.repeat(60)}`), { priority: -1 })],
    ];
    engine.set(...(lanes[0] ?? []));
    for (let step = 0; step < 60; step += 1) {
      const action = next(6);
      if (action <= 2) {
        const size = 5 + next(40);
        engine.set(
          user(`question ${step} ${'word '.repeat(size)}`, { id: `q${step}` }),
          assistantText(`answer ${step} ${'word '.repeat(size)}`, { id: `a${step}` }),
        );
        await engine.save();
      } else if (action === 3) {
        engine.replaceContext(lanes[next(lanes.length)] ?? []);
      } else if (action === 4 && step > 10) {
        await engine.compact({ summarize: () => `summary at ${step}`, keep: 1 + next(6) });
      }
      const maxInputTokens = [400, 700, 1200, 3000][next(4)] ?? 400;
      const warm = await engine.resolve({ budget: { maxInputTokens } });
      await expectAsFresh(engine, warm, store, 'mixed', maxInputTokens);
    }
  });

  it('reports the system prompt as counted after the tokenizer is calibrated', async () => {
    const store = new InMemoryContextStore();
    const tokenizer = createEstimatorTokenizer();
    const engine = new ContextEngine({
      store,
      chatId: 'calibrated',
      userId: 'u',
      renderer,
      tokenizer,
    });
    engine.set(role(`You help. ${'Be precise. '.repeat(50)}`));
    await seed(engine, 2);
    const before = await engine.resolve({ budget: { maxInputTokens: 5000 } });
    expect(before.budget?.systemPromptTokens).toBe(tokenizer.count(before.systemPrompt));
    tokenizer.calibrate({ estimatedTokens: 1000, reportedTokens: 2000 });
    const after = await engine.resolve({ budget: { maxInputTokens: 5000 } });
    const report = after.budget;
    expect(report?.systemPromptTokens).toBe(tokenizer.count(after.systemPrompt));
    expect(report?.systemPromptTokens).not.toBe(before.budget?.systemPromptTokens);
    const messageTokens = report?.messages.reduce((sum, entry) => sum + entry.tokens, 0) ?? 0;
    expect(report?.totalTokens).toBe((report?.systemPromptTokens ?? 0) + messageTokens);
  });
});
