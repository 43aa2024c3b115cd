// OpenAI's cache profile: implicit prefix caching or explicit breakpoints, with a prompt cache key
// per chat and branch. Runtime-neutral: plain data and pure functions over AI SDK types.
import { ValidationError } from '@ctxgraph/fragments-core';
import type { ModelMessage, SystemModelMessage } from 'ai';
import {
  type CacheMarkInput,
  type CacheProfile,
  type CacheProviderOptions,
  gatewayFamily,
  limitMarks,
  providerOf,
  withOptions,
} from './cache-profile';
import { segmentHash } from './segment-hash';

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
