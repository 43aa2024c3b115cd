// Provider cache profiles: how each provider caches a prompt prefix, and how the plan's
// breakpoints become that provider's marks on the model messages (or a call-level option).
// Runtime-neutral: plain data and pure functions over AI SDK message types.
import { ValidationError } from '@ctxgraph/fragments-core';
import type { ModelMessage, SystemModelMessage } from 'ai';
import { segmentHash } from './segment-hash';

/** The AI SDK's provider options (`providerOptions` of a message, a part or a call). */
export type CacheProviderOptions = NonNullable<SystemModelMessage['providerOptions']>;

/**
 * The model a call goes to, as the AI SDK names it: a `LanguageModel` object has both fields
 * (`anthropic('claude-sonnet-4-5')` has `provider: 'anthropic.messages'`).
 */
export interface CacheModel {
  /** The AI SDK provider id (`'anthropic.messages'`, `'openai.responses'`, `'amazon-bedrock'`, …). */
  readonly provider: string;
  /** The provider's model id (`'claude-sonnet-4-5'`, `'gpt-5'`, `'anthropic/claude-sonnet-4'`). */
  readonly modelId: string;
}

/** How a provider caches a prompt, for one model. */
export interface CacheRules {
  /**
   * `'breakpoints'`: only prefixes that end at a marked breakpoint are cached (Anthropic,
   * Bedrock, Anthropic models through OpenRouter); `'prefix'`: the provider caches the prefixes
   * of every request by itself (OpenAI, Google); `'none'`: nothing is cached.
   */
  readonly mode: 'breakpoints' | 'prefix' | 'none';
  /** The most marks a request may carry (0 where the provider takes none). */
  readonly maxBreakpoints: number;
  /** A prefix shorter than this is never cached. */
  readonly minCacheableTokens: number;
  /** How long an unused cache entry lives, in seconds (each read renews it). */
  readonly ttlSeconds: number;
  /**
   * `'prefix'` mode: a cached prefix grows in steps of this many tokens past the minimum (OpenAI:
   * 128); 1 elsewhere.
   */
  readonly prefixStep: number;
  /** Whether the provider reports cache writes in usage (`inputTokenDetails.cacheWriteTokens`). */
  readonly reportsWrites: boolean;
}

/** What a profile marks: the conversation as model messages and where the plan puts breakpoints. */
export interface CacheMarkInput {
  readonly model: CacheModel | null;
  readonly chatId: string;
  readonly branch: string;
  /** The system message, unmarked. */
  readonly system: SystemModelMessage;
  /** The model messages, unmarked. */
  readonly messages: readonly ModelMessage[];
  /** Whether the plan puts a breakpoint after the system prompt. */
  readonly markSystem: boolean;
  /** Indexes in `messages` of the messages that end at a breakpoint, oldest first. */
  readonly markMessages: readonly number[];
}

/** A profile's answer: the messages with its marks, and the call-level options it needs. */
export interface CacheMarkOutput {
  readonly system: SystemModelMessage;
  readonly messages: ModelMessage[];
  /** Options for the call itself (`generateText({ providerOptions })`), such as a cache key. */
  readonly providerOptions: CacheProviderOptions | undefined;
}

/**
 * How one provider caches, and how the plan's breakpoints reach it. A small contract: an app adds
 * its own by passing an object of this shape as `budget.cacheProfile`.
 */
export interface CacheProfile {
  /** A stable name, reported in the budget report and recorded with usage (`'anthropic'`). */
  readonly id: string;
  /** Whether this profile is the one for `model`. */
  matches(model: CacheModel): boolean;
  /** The caching rules for `modelId` (limits differ per model family). */
  rules(modelId: string): CacheRules;
  /**
   * Marks the plan's breakpoints its provider's way (at most `rules().maxBreakpoints`, newest
   * kept) and returns the call-level options; never changes its input.
   */
  mark(input: CacheMarkInput): CacheMarkOutput;
}

/** The breakpoints to mark within `max`: the newest ones (they cover the longest prefixes). */
function limitMarks(input: CacheMarkInput, max: number): { system: boolean; messages: number[] } {
  const messages = input.markMessages.slice(Math.max(0, input.markMessages.length - max));
  const system = input.markSystem && messages.length < max;
  return { system, messages };
}

