// Simulated provider prompt caches. Mock models (`MockLanguageModelV3` from `ai/test`) apply each
// provider's documented caching rules to the prompt they receive (a prefix is read only up to a
// marked breakpoint, with a 20-block lookback, for Anthropic, Bedrock and OpenRouter; every
// request's prefix, in 128-token steps past 1024 and routed by promptCacheKey, for OpenAI; the
// shared prefix for Google), with minimum sizes and time-to-live expiry on a simulated clock, and
// report usage as the provider would (cache reads, and writes where the provider reports them).
// The 200-turn scripted conversation (tool calls included) is replayed per profile three ways:
// ctxgraph's plan with the profile's marks, the same plan with no marks, and the naive "drop the
// oldest message until it fits" with the usual marks (system prompt and last message). Prints
// the share of input tokens read from cache, write amplification, input cost, and how the
// engine's predictions compare with what the simulation reported. Prints figures only.
// Write amplification is shown whole and without the writes a TTL expiry forced (an entry that
// was cached but had expired: no plan avoids those, only a longer TTL does, which the
// 'Anthropic (ttl 1h)' row shows, its writes priced at Anthropic's 2× base input for 1-hour entries).
// Environment: CACHE_BENCH_BUDGET (maxInputTokens, 8000), CACHE_BENCH_RELEASE (releaseRatios,
// 'default,write-bound'; 'default' passes none, i.e. 0.3), CACHE_BENCH_PAUSE (seconds of the pause at turn 100, 600), CACHE_BENCH_ONLY (one
// profile by name), CACHE_BENCH_DEBUG (print every miss the engine recorded), CACHE_BENCH_WRITES
// (print every call that wrote more than its new tokens: what it wrote again, and why).
import { message, toModelMessages } from '@ctxgraph/codecs';
import { type CacheProfile, ContextEngine, selectCacheProfile, withUsage } from '@ctxgraph/engine';
import { guardrail, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { generateText, type ModelMessage, type SystemModelMessage, type UIMessage } from 'ai';
import { printTable } from './bench-helpers';
import { type CallFigures, type ProviderRules, providers, SimulatedCache } from './cache-simulator';
import { random, scriptedTurn } from './scripted-conversation';

const turns = 200;
const maxInputTokens = Number(process.env.CACHE_BENCH_BUDGET ?? 8000);
/** 'default' passes no releaseRatio (0.3); 'write-bound' is the opt-in for providers that bill cache writes. */
const releaseRatios = (process.env.CACHE_BENCH_RELEASE ?? 'default,write-bound')
  .split(',')
  .map((entry): number | 'write-bound' | undefined =>
    entry === 'default' ? undefined : entry === 'write-bound' ? entry : Number(entry),
  );
/** Simulated seconds between turns, and one long pause (past every 5-minute TTL). */
const secondsBetweenTurns = 30;
const pauseAtTurn = 100;
const pauseSeconds = Number(process.env.CACHE_BENCH_PAUSE ?? 600);

// The engine and the simulated providers read the same simulated clock.
let simulatedNow = Date.UTC(2026, 10, 27, 9, 0, 0);
Date.now = () => simulatedNow;

const renderer = new XmlRenderer();
const context = () => [
  role('You are the support assistant of an online shop.'),
  guardrail({ rule: 'Never promise a refund before the order is checked.' }),
  hint('Orders ship from three warehouses; tracking numbers start with the carrier code.'),
];

type Strategy = 'ctxgraph' | 'no marks' | 'naive';

interface RunResult {
  readonly calls: readonly CallFigures[];
  readonly overBudget: number;
  /** Per call, the history messages sent (before the new question): the context the model had. */
  readonly historySent: readonly number[];
  readonly engine: ContextEngine | null;
}

/** Counted as the budget bench counts: text + 4 per message. */
function uiTokens(entry: UIMessage): number {
  const text = entry.parts
    .map((part) => (part.type === 'text' ? part.text : JSON.stringify(part)))
    .join('\n');
  return o200kTokenizer.count(text) + 4;
}

async function replay(
  rules: ProviderRules,
  strategy: Strategy,
  releaseRatio: number | 'write-bound' | undefined,
): Promise<RunResult> {
  simulatedNow = Date.UTC(2026, 10, 27, 9, 0, 0);
  const cache = new SimulatedCache(rules);
  const model = cache.model();
  const next = random(14);
  const engine = new ContextEngine({
    store: new InMemoryContextStore(),
    chatId: `cache-sim-${rules.name}`,
    userId: 'bench',
    renderer,
    tokenizer: o200kTokenizer,
  }).set(...context());
  const profile: CacheProfile = rules.profile ?? selectCacheProfile(model);
  const systemPrompt = renderer.render(context());
  const all: UIMessage[] = [];
  let overBudget = 0;
  const historySent: number[] = [];
  for (let turn = 0; turn < turns; turn += 1) {
    cache.turn = turn;
    simulatedNow += (turn === pauseAtTurn ? pauseSeconds : secondsBetweenTurns) * 1000;
    const { question, reply } = scriptedTurn(turn, next);
    all.push(question);
    if (strategy === 'naive') {
      const kept = all.slice();
      const systemTokens = o200kTokenizer.count(systemPrompt);
      let totalTokens = systemTokens + kept.reduce((sum, entry) => sum + uiTokens(entry), 0);
      while (totalTokens > maxInputTokens && kept.length > 1) {
        totalTokens -= uiTokens(kept.shift() as UIMessage);
      }
      if (totalTokens > maxInputTokens) overBudget += 1;
      const messages = await toModelMessages(kept);
      const marked = profile.mark({
        model,
        chatId: `cache-sim-${rules.name}`,
        branch: 'main',
        system: { role: 'system', content: systemPrompt } satisfies SystemModelMessage,
        messages,
        markSystem: true,
        markMessages: [messages.length - 1],
      });
      await generateText({
        model,
        system: marked.system,
        messages: marked.messages as ModelMessage[],
        ...(marked.providerOptions === undefined
          ? {}
          : { providerOptions: marked.providerOptions }),
      });
      all.push(reply);
      continue;
    }
    engine.set(message(question));
    const result = await engine.resolve({
      format: 'model',
      budget: {
        maxInputTokens,
        ...(releaseRatio === undefined ? {} : { releaseRatio }),
        model,
        ...(rules.profile === undefined ? {} : { cacheProfile: rules.profile }),
        ...(strategy === 'no marks' ? { cacheMarkers: 'none' as const } : {}),
      },
    });
    if ((result.budget?.totalTokens ?? 0) > maxInputTokens) overBudget += 1;
    historySent.push(result.budget?.messages.length ?? 0);
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
        cache: result.budget?.cache,
      }),
    );
    await engine.save();
    all.push(reply);
  }
  return {
    calls: cache.calls,
    overBudget,
    historySent,
    engine: strategy === 'naive' ? null : engine,
  };
}

