// Provider cache profiles: how each provider caches a prompt prefix, and how the plan's
// breakpoints become that provider's marks on the model messages (or a call-level option).
// Runtime-neutral: plain data and pure functions over AI SDK message types. The contract of a
// profile is `cache-profile.ts`; OpenAI's profile is `openai-cache-profile.ts`.
import { ValidationError } from '@ctxgraph/fragments-core';
import {
  type CacheModel,
  type CacheProfile,
  type CacheRules,
  gatewayFamily,
  messageMarker,
  providerOf,
  unmarked,
} from './cache-profile';
import { openAICacheProfile } from './openai-cache-profile';

export type {
  CacheMarkInput,
  CacheMarkOutput,
  CacheModel,
  CacheProfile,
  CacheProviderOptions,
  CacheRules,
} from './cache-profile';
export {
  type OpenAICacheProfileOptions,
  openAICacheProfile,
  promptCacheKey,
} from './openai-cache-profile';

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

/**
 * DeepSeek (`@ai-sdk/deepseek`, and DeepSeek models behind the AI Gateway): context caching on
 * disk, on for every request, nothing to mark (a no-op). A repeated prefix is read from the cache
 * in 64-token storage units (a shorter prefix is never cached); a cache hit is billed at a fraction
 * of the input price and a write costs nothing extra, so usage reports reads only
 * (`prompt_cache_hit_tokens`). Unused entries are cleared after a few hours to a few days, best
 * effort: the prediction assumes an hour.
 */
export function deepSeekCacheProfile(): CacheProfile {
  return {
    id: 'deepseek',
    matches: (model) =>
      providerOf(model).startsWith('deepseek') || gatewayFamily(model, 'deepseek'),
    rules: () => ({
      mode: 'prefix',
      maxBreakpoints: 0,
      minCacheableTokens: 64,
      ttlSeconds: 3600,
      prefixStep: 64,
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
  deepSeekCacheProfile(),
]);

/**
 * The profile for `model`: the first built-in one that matches (Anthropic, Bedrock, OpenRouter,
 * OpenAI, Google, DeepSeek), else the no-op profile.
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