/** Merges `options` into a message's own provider options. */
function withOptions<T extends { providerOptions?: CacheProviderOptions }>(
  message: T,
  options: CacheProviderOptions,
): T {
  return { ...message, providerOptions: { ...message.providerOptions, ...options } };
}

/** A profile that marks messages with one fixed provider option (Anthropic, Bedrock, OpenRouter). */
function messageMarker(
  options: CacheProviderOptions,
  max: number,
): (input: CacheMarkInput) => CacheMarkOutput {
  return (input) => {
    const marks = limitMarks(input, max);
    const marked = new Set(marks.messages);
    const messages = input.messages.map((message, index) =>
      marked.has(index) ? withOptions(message, options) : message,
    );
    const system =
      marks.system && input.system.content !== ''
        ? withOptions(input.system, options)
        : input.system;
    return { system, messages, providerOptions: undefined };
  };
}

const unmarked = (input: CacheMarkInput): CacheMarkOutput => ({
  system: input.system,
  messages: input.messages.slice(),
  providerOptions: undefined,
});

/**
 * Anthropic's minimum cacheable prefix for a model id (its prompt-caching documentation): 4096
 * tokens for Opus 4.5 and later and Haiku 4.5, 2048 for the Haiku 3 family, 1024 for the rest.
 */
export function anthropicMinCacheableTokens(modelId: string): number {
  const id = modelId.toLowerCase();
  if (/opus-4[-.]([5-9])|opus-[5-9]|haiku-4|haiku-[5-9]/.test(id)) return 4096;
  if (/haiku-3|3-haiku|3-5-haiku/.test(id)) return 2048;
  return 1024;
}

const providerOf = (model: CacheModel): string => model.provider.toLowerCase();
const gatewayFamily = (model: CacheModel, family: string): boolean =>
  providerOf(model).startsWith('gateway') && model.modelId.toLowerCase().startsWith(`${family}/`);

/** Options of {@link anthropicCacheProfile}. */
export interface AnthropicCacheProfileOptions {
  /** How long a cache entry lives: `'1h'` costs more to write. @default '5m' */
  ttl?: '5m' | '1h';
}

function checkTtl(method: string, ttl: unknown): '5m' | '1h' {
  if (ttl === undefined || ttl === '5m') return '5m';
  if (ttl === '1h') return '1h';
  throw new ValidationError(
    `${method}: ttl must be '5m' or '1h', received ${JSON.stringify(ttl)}.`,
    {
      issues: [{ path: 'ttl', message: "expected '5m' or '1h'" }],
    },
  );
}

/**
 * Anthropic (`@ai-sdk/anthropic`, and Anthropic models behind Vertex, Bedrock's Anthropic
 * provider or the AI Gateway): `providerOptions.anthropic.cacheControl` on each marked message,
 * at most 4, prefixes below the model's minimum are not cached, entries live 5 minutes (or 1
 * hour) from their last use.
 *
 * @example
 * ```ts
 * await engine.resolve({ format: 'model', budget: { maxInputTokens: 8000, cacheProfile: anthropicCacheProfile({ ttl: '1h' }) } });
 * ```
 */
export function anthropicCacheProfile(options?: AnthropicCacheProfileOptions): CacheProfile {
  const ttl = checkTtl('anthropicCacheProfile(options)', options?.ttl);
  const cacheControl = ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  return {
    id: ttl === '1h' ? 'anthropic-1h' : 'anthropic',
    matches: (model) =>
      providerOf(model).includes('anthropic') || gatewayFamily(model, 'anthropic'),
    rules: (modelId) => ({
      mode: 'breakpoints',
      maxBreakpoints: 4,
      minCacheableTokens: anthropicMinCacheableTokens(modelId),
      ttlSeconds: ttl === '1h' ? 3600 : 300,
      prefixStep: 1,
      reportsWrites: true,
    }),
    mark: messageMarker({ anthropic: { cacheControl } }, 4),
  };
}

/**
 * Amazon Bedrock (`@ai-sdk/amazon-bedrock`, Converse API): a `cachePoint` after each marked
 * message (`providerOptions.bedrock.cachePoint`), at most 4, with the model's minimum (Claude's
 * where the model is a Claude model), entries of 5 minutes.
 */
