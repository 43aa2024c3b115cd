// Compaction decided by cost (issue #39): long scripted chats replayed on the provider cache
// simulator (cache-simulator.ts) with Anthropic's and OpenAI's prices, under three policies:
// `autoCompact: { policy: 'cost' }` (the compaction it defers runs after the reply is saved, as
// the chat cycle runs it in the background), `autoCompact` with today's threshold policy (0.8),
// and never compacting (the budget drops the oldest turns). Prints the cost per chat (the
// simulated provider's input billing, cache reads and writes included, plus every summary call:
// its span as uncached input and the summary as output; the replies' own output is the same
// under every policy and left out), and checks, turn by turn, that the cost policy never loses
// context the threshold policy kept: every earlier message the threshold policy's call sent, or
// covered with the summary it sent, the cost policy's call sends or covers too. Figures only; no
// timings. Environment: COMPACTION_BENCH_TURNS (300), COMPACTION_BENCH_BUDGETS
// (maxInputTokens, '16000,64000').
import { message } from '@ctxgraph/codecs';
import { type AutoCompactOptions, ContextEngine, withUsage } from '@ctxgraph/engine';
import { guardrail, hint, readCompaction, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { generateText, type UIMessage } from 'ai';
import { printTable } from './bench-helpers';
import { type ProviderRules, providers, SimulatedCache } from './cache-simulator';
import { random, scriptedTurn } from './scripted-conversation';

const turns = Number(process.env.COMPACTION_BENCH_TURNS ?? 300);
const budgets = (process.env.COMPACTION_BENCH_BUDGETS ?? '16000,64000').split(',').map(Number);
const secondsBetweenTurns = 30;

let simulatedNow = Date.UTC(2026, 11, 8, 9, 0, 0);
Date.now = () => simulatedNow;

/** Output prices (USD per million) the simulator's rules leave out: the summary call's output. */
const outputPrice: Record<string, number> = { Anthropic: 15, OpenAI: 10 };

type Policy = 'cost' | 'threshold' | 'never';

const renderer = new XmlRenderer();
const context = () => [
  role('You are the support assistant of an online shop.'),
  guardrail({ rule: 'Never promise a refund before the order is checked.' }),
  hint('Orders ship from three warehouses; tracking numbers start with the carrier code.'),
];

/** A deterministic summary of about 300 tokens, as a model would write for any span. */
const summaryText = Array.from(
  { length: 30 },
  (_, index) => `Point ${index}: the customer asked about an order and was answered.`,
).join(' ');

const messageTokens = (entry: UIMessage): number =>
  o200kTokenizer.count(JSON.stringify(entry.parts)) + 4;

interface Run {
  readonly cost: number;
  readonly summaryCost: number;
  readonly compactions: number;
  /** Per turn, the ids of the earlier messages the call sent or covered with its summary. */
  readonly represented: readonly Set<string>[];
  /** Per turn, the earlier messages sent as they are. */
  readonly verbatim: readonly number[];
  /** Turns whose call left history out (neither sent nor summarized). */
  readonly leftOut: number;
}

async function replay(rules: ProviderRules, maxInputTokens: number, policy: Policy): Promise<Run> {
  simulatedNow = Date.UTC(2026, 11, 8, 9, 0, 0);
  const cache = new SimulatedCache(rules);
  const model = cache.model();
  const price = rules.price;
  const output = outputPrice[rules.name] ?? price.input;
  let summaryCost = 0;
  let compactions = 0;
  const summarize: AutoCompactOptions['summarize'] = (messages) => {
    const input = messages.reduce((sum, entry) => sum + messageTokens(entry), 0);
    summaryCost += (input * price.input + o200kTokenizer.count(summaryText) * output) / 1e6;
    compactions += 1;
    return summaryText;
  };
  const store = new InMemoryContextStore();
  const chatId = `compaction-cost-${rules.name}-${policy}`;
  const engine = new ContextEngine({
    store,
    chatId,
    userId: 'bench',
    renderer,
    tokenizer: o200kTokenizer,
    prices: {
      [rules.modelId]: {
        input: price.input,
        cacheRead: price.read,
        cacheWrite: price.write,
        output,
      },
    },
    ...(policy === 'never'
      ? {}
      : { autoCompact: { summarize, ...(policy === 'cost' ? { policy: 'cost' as const } : {}) } }),
  }).set(...context());
  const next = random(39);
  const all: string[] = [];
  const represented: Set<string>[] = [];
  const verbatim: number[] = [];
  let leftOut = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    simulatedNow += secondsBetweenTurns * 1000;
    cache.turn = turn;
    const { question, reply } = scriptedTurn(turn, next);
    engine.set(message(question));
    const result = await engine.resolve({ format: 'model', budget: { maxInputTokens, model } });
    const report = result.budget;
    if (report === undefined) throw new Error('no budget report');
    // What the call carries of the earlier messages: those it sends, and those its summary covers.
    const shown = new Set<string>();
    let sentAsIs = 0;
    for (const [index, entry] of report.messages.entries()) {
      if (entry.pending) continue;
      const node = index === 0 ? await store.getMessage({ chatId, messageId: entry.id }) : null;
      const record = node === null ? null : readCompaction(node);
      if (record === null) {
        shown.add(entry.id);
        sentAsIs += 1;
        continue;
      }
      const boundary = all.indexOf(record.boundaryId);
      for (const id of all.slice(0, boundary + 1)) shown.add(id);
    }
    represented.push(shown);
    verbatim.push(sentAsIs);
    if (all.some((id) => !shown.has(id))) leftOut += 1;
    all.push(question.id);
    const response = await generateText({
      model,
      system: result.system,
      messages: result.messages,
      ...(result.providerOptions === undefined ? {} : { providerOptions: result.providerOptions }),
    });
    engine.set(
      withUsage(message(reply), {
        usage: response.usage,
        modelId: model.modelId,
        cache: report.cache,
      }),
    );
    await engine.save();
    all.push(reply.id);
    // The chat cycle runs this in the background once the reply is saved; here it finishes
    // before the next question, as it does when the user takes a few seconds to answer.
    if (result.compaction?.status === 'deferred') await engine.runDeferredCompaction();
  }
  let cost = 0;
  for (const call of cache.calls) {
    const uncached = call.input - call.read - (rules.reportsWrites ? call.write : 0);
    cost +=
      (uncached * price.input +
        call.read * price.read +
        (rules.reportsWrites ? call.write * price.write : 0)) /
      1e6;
  }
  return { cost: cost + summaryCost, summaryCost, compactions, represented, verbatim, leftOut };
}

