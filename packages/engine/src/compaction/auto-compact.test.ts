import { assistant, assistantText, user } from '@ctxgraph/codecs';
import { readCompaction, role, type Tokenizer, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import type { ContextEngineOptions } from '../context-engine-options';
import { withUsage } from '../usage/message-usage';

/** One token per word: counts a test can work out by hand. */
const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

const renderer = new LineRenderer();

function engineFor(
  chatId: string,
  store: InMemoryContextStore,
  extra: Partial<ContextEngineOptions> = {},
): ContextEngine {
  return new ContextEngine({ store, chatId, userId: 'u', renderer, tokenizer: words, ...extra });
}

/** Saves `turns` exchanges of 20 words each way, ids q<from>…, a<from>… */
async function seed(engine: ContextEngine, turns: number, from = 0): Promise<void> {
  for (let turn = from; turn < from + turns; turn += 1) {
    engine.set(
      user(`question ${turn} ${'word '.repeat(18)}`, { id: `q${turn}` }),
      assistantText(`answer ${turn} ${'word '.repeat(18)}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
}

describe('autoCompact with resolve({ budget })', () => {
  it('compacts before the budget would leave history out, and the history fits whole', async () => {
    const store = new InMemoryContextStore();
    const summaries: number[] = [];
    const engine = engineFor('auto', store, {
      autoCompact: {
        summarize: (messages) => {
          summaries.push(messages.length);
          return 'short summary';
        },
        threshold: 0.8,
        keep: 1,
      },
    });
    engine.set(role('You help.'));
    await seed(engine, 3); // 6 messages × 24 tokens (20 words + 4 overhead) = 144, plus the prompt
    const under = await engine.resolve({ budget: { maxInputTokens: 400 } });
    expect(under.compaction).toBeUndefined();
    expect(under.messages).toHaveLength(6);

    await seed(engine, 10, 3); // 26 messages: well over 0.8 × 400
    engine.set(user('and now?', { id: 'q13' }));
    const over = await engine.resolve({ budget: { maxInputTokens: 400 } });
    expect(over.compaction?.status).toBe('compacted');
    expect(summaries).toEqual([24]);
    expect(over.messages.map((message) => message.id).slice(1)).toEqual(['q12', 'a12', 'q13']);
    expect(over.budget?.droppedHistory).toEqual({ messages: 0, tokens: 0 });
    const head = await store.getMessage({
      chatId: 'auto',
      messageId: engine.headMessageId as string,
    });
    expect(head && readCompaction(head)?.boundaryId).toBe('a11');
    // The next call is under the threshold again: no second compaction.
    const again = await engine.resolve({ budget: { maxInputTokens: 400 } });
    expect(again.compaction).toBeUndefined();
    expect(summaries).toHaveLength(1);
  });

  it('a failing summarizer writes nothing and the budget leaves history out as usual', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('auto-failing', store, {
      autoCompact: {
        summarize: () => {
          throw new Error('model down');
        },
      },
    });
    await seed(engine, 12);
    const before = await store.getHead({ chatId: 'auto-failing', branch: 'main' });
    const result = await engine.resolve({ budget: { maxInputTokens: 200 } });
    expect(result.compaction).toEqual({
      status: 'failed',
      error: expect.stringMatching(/summarizer failed \(model down\)\. Nothing was written/),
    });
    expect(result.budget?.droppedHistory.messages).toBeGreaterThan(0);
    expect(await store.getHead({ chatId: 'auto-failing', branch: 'main' })).toEqual(before);
  });

  it('after a failed summary, the next call sends the summary it paid for, as a fresh engine would', async () => {
    const store = new InMemoryContextStore();
    let calls = 0;
    const engine = engineFor('auto-retry', store, {
      autoCompact: {
        summarize: () => {
          calls += 1;
          if (calls === 1) throw new Error('429 Too Many Requests');
          return 'short summary';
        },
        keep: 3,
      },
    });
    await seed(engine, 12); // 24 messages of 24 tokens
    const failed = await engine.resolve({ budget: { maxInputTokens: 220 } });
    expect(failed.compaction?.status).toBe('failed');
    expect(failed.messages[0]?.id).toBe('q9');
    const compacted = await engine.resolve({ budget: { maxInputTokens: 220 } });
    expect(compacted.compaction?.status).toBe('compacted');
    const summaryId =
      compacted.compaction?.status === 'compacted' ? compacted.compaction.result.messageId : '';
    expect(compacted.messages.map((message) => message.id)).toEqual([
      summaryId,
      ...['q9', 'a9', 'q10', 'a10', 'q11', 'a11'],
    ]);
    expect(compacted.budget?.droppedHistory).toEqual({ messages: 0, tokens: 0 });
    const fresh = await engineFor('auto-retry', store).resolve({ budget: { maxInputTokens: 220 } });
    expect(fresh.messages).toEqual(compacted.messages);
    expect(fresh.budget?.totalTokens).toBe(compacted.budget?.totalTokens);
    expect(calls).toBe(2);
  });

  it('a summary the store cannot keep is a failed compaction, never a blocked chat', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('auto-nul', store, {
      autoCompact: { summarize: () => 'a summary with a \u0000 in it' },
    });
    await seed(engine, 12);
    const graph = await store.getGraph('auto-nul');
    for (let call = 0; call < 2; call += 1) {
      const result = await engine.resolve({ budget: { maxInputTokens: 200 } });
      expect(result.compaction).toEqual({
        status: 'failed',
        error: expect.stringMatching(/NUL character.*Nothing was written/),
      });
      expect(result.budget?.droppedHistory.messages).toBeGreaterThan(0);
    }
    expect(await store.getGraph('auto-nul')).toEqual(graph);
  });

  it('says when there is nothing to compact (fewer turns than keep)', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('auto-nothing', store, {
      autoCompact: { summarize: () => 'S', keep: 5, threshold: 0.1 },
    });
    await seed(engine, 2);
    const result = await engine.resolve({ budget: { maxInputTokens: 200 } });
    expect(result.compaction).toEqual({ status: 'nothing-to-compact' });
  });

  it('is off without the option, and without a budget', async () => {
    const store = new InMemoryContextStore();
    const plain = engineFor('auto-off', store);
    await seed(plain, 12);
    const result = await plain.resolve({ budget: { maxInputTokens: 200 } });
    expect(result).not.toHaveProperty('compaction');
    const opted = engineFor('auto-off', store, { autoCompact: { summarize: () => 'S' } });
    expect(await opted.resolve()).not.toHaveProperty('compaction');
    expect((await store.getGraph('auto-off')).nodes).toHaveLength(24);
  });

  it('refuses a bad autoCompact option when the engine is made', () => {
    const store = new InMemoryContextStore();
    for (const autoCompact of [
      null,
      'yes',
      {},
      { summarize: () => 'S', threshold: 0 },
      { summarize: () => 'S', threshold: 1.5 },
      { summarize: () => 'S', threshold: Number.NaN },
      { summarize: () => 'S', keep: -2 },
    ]) {
      expect(() => engineFor('bad', store, { autoCompact: autoCompact as never })).toThrow(
        ValidationError,
      );
    }
    expect(() =>
      engineFor('bad', store, { autoCompact: { summarize: () => 'S', keep: -2 } }),
    ).toThrow(/autoCompact: keep must be/);
  });
});

describe('a budget and usage on a compacted branch', () => {
  it('a budgeted resolve always keeps the pending turn after a summary', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('budget-compacted', store);
    await seed(engine, 6);
    await engine.compact({ summarize: () => 'S', keep: 1 });
    engine.set(user('pending question', { id: 'q-pending' }));
    const result = await engine.resolve({ budget: { maxInputTokens: 60 } });
    expect(result.messages.at(-1)?.id).toBe('q-pending');
    expect(result.budget?.messages.at(-1)).toMatchObject({ id: 'q-pending', pending: true });
  });

  it('usage totals of the branch count the messages behind the summary, warm or cold', async () => {
    const store = new InMemoryContextStore();
    const engine = engineFor('usage-compacted', store);
    const usage = {
      inputTokens: 100,
      outputTokens: 10,
      totalTokens: 110,
      inputTokenDetails: { noCacheTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 },
      outputTokenDetails: { textTokens: 10, reasoningTokens: 0 },
    };
    for (let turn = 0; turn < 3; turn += 1) {
      engine.set(
        user(`q${turn}`, { id: `q${turn}` }),
        withUsage(assistant(`a${turn}`, { id: `a${turn}` }), { usage, modelId: 'gpt-4o' }),
      );
    }
    await engine.save();
    const before = await engine.usage();
    expect(before).toMatchObject({ calls: 3, inputTokens: 300, outputTokens: 30 });
    await engine.compact({ summarize: () => 'S', keep: 1 });
    expect(await engine.usage()).toEqual(before);
    const cold = engineFor('usage-compacted', store);
    expect(await cold.usage()).toEqual(before);
    expect((await cold.inspect()).usage.branch).toEqual(before);
  });
});