export function bedrockCacheProfile(): CacheProfile {
  return {
    id: 'bedrock',
    matches: (model) => {
      const provider = providerOf(model);
      return (
        (provider.startsWith('amazon-bedrock') || provider.startsWith('bedrock')) &&
        !provider.includes('anthropic')
      );
    },
    rules: (modelId) => ({
      mode: 'breakpoints',
      maxBreakpoints: 4,
      minCacheableTokens: anthropicMinCacheableTokens(modelId),
      ttlSeconds: 300,
      prefixStep: 1,
      reportsWrites: true,
    }),
    mark: messageMarker({ bedrock: { cachePoint: { type: 'default' } } }, 4),
  };
}

/**
 * OpenRouter (`@openrouter/ai-sdk-provider`): Anthropic-style marks passed through
 * (`providerOptions.openrouter.cacheControl`), which it forwards to Anthropic models as
 * `cache_control`; the rules are Anthropic's.
 */
export function openRouterCacheProfile(): CacheProfile {
  return {
    id: 'openrouter',
    matches: (model) => providerOf(model).startsWith('openrouter'),
    rules: (modelId) => ({
      mode: 'breakpoints',
      maxBreakpoints: 4,
      minCacheableTokens: anthropicMinCacheableTokens(modelId),
      ttlSeconds: 300,
      prefixStep: 1,
      reportsWrites: true,
    }),
    mark: messageMarker({ openrouter: { cacheControl: { type: 'ephemeral' } } }, 4),
  };
}

/**
 * The prompt cache key for a chat and branch: stable, short, and without the ids themselves (a
 * hash), so requests of one conversation branch are routed to the same cache.
 */
export function promptCacheKey(chatId: string, branch: string): string {
  return `ctxgraph-${segmentHash(`${chatId}\u0000${branch}`)}`;
}

/** Options of {@link openAICacheProfile}. */
export interface OpenAICacheProfileOptions {
  /**
   * `'implicit'` (GPT-5.6 and later): OpenAI caches each request's prefix by itself and honours
   * marks too; `'explicit'` (GPT-5.6 and later, `@ai-sdk/openai` 4.x): only prefixes that end at
   * a marked content block are cached, and the plan's breakpoints are marked
   * (`providerOptions.openai.promptCacheBreakpoint`). Both send
   * `providerOptions.openai.promptCacheOptions` with the call. Unset: the automatic caching of
   * earlier models, nothing sent but the cache key.
   */
  mode?: 'implicit' | 'explicit';
  /**
   * With `mode`: the minimum time an entry lives (`promptCacheOptions.ttl`; 12-hour writes are
   * billed higher). @default '30m'
   */
  ttl?: '30m' | '12h';
  /**
   * Without `mode` (models before GPT-5.6 with extended caching): `'24h'` keeps cached prefixes up
   * to 24 hours (`providerOptions.openai.promptCacheRetention`). @default 'in_memory'
   */
  retention?: 'in_memory' | '24h';
}

function checkOpenAIOptions(
  options: unknown,
): Required<Pick<OpenAICacheProfileOptions, 'retention'>> &
  Pick<OpenAICacheProfileOptions, 'mode' | 'ttl'> {
  const method = 'openAICacheProfile(options)';
  const fail = (path: string, message: string): never => {
    throw new ValidationError(`${method}: ${path} ${message}.`, { issues: [{ path, message }] });
  };
  if (options === undefined) return { retention: 'in_memory' };
  if (typeof options !== 'object' || options === null) return fail('options', 'must be an object');
  const { mode, ttl, retention } = options as OpenAICacheProfileOptions;
  if (mode !== undefined && mode !== 'implicit' && mode !== 'explicit')
    fail('mode', `must be 'implicit' or 'explicit', received ${JSON.stringify(mode)}`);
  if (ttl !== undefined && ttl !== '30m' && ttl !== '12h')
    fail('ttl', `must be '30m' or '12h', received ${JSON.stringify(ttl)}`);
  if (retention !== undefined && retention !== 'in_memory' && retention !== '24h')
    fail('retention', `must be 'in_memory' or '24h', received ${JSON.stringify(retention)}`);
  if (ttl !== undefined && mode === undefined)
    fail('ttl', "needs mode ('implicit' or 'explicit'): it is a promptCacheOptions field");
  if (retention === '24h' && mode !== undefined)
    fail('retention', "is for models before GPT-5.6; with mode, use ttl ('12h')");
  return {
    retention: retention ?? 'in_memory',
    ...(mode === undefined ? {} : { mode }),
    ...(ttl === undefined ? {} : { ttl }),
  };
}

