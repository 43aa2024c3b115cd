import { BudgetExceededError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  groupTurns,
  type PlanFragment,
  type PlanInput,
  type PlanMessage,
  planBudget,
} from './plan-budget';

/** `u10 a20 u5*` → user 10 tokens, assistant 20, pending user 5; ids m0, m1, … */
function messages(script: string): { messages: PlanMessage[]; pendingFrom: number } {
  const words = script.split(' ').filter(Boolean);
  const pending = words.findIndex((word) => word.endsWith('*'));
  return {
    messages: words.map((word, index) => ({
      id: `m${index}`,
      role: word[0] === 'u' ? 'user' : word[0] === 't' ? 'tool' : 'assistant',
      tokens: Number.parseInt(word.slice(1), 10),
    })),
    pendingFrom: pending === -1 ? words.length : pending,
  };
}

function fragment(id: string, tokens: number, priority = 0, required = false): PlanFragment {
  return { id, name: id, tokens, priority, required };
}

function plan(overrides: Partial<PlanInput>): ReturnType<typeof planBudget> {
  return planBudget({
    maxInputTokens: 100,
    releaseRatio: 0.3,
    overheadTokens: 0,
    fragments: [],
    messages: [],
    pendingFrom: 0,
    tokenizer: 'test',
    ...overrides,
  });
}

describe('groupTurns', () => {
  it.each([
    [
      'u1 a2 u3 a4',
      [
        [0, 2, 3, false],
        [2, 4, 7, true],
      ],
    ],
    [
      'a1 u2 a3',
      [
        [0, 1, 1, false],
        [1, 3, 5, true],
      ],
    ],
    [
      'u1 a2 a3 u4*',
      [
        [0, 3, 6, false],
        [3, 4, 4, true],
      ],
    ],
    [
      'u1* a2* u3*',
      [
        [0, 2, 3, true],
        [2, 3, 3, true],
      ],
    ],
    ['', []],
  ])('%s', (script, expected) => {
    expect(
      groupTurns(messages(script).messages, messages(script).pendingFrom).map((turn) => [
        turn.start,
        turn.end,
        turn.tokens,
        turn.protected,
      ]),
    ).toEqual(expected);
  });
});