const percent = (part: number, whole: number): string =>
  whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)}%`;

function summarize(rules: ProviderRules, run: RunResult) {
  let input = 0;
  let read = 0;
  let write = 0;
  let fresh = 0;
  let expired = 0;
  let cost = 0;
  for (const call of run.calls) {
    input += call.input;
    read += call.read;
    write += call.write;
    fresh += call.fresh;
    expired += call.expiredWrite;
    const uncached = call.input - call.read - (rules.reportsWrites ? call.write : 0);
    const writeCost =
      (call.write - call.write1h) * rules.price.write +
      call.write1h * (rules.price.write1h ?? rules.price.write);
    cost +=
      (uncached * rules.price.input +
        call.read * rules.price.read +
        (rules.reportsWrites ? writeCost : 0)) /
      1e6;
  }
  return { input, read, write, fresh, expired, cost };
}

/** The mean of the messages each call sent, and the fewest any call after turn 20 sent. */
function historyFigures(sent: readonly number[]): string {
  const mean = sent.reduce((total, count) => total + count, 0) / Math.max(1, sent.length);
  const later = sent.slice(20);
  return `${mean.toFixed(1)} / ${later.length === 0 ? '–' : Math.min(...later)}`;
}

/** Simulated misses: calls that read less than an earlier request already sent. */
function simulatedMisses(calls: readonly CallFigures[]): CallFigures[] {
  return calls.filter(
    (call) => call.read < call.reusable - Math.max(16, call.step, Math.ceil(call.input * 0.02)),
  );
}

for (const releaseRatio of releaseRatios) {
  const rows: Record<string, string>[] = [];
  const reconciliation: Record<string, string>[] = [];
  for (const rules of providers.filter(
    (entry) => (process.env.CACHE_BENCH_ONLY ?? entry.name) === entry.name,
  )) {
    const runs = {
      ctxgraph: await replay(rules, 'ctxgraph', releaseRatio),
      'no marks': await replay(rules, 'no marks', releaseRatio),
      naive: await replay(rules, 'naive', releaseRatio),
    };
    const ours = summarize(rules, runs.ctxgraph);
    if (process.env.CACHE_BENCH_WRITES && rules.reportsWrites) {
      for (const call of runs.ctxgraph.calls) {
        if (call.write <= call.fresh) continue;
        const again = call.write - call.fresh;
        console.log(
          `${rules.name} turn ${call.turn}: input ${call.input}, read ${call.read}, wrote ${call.write} (new ${call.fresh}, again ${again}: ${call.expiredWrite > 0 ? `${call.expiredWrite} expired` : 'sent before, not in the cache: a cut moved the prefix, or it was below the minimum'})`,
        );
      }
    }
    const none = summarize(rules, runs['no marks']);
    const naive = summarize(rules, runs.naive);
    rows.push({
      profile: rules.name,
      'read from cache': percent(ours.read, ours.input),
      'write amplification': rules.reportsWrites ? (ours.write / ours.fresh).toFixed(2) : 'n/a',
      'w/o TTL-expiry writes': rules.reportsWrites
        ? ((ours.write - ours.expired) / ours.fresh).toFixed(2)
        : 'n/a',
      'calls over budget': String(runs.ctxgraph.overBudget),
      'messages sent (mean / min after turn 20)': historyFigures(runs.ctxgraph.historySent),
      'input cost (USD)': ours.cost.toFixed(4),
      'no marks: read': percent(none.read, none.input),
      'no marks: cost': none.cost.toFixed(4),
      'naive: read': percent(naive.read, naive.input),
      'naive: cost': naive.cost.toFixed(4),
      'naive: over budget': String(runs.naive.overBudget),
    });
    const usage = await runs.ctxgraph.engine?.usage();
    if (usage === undefined) continue;
    const misses = simulatedMisses(runs.ctxgraph.calls);
    const byReply = new Map(usage.cache.misses.map((miss) => [miss.messageId, miss]));
    const attributed = misses.filter((call) => byReply.get(`a${call.turn}`)?.confirmed);
    if (process.env.CACHE_BENCH_DEBUG) {
      for (const miss of usage.cache.misses) console.log(rules.name, JSON.stringify(miss));
      for (const call of misses) {
        if (!byReply.get(`a${call.turn}`)?.confirmed)
          console.log(
            rules.name,
            'unattributed',
            JSON.stringify(call),
            JSON.stringify(byReply.get(`a${call.turn}`) ?? null),
          );
      }
    }
    const causes = new Map<string, number>();
    for (const miss of usage.cache.misses) {
      const cause = miss.confirmed?.cause ?? 'none';
      causes.set(cause, (causes.get(cause) ?? 0) + 1);
    }
    reconciliation.push({
      profile: rules.name,
      'hit rate (confirmed)': percent(usage.cache.readTokens, usage.cache.inputTokens),
      'hit rate (predicted)': `${(100 * usage.cache.predictedHitRate).toFixed(1)}%`,
      'write ampl. (engine)':
        usage.cache.writeAmplification === null ? 'n/a' : usage.cache.writeAmplification.toFixed(2),
      'agreed / read-less / read-more': `${usage.cache.agreed} / ${usage.cache.readLess} / ${usage.cache.readMore}`,
      'simulated misses attributed': `${attributed.length} of ${misses.length}`,
      'breaks by cause': [...causes].map(([cause, count]) => `${cause} ${count}`).join(', '),
    });
  }
  console.log(
    `\nSimulated provider caches, ${turns} scripted turns (tool call every 5th), maxInputTokens ${maxInputTokens}, releaseRatio ${releaseRatio ?? 'default (0.3)'}, ${secondsBetweenTurns}s between turns and one ${pauseSeconds}s pause at turn ${pauseAtTurn}; provider counts (o200k of each message's JSON):`,
  );
  printTable(rows);
  console.log(
    "\nThe engine's predictions (resolve) against what the simulated provider reported (withUsage(…, { cache }) then usage()):",
  );
  printTable(reconciliation);
  console.log(
    'One chat replayed alone: OpenAI routes its requests to the same cache with or without promptCacheKey here, so "no marks" reads as much; the key matters when many chats share a prompt prefix.',
  );
}