const openAIBreakpoint = { openai: { promptCacheBreakpoint: { mode: 'explicit' } } };

/**
 * A message with OpenAI's explicit breakpoint on its last content block: the system message's
 * own options; a user message's last text or file part (string content becomes one text part);
 * a tool message's last tool result. An assistant message's output text takes none: unchanged.
 */
function withOpenAIBreakpoint(message: ModelMessage): ModelMessage {
  if (message.role === 'system') return withOptions(message, openAIBreakpoint);
  if (message.role === 'user') {
    const parts =
      typeof message.content === 'string'
        ? [{ type: 'text' as const, text: message.content }]
        : message.content.slice();
    const last = parts.length - 1;
    if (last < 0) return message;
    parts[last] = withOptions(parts[last] as (typeof parts)[number], openAIBreakpoint);
    return { ...message, content: parts };
  }
  if (message.role === 'tool') {
    const parts = message.content.slice();
    let last = parts.length - 1;
    while (last >= 0 && parts[last]?.type !== 'tool-result') last -= 1;
    if (last < 0) return message;
    const result = parts[last] as Extract<(typeof parts)[number], { type: 'tool-result' }>;
    parts[last] = withOptions(result, openAIBreakpoint);
    return { ...message, content: parts };
  }
  return message;
}

/**
 * OpenAI (`@ai-sdk/openai`): by default caches every request's prefix by itself (1024 tokens or
 * more, in steps of 128) and routes by `promptCacheKey`. No marks; the call-level option
 * `providerOptions.openai.promptCacheKey` is returned (stable per chat and branch) for the app to
 * pass to `generateText` / `streamText`, with `promptCacheRetention: '24h'` when asked.
 *
 * `mode: 'explicit'` (GPT-5.6 and later, `@ai-sdk/openai` 4.x on AI SDK 7): only prefixes that
 * end at a marked content block are cached, so the plan's breakpoints are marked
 * (`providerOptions.openai.promptCacheBreakpoint: { mode: 'explicit' }` on the system message and
 * on the last content block of each marked message, at most 4: a request writes at most four
 * breakpoints) and the call carries
 * `promptCacheOptions: { mode: 'explicit', ttl }`; OpenAI then reports cache writes.
 * `mode: 'implicit'` keeps the automatic caching and sends `promptCacheOptions` for its `ttl`.
 *
 * @example
 * ```ts
 * const result = await engine.resolve({ format: 'model', budget: { maxInputTokens: 8000, model, cacheProfile: openAICacheProfile({ mode: 'explicit' }) } });
 * streamText({ model, system: result.system, messages: result.messages, providerOptions: result.providerOptions });
 * ```
 */
export function openAICacheProfile(options?: OpenAICacheProfileOptions): CacheProfile {
  const { mode, ttl, retention } = checkOpenAIOptions(options);
  const ttlSeconds =
    mode === undefined ? (retention === '24h' ? 86_400 : 300) : ttl === '12h' ? 43_200 : 1_800;
  const callOptions = (input: CacheMarkInput): CacheProviderOptions => ({
    openai: {
      promptCacheKey: promptCacheKey(input.chatId, input.branch),
      ...(mode === undefined
        ? {}
        : { promptCacheOptions: { mode, ...(ttl === undefined ? {} : { ttl }) } }),
      ...(retention === '24h' ? { promptCacheRetention: '24h' } : {}),
    },
  });
  return {
    id: mode === undefined ? (retention === '24h' ? 'openai-24h' : 'openai') : `openai-${mode}`,
    matches: (model) => providerOf(model).startsWith('openai') || gatewayFamily(model, 'openai'),
    rules: () =>
      mode === 'explicit'
        ? {
            mode: 'breakpoints',
            maxBreakpoints: 4,
            minCacheableTokens: 1024,
            ttlSeconds,
            prefixStep: 1,
            reportsWrites: true,
          }
        : {
            mode: 'prefix',
            maxBreakpoints: 0,
            minCacheableTokens: 1024,
            ttlSeconds,
            prefixStep: 128,
            // GPT-5.6 and later (the models `promptCacheOptions` is for) report cache writes, and
            // bill them; earlier models cache for free and report none.
            reportsWrites: mode === 'implicit',
          },
    mark: (input) => {
      if (mode !== 'explicit')
        return {
          system: input.system,
          messages: input.messages.slice(),
          providerOptions: callOptions(input),
        };
      const marks = limitMarks(input, 4);
      const marked = new Set(marks.messages);
      return {
        system:
          marks.system && input.system.content !== ''
            ? (withOpenAIBreakpoint(input.system) as SystemModelMessage)
            : input.system,
        messages: input.messages.map((message, index) =>
          marked.has(index) ? withOpenAIBreakpoint(message) : message,
        ),
        providerOptions: callOptions(input),
      };
    },
  };
}