describe('planBudget', () => {
  it('keeps everything that fits and places breakpoints at the system prompt and the end', () => {
    const result = plan({ fragments: [fragment('#0', 10)], ...messages('u10 a20 u5*') });
    expect(result).toMatchObject({
      keptFragments: [true],
      firstKeptIndex: 0,
      leftOut: [],
      totalTokens: 45,
      droppedHistoryTokens: 0,
      breakpoints: [
        { kind: 'system' },
        { kind: 'message', id: 'm0', role: 'previous-input' },
        { kind: 'message', id: 'm2', role: 'input' },
      ],
    });
  });

  it.each([
    // [script, max, expected first kept index, total]
    // 130 > 100; chunks of 30 tokens, so every 40-token turn starts one: the first turn goes.
    ['u20 a20 u20 a20 u20 a20 u10*', 100, 2, 90],
    ['u20 a20 u20 a20 u20 a20 u10*', 130, 0, 130],
    ['u30 a30 u30 a30 u5*', 60, 4, 5], // cut as far as it must: only the pending turn is left
    ['u10 a5 t5 a5 u10 a5*', 30, 4, 15], // the tool message stays with its turn
  ])('%s within %i keeps from message %i (%i tokens)', (script, max, first, total) => {
    const result = plan({ maxInputTokens: max, ...messages(script) });
    expect(result.firstKeptIndex).toBe(first);
    expect(result.totalTokens).toBe(total);
    expect(result.totalTokens).toBeLessThanOrEqual(max);
    expect(result.droppedHistoryMessages).toBe(first);
    expect(result.leftOut).toEqual(
      first === 0
        ? []
        : [
            {
              kind: 'history',
              fromId: 'm0',
              toId: `m${first - 1}`,
              messages: first,
              tokens: result.droppedHistoryTokens,
              rule: 'history-oldest-first',
            },
          ],
    );
  });

  it('keeps its start at a fixed boundary as history grows, then cuts at the next one', () => {
    // Chunks of 50 tokens: boundaries at the turns that start after 50, 100, 150… tokens.
    const options = { maxInputTokens: 100, releaseRatio: 0.5 };
    let script = 'u20 a20 u20 a20 u20 a20 u10*';
    let result = plan({ ...options, ...messages(script) });
    // 130: dropping the first turn (offset 40) crosses no boundary; the second (offset 80) does.
    expect([result.firstKeptIndex, result.totalTokens]).toEqual([4, 50]);
    // Two more turns: the same boundary is still the earliest that fits, so the prefix is the same.
    script = 'u20 a20 u20 a20 u20 a20 u10 a10 u10*';
    result = plan({ ...options, ...messages(script) });
    expect([result.firstKeptIndex, result.totalTokens]).toEqual([4, 70]);
    expect(result.breakpoints).toEqual([
      { kind: 'system' },
      { kind: 'message', id: 'm6', role: 'previous-input' },
      { kind: 'message', id: 'm8', role: 'input' },
    ]);
    // 110 from the old start: one more chunk goes.
    script = 'u20 a20 u20 a20 u20 a20 u10 a10 u10 a30 u10*';
    const next = plan({ ...options, ...messages(script) });
    expect([next.firstKeptIndex, next.totalTokens]).toEqual([6, 70]);
  });

  it("'write-bound': chunks of the room / 1.1, so a cut rewrites at most a tenth of what the chunk lets in", () => {
    // Room for history: 110 budget - 10 overhead - 0 fragments = 100, so chunks of 90 tokens:
    // boundaries at the turns that start after 90, 180, … tokens of history.
    const options = {
      maxInputTokens: 110,
      overheadTokens: 10,
      releaseRatio: 'write-bound' as const,
    };
    const turns = (count: number): string => 'u10 a10 '.repeat(count);
    // 140 of history and a pending question: the turn at offset 100 is the first boundary from
    // which the rest fits (2 turns and the question: 60 with the overhead).
    let result = plan({ ...options, ...messages(`${turns(7)}u10*`) });
    expect([result.firstKeptIndex, result.totalTokens]).toEqual([10, 60]);
    // The same start while history grows to fill the room: every call extends the same prefix.
    result = plan({ ...options, ...messages(`${turns(9)}u10*`) });
    expect([result.firstKeptIndex, result.totalTokens]).toEqual([10, 100]);
    // Past the room, the next boundary (the turn at offset 180): one old turn is kept, the part
    // the provider writes again, against the 80 new tokens since the previous cut.
    result = plan({ ...options, ...messages(`${turns(10)}u10*`) });
    expect([result.firstKeptIndex, result.totalTokens]).toEqual([18, 40]);
    // With the fixed share it replaces (0.3 of the budget: boundaries every 33 tokens), the same
    // history is cut shallower, so each cut rewrites more and comes sooner.
    const shallow = plan({ ...options, releaseRatio: 0.3, ...messages(`${turns(7)}u10*`) });
    expect(shallow.firstKeptIndex).toBe(8);
  });

  it("marks the end of the previous turn's question, read from this input alone", () => {
    // A tool turn: the question ends before the first assistant message.
    expect(plan(messages('u10 t5 a10 a10 u10*')).breakpoints).toEqual([
      { kind: 'system' },
      { kind: 'message', id: 'm1', role: 'previous-input' },
      { kind: 'message', id: 'm4', role: 'input' },
    ]);
    // The first turn has no previous one.
    expect(plan(messages('u10*')).breakpoints).toEqual([
      { kind: 'system' },
      { kind: 'message', id: 'm0', role: 'input' },
    ]);
    // A previous question that was cut off is not marked.
    const cut = plan({
      maxInputTokens: 40,
      releaseRatio: 0.5,
      ...messages('u20 a20 u20 a20 u10*'),
    });
    expect(cut.firstKeptIndex).toBe(4);
    expect(cut.breakpoints).toHaveLength(2);
  });

  it('starts at the earliest boundary that fits, wherever the previous plan started', () => {
    const options = { maxInputTokens: 100, releaseRatio: 0.5 };
    const cut = plan({ ...options, ...messages('u20 a20 u20 a20 u20 a20 u10*') });
    expect(cut.firstKeptIndex).toBe(4);
    // A bigger budget (another model): the whole history fits again, as for a new engine.
    const grown = plan({
      ...options,
      maxInputTokens: 200,
      ...messages('u20 a20 u20 a20 u20 a20 u10*'),
    });
    expect(grown.firstKeptIndex).toBe(0);
    expect(grown.leftOut).toEqual([]);
    // A fragment removed: the room it took goes back to history.
    const crowded = plan({
      ...options,
      fragments: [fragment('#0', 50)],
      ...messages('u10 a10 u10 a10 u10 a10 u5*'),
    });
    expect(crowded.firstKeptIndex).toBe(6);
    const roomy = plan({
      ...options,
      ...messages('u10 a10 u10 a10 u10 a10 u5*'),
    });
    expect(roomy.firstKeptIndex).toBe(0);
  });

  it('drops fragments below priority 0 before history, and the rest only after history', () => {
    const fragments = [
      fragment('#0', 10, 0, true),
      fragment('#1', 20, -1),
      fragment('#2', 20, -1),
      fragment('#3', 30, 5),
      fragment('#4', 30, 1),
    ];
    // 110 fragments + 25 messages = 135 > 100: both below-history fragments go (-40 = 95).
    let result = plan({ fragments, ...messages('u10 a10 u5*') });
    expect(result.keptFragments).toEqual([true, false, false, true, true]);
    expect(result.leftOut.map((item) => [item.kind === 'fragment' && item.id, item.rule])).toEqual([
      ['#2', 'fragment-below-history'],
      ['#1', 'fragment-below-history'],
    ]);
    expect(result.firstKeptIndex).toBe(0);
    expect(result.totalTokens).toBe(95);
    // Tighter: history goes next, then priority 1 before priority 5.
    result = plan({ fragments, maxInputTokens: 60, ...messages('u10 a10 u5*') });
    expect(
      result.leftOut.map((item) => [item.kind === 'fragment' ? item.id : item.toId, item.rule]),
    ).toEqual([
      ['#2', 'fragment-below-history'],
      ['#1', 'fragment-below-history'],
      ['#4', 'fragment-priority'],
      ['m1', 'history-oldest-first'],
    ]);
    expect(result.droppedHistoryTokens).toBe(20);
    expect(result.totalTokens).toBe(45);
  });

  it('throws BudgetExceededError with the breakdown when the required parts do not fit', () => {
    const run = () =>
      plan({
        maxInputTokens: 50,
        overheadTokens: 5,
        fragments: [fragment('#0', 30, 0, true), fragment('#1', 100)],
        ...messages('u100 a100 u10 a10*'),
      });
    expect(run).toThrow(BudgetExceededError);
    try {
      run();
    } catch (error) {
      expect(BudgetExceededError.isInstance(error) && error.shortfall).toEqual({
        maxInputTokens: 50,
        requiredTokens: 55,
        tokenizer: 'test',
        required: [
          { kind: 'fragment', id: '#0', name: '#0', tokens: 30, keptBecause: 'required' },
          { kind: 'message', id: 'm2', name: 'user', tokens: 10, keptBecause: 'pending' },
          { kind: 'message', id: 'm3', name: 'assistant', tokens: 10, keptBecause: 'pending' },
        ],
      });
    }
  });

  it('fits exactly at the budget', () => {
    expect(plan({ maxInputTokens: 30, ...messages('u10 a10 u10*') }).firstKeptIndex).toBe(0);
  });
});

