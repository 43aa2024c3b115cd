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
import { createHash } from 'node:crypto';
import { message, toModelMessages } from '@ctxgraph/codecs';
import {
  anthropicCacheProfile,
  type CacheProfile,
  ContextEngine,
  selectCacheProfile,
  withUsage,
} from '@ctxgraph/engine';
import { guardrail, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { generateText, type ModelMessage, type SystemModelMessage, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { printTable } from './bench-helpers';
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

type PromptMessage = {
  role: string;
  content: unknown;
  providerOptions?: Record<string, Record<string, unknown>>;
};
type OptionsBag = Record<string, Record<string, unknown>> | undefined;

interface ProviderRules {
  readonly name: string;
  readonly provider: string;
  readonly modelId: string;
  readonly mode: 'breakpoints' | 'prefix';
  /** Whether a message (or one of its parts) carries this provider's mark. */
  readonly marked: (options: OptionsBag) => boolean;
  readonly maxMarks: number;
  readonly minTokens: number;
  readonly step: number;
  readonly ttlSeconds: number;
  readonly reportsWrites: boolean;
  /** Routing key of the call (OpenAI's promptCacheKey), if the provider routes by one. */
  readonly routeKey: (options: OptionsBag) => string | undefined;
  /** USD per million tokens: uncached input, cache read, cache write (1-hour entries: write1h). */
  readonly price: { input: number; read: number; write: number; write1h?: number };
  /** The cache profile the engine uses, when not the one the model selects. */
  readonly profile?: CacheProfile;
}

const anthropicLike = (
  name: string,
  provider: string,
  modelId: string,
  marked: (options: OptionsBag) => boolean,
): ProviderRules => ({
  name,
  provider,
  modelId,
  mode: 'breakpoints',
  marked,
  maxMarks: 4,
  minTokens: 1024,
  step: 1,
  ttlSeconds: 300,
  reportsWrites: true,
  routeKey: () => undefined,
  price: { input: 3, read: 0.3, write: 3.75 },
});

const anthropicMarked = (options: OptionsBag) => options?.anthropic?.cacheControl !== undefined;

const providers: ProviderRules[] = [
  anthropicLike('Anthropic', 'anthropic.messages', 'claude-sonnet-4-5', anthropicMarked),
  {
    ...anthropicLike(
      'Anthropic (ttl 1h)',
      'anthropic.messages',
      'claude-sonnet-4-5',
      anthropicMarked,
    ),
    // Anthropic's pricing: a 1-hour cache write costs 2× the base input price (5-minute: 1.25×).
    price: { input: 3, read: 0.3, write: 3.75, write1h: 6 },
    profile: anthropicCacheProfile({ ttl: '1h' }),
  },
  anthropicLike(
    'Bedrock',
    'amazon-bedrock',
    'anthropic.claude-sonnet-4-5-v1:0',
    (options) => options?.bedrock?.cachePoint !== undefined,
  ),
  anthropicLike(
    'OpenRouter',
    'openrouter.chat',
    'anthropic/claude-sonnet-4.5',
    (options) =>
      options?.openrouter?.cacheControl !== undefined ||
      options?.anthropic?.cacheControl !== undefined,
  ),
  {
    name: 'OpenAI',
    provider: 'openai.responses',
    modelId: 'gpt-5',
    mode: 'prefix',
    marked: () => false,
    maxMarks: 0,
    minTokens: 1024,
    step: 128,
    ttlSeconds: 300,
    reportsWrites: false,
    routeKey: (options) => {
      const key = options?.openai?.promptCacheKey;
      return typeof key === 'string' ? key : undefined;
    },
    price: { input: 1.25, read: 0.125, write: 1.25 },
  },
  {
    name: 'Google',
    provider: 'google.generative-ai',
    modelId: 'gemini-2.5-flash',
    mode: 'prefix',
    marked: () => false,
    maxMarks: 0,
    minTokens: 1024,
    step: 1,
    ttlSeconds: 300,
    reportsWrites: false,
    routeKey: () => undefined,
    price: { input: 0.3, read: 0.075, write: 0.3 },
  },
];

const tokenCache = new Map<string, number>();
function blockTokens(json: string): number {
  let tokens = tokenCache.get(json);
  if (tokens === undefined) {
    tokens = o200kTokenizer.count(json) + 4;
    tokenCache.set(json, tokens);
  }
  return tokens;
}

/** A message's content as the cache sees it: the marks are not part of the cached bytes. */
const contentJson = (entry: PromptMessage): string =>
  JSON.stringify(entry.content, (key, value) => (key === 'providerOptions' ? undefined : value));

const sha = (text: string): string => createHash('sha1').update(text).digest('hex');

interface CallFigures {
  readonly turn: number;
  readonly input: number;
  readonly read: number;
  readonly write: number;
  /** Leading tokens an earlier request sent too (could have been read). */
  readonly reusable: number;
  /** Tokens of messages no earlier request sent: what a cache must write at least once. */
  readonly fresh: number;
  readonly step: number;
  /** Of `write`, the tokens that were cached but had expired (written again because of the TTL). */
  readonly expiredWrite: number;
  /** Of `write`, the tokens written under a 1-hour mark. */
  readonly write1h: number;
}

/** One provider's cache, as its documentation describes it. */
class SimulatedCache {
  readonly calls: CallFigures[] = [];
  readonly #rules: ProviderRules;
  readonly #entries = new Map<string, number>();
  /** Each entry's time to live (ms), as its mark asked. */
  readonly #ttls = new Map<string, number>();
  readonly #requests = new Map<string, { keys: string[]; ends: number[]; expiresAt: number }[]>();
  readonly #seen = new Set<string>();
  readonly #sentBlocks = new Set<string>();
  turn = 0;

  constructor(rules: ProviderRules) {
    this.#rules = rules;
  }

  handle(prompt: readonly PromptMessage[], callOptions: OptionsBag): CallFigures {
    const rules = this.#rules;
    const now = Date.now();
    const ttl = rules.ttlSeconds * 1000;
    const keys: string[] = [];
    const ends: number[] = [];
    let chain = '';
    let total = 0;
    let fresh = 0;
    for (const entry of prompt) {
      const json = `${entry.role}:${contentJson(entry)}`;
      chain = sha(`${chain}|${json}`);
      total += blockTokens(json);
      if (!this.#sentBlocks.has(json)) {
        fresh += blockTokens(json);
        this.#sentBlocks.add(json);
      }
      keys.push(chain);
      ends.push(total);
    }
    let reusable = 0;
    keys.forEach((key, index) => {
      if (this.#seen.has(key)) reusable = ends[index] ?? 0;
    });
    for (const key of keys) this.#seen.add(key);
    let read = 0;
    let write = 0;
    let write1h = 0;
    let expiredWrite = 0;
    if (rules.mode === 'breakpoints') {
      const marks: number[] = [];
      prompt.forEach((entry, index) => {
        const parts = Array.isArray(entry.content) ? (entry.content as PromptMessage[]) : [];
        if (
          rules.marked(entry.providerOptions) ||
          parts.some((part) => rules.marked(part.providerOptions))
        )
          marks.push(index);
      });
      if (marks.length > rules.maxMarks)
        throw new Error(
          `${rules.name}: ${marks.length} cache breakpoints, at most ${rules.maxMarks}`,
        );
      // A mark's time to live: Anthropic's `ttl: '1h'`, else the provider's.
      const markTtl = (index: number): number => {
        const entry = prompt[index] as PromptMessage;
        const parts = Array.isArray(entry.content) ? (entry.content as PromptMessage[]) : [];
        const hour = [entry.providerOptions, ...parts.map((part) => part.providerOptions)].some(
          (options) =>
            (options?.anthropic?.cacheControl as { ttl?: string } | undefined)?.ttl === '1h',
        );
        return hour ? 3600 * 1000 : ttl;
      };
      let expiredEnd = 0;
      for (const mark of marks) {
        // The longest cached prefix within 20 blocks before the breakpoint.
        for (let index = mark; index >= Math.max(0, mark - 20); index -= 1) {
          const key = keys[index] as string;
          const expiresAt = this.#entries.get(key);
          if (expiresAt !== undefined && expiresAt <= now)
            expiredEnd = Math.max(expiredEnd, ends[index] as number);
          if (expiresAt !== undefined && expiresAt > now) {
            if ((ends[index] as number) > read) read = ends[index] as number;
            // A read refreshes the entry for its own time to live.
            this.#entries.set(key, now + (this.#ttls.get(key) ?? ttl));
            break;
          }
        }
      }
      const last = marks.at(-1);
      if (last !== undefined && (ends[last] as number) >= rules.minTokens) {
        write = Math.max(0, (ends[last] as number) - read);
        let covered = read;
        for (const mark of marks) {
          const end = ends[mark] as number;
          if (end < rules.minTokens) continue;
          const markLife = markTtl(mark);
          if (markLife > ttl) write1h += Math.max(0, end - covered);
          covered = Math.max(covered, end);
          this.#ttls.set(keys[mark] as string, markLife);
          this.#entries.set(keys[mark] as string, now + markLife);
        }
        expiredWrite = Math.min(write, Math.max(0, expiredEnd - read));
      }
    } else {
      const routeKey = rules.routeKey(callOptions) ?? '';
      const machine = `${routeKey}|${keys[0] ?? ''}`;
      const stored = (this.#requests.get(machine) ?? []).filter((entry) => entry.expiresAt > now);
      let common = 0;
      for (const request of stored) {
        let index = 0;
        while (index < keys.length && request.keys[index] === keys[index]) index += 1;
        if (index > 0) {
          common = Math.max(common, Math.min(ends[index - 1] as number, request.ends.at(-1) ?? 0));
          request.expiresAt = now + ttl;
        }
      }
      if (common >= rules.minTokens)
        read = rules.minTokens + Math.floor((common - rules.minTokens) / rules.step) * rules.step;
      stored.push({ keys, ends, expiresAt: now + ttl });
      this.#requests.set(machine, stored.slice(-8));
    }
    const figures = {
      turn: this.turn,
      input: total,
      read,
      write,
      reusable,
      fresh,
      step: rules.step,
      expiredWrite,
      write1h,
    };
    this.calls.push(figures);
    return figures;
  }

  model(): MockLanguageModelV3 {
    const rules = this.#rules;
    return new MockLanguageModelV3({
      provider: rules.provider,
      modelId: rules.modelId,
      doGenerate: async (options) => {
        const figures = this.handle(
          options.prompt as unknown as PromptMessage[],
          options.providerOptions as OptionsBag,
        );
        return {
          content: [{ type: 'text', text: 'ok' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: {
            inputTokens: {
              total: figures.input,
              noCache: figures.input - figures.read - figures.write,
              cacheRead: figures.read,
              cacheWrite: rules.reportsWrites ? figures.write : undefined,
            },
            outputTokens: { total: 1, text: 1, reasoning: undefined },
          },
          warnings: [],
        };
      },
    });
  }
}

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