/** Turns where `run` carried less of the earlier messages than `reference` did. */
function turnsLosing(run: Run, reference: Run): number {
  let losing = 0;
  reference.represented.forEach((kept, turn) => {
    const own = run.represented[turn] as Set<string>;
    for (const id of kept) {
      if (!own.has(id)) {
        losing += 1;
        return;
      }
    }
  });
  return losing;
}

const mean = (values: readonly number[]): number =>
  values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

let failed = false;
const rows: Record<string, string>[] = [];
for (const maxInputTokens of budgets) {
  for (const rules of providers.filter((entry) => ['Anthropic', 'OpenAI'].includes(entry.name))) {
    const runs = {
      cost: await replay(rules, maxInputTokens, 'cost'),
      threshold: await replay(rules, maxInputTokens, 'threshold'),
      never: await replay(rules, maxInputTokens, 'never'),
    };
    const cheapest = runs.cost.cost <= Math.min(runs.threshold.cost, runs.never.cost);
    const losing = turnsLosing(runs.cost, runs.threshold);
    if (!cheapest || losing > 0 || runs.cost.leftOut > 0) failed = true;
    for (const policy of ['cost', 'threshold', 'never'] as const) {
      const run = runs[policy];
      rows.push({
        provider: rules.name,
        maxInputTokens: String(maxInputTokens),
        policy,
        'cost per chat (USD)': run.cost.toFixed(4),
        'of which summaries': run.summaryCost.toFixed(4),
        'vs threshold': `${((100 * run.cost) / runs.threshold.cost).toFixed(1)}%`,
        compactions: String(run.compactions),
        'messages sent as is (mean)': mean(run.verbatim).toFixed(1),
        'turns leaving history out': String(run.leftOut),
        'turns losing what threshold kept':
          policy === 'threshold' ? '–' : String(turnsLosing(run, runs.threshold)),
      });
    }
    console.log(
      `${rules.name}, maxInputTokens ${maxInputTokens}: cost policy cheapest of the three: ${cheapest ? 'yes' : 'NO'}; turns where it lost context the threshold policy kept: ${losing}`,
    );
  }
}
console.log(
  `\nCompaction policies over a ${turns}-turn scripted chat (tool call every 5th turn), ${secondsBetweenTurns}s between turns, on the simulated provider caches; summaries of about ${o200kTokenizer.count(summaryText)} tokens, keep 2 turns:`,
);
printTable(rows);
if (failed) {
  console.log('\nCHECK FAILED: the cost policy was not the cheapest, or lost context.');
  process.exitCode = 1;
}
