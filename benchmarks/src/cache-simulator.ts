// A provider prompt cache simulator, shared by the cache benchmarks: mock models
// (`MockLanguageModelV3` from `ai/test`) that apply each provider's documented caching rules to
// the prompt they receive (a prefix is read only up to a marked breakpoint, with a 20-block
// lookback, for Anthropic, Bedrock and OpenRouter; every request's prefix, in 128-token steps
// past 1024 and routed by promptCacheKey, for OpenAI; the shared prefix for Google), with minimum
// sizes and time-to-live expiry on the clock `Date.now()` gives (the scripts simulate it), and
// report usage as the provider would (cache reads, and writes where the provider reports them).
import { createHash } from 'node:crypto';
import { anthropicCacheProfile, type CacheProfile } from '@ctxgraph/engine';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { MockLanguageModelV3 } from 'ai/test';

export type PromptMessage = {
  role: string;
  content: unknown;
  providerOptions?: Record<string, Record<string, unknown>>;
};
export type OptionsBag = Record<string, Record<string, unknown>> | undefined;

export interface ProviderRules {
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

export const providers: ProviderRules[] = [
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

export interface CallFigures {
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
export class SimulatedCache {
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