describe('planBudget after a compaction (its message leads the history)', () => {
  /** `messages(script)` with m0 flagged as the compaction's shown message. */
  function compacted(script: string): { messages: PlanMessage[]; pendingFrom: number } {
    const result = messages(script);
    const [first, ...rest] = result.messages;
    return { ...result, messages: [{ ...(first as PlanMessage), compaction: true }, ...rest] };
  }

  it('keeps our summary and drops the oldest turns after it, where a plain history loses it first', () => {
    // m0 is compact()'s summary (a user message): 30 + 80 of turns + 10 pending = 120 > 100.
    const script = 'u30 u20 a20 u20 a20 u10*';
    const kept = plan(compacted(script));
    expect([kept.keptCompaction, kept.firstKeptIndex, kept.totalTokens]).toEqual([true, 3, 80]);
    expect(kept.leftOut).toEqual([
      {
        kind: 'history',
        fromId: 'm1',
        toId: 'm2',
        messages: 2,
        tokens: 40,
        rule: 'history-oldest-first',
      },
    ]);
    expect([kept.droppedHistoryMessages, kept.droppedHistoryTokens]).toEqual([2, 40]);
    // Unflagged, the same messages lose the summary first (what issue #27 found).
    const plain = plan(messages(script));
    expect([plain.keptCompaction, plain.firstKeptIndex]).toEqual([false, 1]);
  });

  it('keeps a provider-compaction reply (an assistant message) the same way', () => {
    const result = plan({ maxInputTokens: 50, ...compacted('a30 u20 a20 u10*') });
    expect([result.keptCompaction, result.firstKeptIndex, result.totalTokens]).toEqual([
      true,
      3,
      40,
    ]);
    expect(result.breakpoints).toEqual([
      { kind: 'system' },
      { kind: 'message', id: 'm3', role: 'input' },
    ]);
  });

  it('keeps the whole history when it fits, from its first message', () => {
    const result = plan(compacted('u30 u20 a20 u10*'));
    expect([result.keptCompaction, result.firstKeptIndex, result.leftOut]).toEqual([false, 0, []]);
  });

  it("lets the compaction's message go only when no other history fits, with rule 'compaction-last'", () => {
    // 30 + 40 + 10: dropping every other turn leaves 40 > 35, so the summary goes too.
    const result = plan({ maxInputTokens: 35, ...compacted('u30 u20 a20 u10*') });
    expect([result.keptCompaction, result.firstKeptIndex, result.totalTokens]).toEqual([
      false,
      3,
      10,
    ]);
    expect(result.leftOut).toEqual([
      {
        kind: 'history',
        fromId: 'm1',
        toId: 'm2',
        messages: 2,
        tokens: 40,
        rule: 'history-oldest-first',
      },
      {
        kind: 'history',
        fromId: 'm0',
        toId: 'm0',
        messages: 1,
        tokens: 30,
        rule: 'compaction-last',
      },
    ]);
    expect([result.droppedHistoryMessages, result.droppedHistoryTokens]).toEqual([3, 70]);
    // History (the summary included) still goes before fragments at priority 0 or above.
    const withFragment = plan({
      maxInputTokens: 45,
      fragments: [fragment('#0', 20)],
      ...compacted('u30 u20 a20 u10*'),
    });
    expect([withFragment.keptFragments, withFragment.keptCompaction]).toEqual([[true], false]);
    expect(withFragment.totalTokens).toBe(30);
  });

  it('never drops the pending turn or a required fragment for the summary', () => {
    expect(() =>
      plan({
        maxInputTokens: 40,
        fragments: [fragment('#0', 35, 0, true)],
        ...compacted('u30 u20 a20 u10*'),
      }),
    ).toThrow(BudgetExceededError);
  });

  it('cuts at boundaries counted from after the summary, so a longer history cuts at the same place', () => {
    const options = { maxInputTokens: 100, releaseRatio: 0.5 };
    const before = plan({ ...options, ...compacted('u20 u20 a20 u20 a20 u20 a20 u10*') });
    const after = plan({ ...options, ...compacted('u20 u20 a20 u20 a20 u20 a20 u10 a10 u10*') });
    expect([before.keptCompaction, before.firstKeptIndex]).toEqual([true, 5]);
    expect([after.keptCompaction, after.firstKeptIndex]).toEqual([true, 5]);
  });
});