/**
 * Google (`@ai-sdk/google`, Vertex): implicit caching of repeated prefixes, nothing to mark (a
 * no-op); 1024 tokens minimum (2048 for Pro models).
 */
export function googleCacheProfile(): CacheProfile {
  return {
    id: 'google',
    matches: (model) => {
      const provider = providerOf(model);
      return (
        provider.startsWith('google') ||
        (provider.startsWith('vertex') && !provider.includes('anthropic')) ||
        gatewayFamily(model, 'google')
      );
    },
    rules: (modelId) => ({
      mode: 'prefix',
      maxBreakpoints: 0,
      minCacheableTokens: /pro/i.test(modelId) ? 2048 : 1024,
      ttlSeconds: 300,
      prefixStep: 1,
      reportsWrites: false,
    }),
    mark: unmarked,
  };
}

/** No caching known: nothing marked, nothing predicted to be read. */
export function noCacheProfile(): CacheProfile {
  return {
    id: 'none',
    matches: () => true,
    rules: () => ({
      mode: 'none',
      maxBreakpoints: 0,
      minCacheableTokens: 0,
      ttlSeconds: 0,
      prefixStep: 1,
      reportsWrites: false,
    }),
    mark: unmarked,
  };
}

/** The built-in profiles, in the order they are tried. */
export const BUILT_IN_CACHE_PROFILES: readonly CacheProfile[] = Object.freeze([
  anthropicCacheProfile(),
  bedrockCacheProfile(),
  openRouterCacheProfile(),
  openAICacheProfile(),
  googleCacheProfile(),
]);

/**
 * The profile for `model`: the first built-in one that matches (Anthropic, Bedrock, OpenRouter,
 * OpenAI, Google), else the no-op profile.
 */
export function selectCacheProfile(model: CacheModel): CacheProfile {
  return BUILT_IN_CACHE_PROFILES.find((profile) => profile.matches(model)) ?? noCacheProfile();
}

/** Whether `value` has the shape of a {@link CacheProfile}. */
export function isCacheProfile(value: unknown): value is CacheProfile {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<CacheProfile>;
  return (
    typeof candidate.id === 'string' &&
    candidate.id !== '' &&
    typeof candidate.matches === 'function' &&
    typeof candidate.rules === 'function' &&
    typeof candidate.mark === 'function'
  );
}

/** Checks a profile's rules (an app's own profile may answer anything). */
export function checkCacheRules(profileId: string, rules: unknown): CacheRules {
  const where = `cache profile "${profileId}": rules(modelId)`;
  const fail = (message: string): never => {
    throw new ValidationError(`${where} ${message}`, { issues: [{ path: 'rules', message }] });
  };
  if (typeof rules !== 'object' || rules === null) return fail('must return an object.');
  const value = rules as CacheRules;
  if (value.mode !== 'breakpoints' && value.mode !== 'prefix' && value.mode !== 'none')
    fail(`mode must be 'breakpoints', 'prefix' or 'none', received ${JSON.stringify(value.mode)}.`);
  for (const field of ['maxBreakpoints', 'minCacheableTokens', 'ttlSeconds'] as const) {
    const number = value[field];
    if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0)
      fail(`${field} must be a non-negative integer, received ${String(number)}.`);
  }
  if (
    typeof value.prefixStep !== 'number' ||
    !Number.isSafeInteger(value.prefixStep) ||
    value.prefixStep < 1
  )
    fail(`prefixStep must be a positive integer, received ${String(value.prefixStep)}.`);
  if (typeof value.reportsWrites !== 'boolean')
    fail(`reportsWrites must be a boolean, received ${String(value.reportsWrites)}.`);
  return value;
}
