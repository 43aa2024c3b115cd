// Budgets calibrated by reported usage (issue #39). A scripted conversation whose "provider"
// counts the input it receives with a real tokenizer (o200k, plus a few tokens of framing per
// message and per call) while the engine counts with its default estimator (about 4 characters a
// token). Each reply is saved with the provider's reported input and the call's cache prediction,
// as the AI SDK cycle does. Printed: the share of calls whose input the budget mispredicts by more
// than 5%, without calibration (`calibration: false`) and with it (after the first three calls),
// and how many calls the provider counts over the budget. A new engine per call (a server that
// keeps nothing between requests): the factor comes from the store. Prints figures only.
import { message } from '@ctxgraph/codecs';
import { ContextEngine, withUsage } from '@ctxgraph/engine';
import { guardrail, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import type { UIMessage } from 'ai';
import { printTable } from './bench-helpers';
import { random, scriptedTurn } from './scripted-conversation';

const turns = 120;
const renderer = new XmlRenderer();
const modelId = 'gpt-4o-2024-08-06';

/** Framing the provider adds: per message (role, separators) and per call (the reply's priming). */
const PROVIDER_MESSAGE_FRAMING = 3;
const PROVIDER_CALL_FRAMING = 3;

/** What the provider reports as input tokens for a call: its own tokenizer over what it got. */
function providerInputTokens(systemPrompt: string, messages: readonly UIMessage[]): number {
  let tokens =
    PROVIDER_CALL_FRAMING + o200kTokenizer.count(systemPrompt) + PROVIDER_MESSAGE_FRAMING;
  for (const entry of messages) {
    const text = entry.parts
      .map((part) =>
        part.type === 'text' || part.type === 'reasoning' ? part.text : JSON.stringify(part),
      )
      .join('\n');
    tokens += o200kTokenizer.count(text) + PROVIDER_MESSAGE_FRAMING;
  }
  return tokens;
}

interface Run {
  readonly label: string;
  readonly errors: number[];
  readonly overBudget: number;
  /** Per call, the provider's count of the input as a share of the budget. */
  readonly filled: number[];
  readonly factors: number[];
}

/** How a scripted message is changed for a variant of the conversation. */
type Variant = (entry: UIMessage, next: () => number) => UIMessage;

/** Plain English words: the estimator counts more tokens than o200k does. */
const plain: Variant = (entry) => entry;

/**
 * Log lines with base64 tokens in every message: o200k splits them much finer than 4 characters
 * a token, so the estimator counts fewer tokens than the provider does.
 */
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const codes: Variant = (entry, next) => {
  const code = () =>
    Array.from({ length: 32 }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  const line = Array.from({ length: 12 }, () => `token=${code()}`).join('\n');
  return { ...entry, parts: [...entry.parts, { type: 'text', text: `Log:\n${line}` }] };
};

async function play(calibration: boolean, maxInputTokens: number, variant: Variant): Promise<Run> {
  const next = random(39);
  const extra = random(40);
  const store = new InMemoryContextStore();
  const errors: number[] = [];
  const factors: number[] = [];
  const filled: number[] = [];
  let overBudget = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const scripted = scriptedTurn(turn, next);
    const question = variant(scripted.question, extra);
    const reply = variant(scripted.reply, extra);
    // A new engine per request: what it plans with comes from the store alone.
    const engine = new ContextEngine({
      store,
      chatId: 'calibration-bench',
      userId: 'bench',
      renderer,
      calibration,
    }).set(
      role('You are the support assistant of an online shop.'),
      guardrail({ rule: 'Never promise a refund before the order is checked.' }),
      hint('Orders ship from three warehouses; tracking numbers start with the carrier code.'),
      message(question),
    );
    const result = await engine.resolve({ budget: { maxInputTokens, model: modelId } });
    const budget = result.budget;
    if (budget === undefined) throw new Error('no budget report');
    const reported = providerInputTokens(result.systemPrompt, result.messages);
    const predicted = budget.calibration.inputTokens;
    errors.push(Math.abs(predicted - reported) / reported);
    factors.push(budget.calibration.factor);
    if (reported > maxInputTokens) overBudget += 1;
    filled.push(reported / maxInputTokens);
    engine.set(
      withUsage(message(reply), {
        usage: { inputTokens: reported, outputTokens: 100 },
        modelId,
        cache: budget.cache,
      }),
    );
    await engine.save();
  }
  return {
    label: calibration ? 'calibrated (default)' : 'calibration: false',
    errors,
    overBudget,
    filled,
    factors,
  };
}

const share = (values: readonly number[], over: number): string =>
  `${((100 * values.filter((value) => value > over).length) / values.length).toFixed(1)}%`;
const mean = (values: readonly number[]): string =>
  `${((100 * values.reduce((sum, value) => sum + value, 0)) / values.length).toFixed(1)}%`;

const variants: Array<[string, Variant]> = [
  ['plain English (the estimator counts high)', plain],
  ['with base64 log lines (the estimator counts low)', codes],
];
for (const [name, variant] of variants) {
  for (const maxInputTokens of [1_000_000, 6000]) {
    const tight = maxInputTokens < 100_000;
    const rows: Record<string, string>[] = [];
    for (const calibration of [false, true]) {
      const run = await play(calibration, maxInputTokens, variant);
      const afterThree = run.errors.slice(3);
      const row: Record<string, string> = {
        run: run.label,
        'mispredicted >5% (all calls)': share(run.errors, 0.05),
        'mispredicted >5% (after the first 3)': share(afterThree, 0.05),
        'mean error (after 3)': mean(afterThree),
        'largest error (after 3)': `${(100 * Math.max(...afterThree)).toFixed(1)}%`,
        'factor at the end': (run.factors.at(-1) ?? 1).toFixed(3),
      };
      if (tight) {
        row['provider counts over budget'] = `${run.overBudget} of ${turns}`;
        row['largest input / budget'] = `${(100 * Math.max(...run.filled)).toFixed(1)}%`;
        row['mean input / budget (calls 60+)'] = mean(run.filled.slice(60));
      }
      rows.push(row);
    }
    console.log(
      `\n${name}: ${turns} calls, maxInputTokens ${maxInputTokens.toLocaleString('en-US')}; the engine counts with its estimator, the provider with o200k (+${PROVIDER_MESSAGE_FRAMING} a message, +${PROVIDER_CALL_FRAMING} a call); a new engine per call:`,
    );
    printTable(rows);
  }
}
