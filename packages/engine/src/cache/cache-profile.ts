// What a provider cache profile is (its rules and its marking), and the marking helpers the
// built-in profiles share. Runtime-neutral: plain data and pure functions over AI SDK types.
import type { ModelMessage, SystemModelMessage } from 'ai';

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

/**
 * The model a model id names, for picking its cache profile: `'openai:gpt-4o'` (an AI SDK
 * provider registry id) is OpenAI's `gpt-4o`; an id with a slash (`'anthropic/claude-sonnet-4'`)
 * is a gateway id, its family the part before the slash; a bare id is placed by its family's name
 * (`gpt-…`, `o3`, `o4-…` OpenAI, `claude-…` Anthropic, `gemini-…` Google, `deepseek-…` DeepSeek).
 * Any other id names a model with no known cache (the no-cache profile: nothing predicted to be
 * read).
 */
export function cacheModelOf(modelId: string): CacheModel {
  const colon = modelId.indexOf(':');
  if (colon > 0 && colon < modelId.length - 1 && !modelId.includes('/'))
    return { provider: modelId.slice(0, colon), modelId: modelId.slice(colon + 1) };
  if (modelId.includes('/')) return { provider: 'gateway', modelId };
  const id = modelId.toLowerCase();
  if (/^(gpt-|chatgpt-|o\d)/.test(id)) return { provider: 'openai', modelId };
  if (id.startsWith('claude-')) return { provider: 'anthropic', modelId };
  if (id.startsWith('gemini-')) return { provider: 'google', modelId };
  if (id.startsWith('deepseek-')) return { provider: 'deepseek', modelId };
  return { provider: 'unknown', modelId };
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

/** Where the planner asks for a provider cache breakpoint. */
export type CacheBreakpoint =
  | { readonly kind: 'system' }
  | {
      readonly kind: 'message';
      readonly id: string;
      /**
       * `'previous-input'`: the end of the previous turn's question, where the call that answered
       * it ended its input (so the provider has that prefix cached); `'input'`: the end of this one.
       */
      readonly role: 'previous-input' | 'input';
    };

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
export function limitMarks(
  input: CacheMarkInput,
  max: number,
): { system: boolean; messages: number[] } {
  const messages = input.markMessages.slice(Math.max(0, input.markMessages.length - max));
  const system = input.markSystem && messages.length < max;
  return { system, messages };
}

/** Merges `options` into a message's own provider options. */
export function withOptions<T extends { providerOptions?: CacheProviderOptions }>(
  message: T,
  options: CacheProviderOptions,
): T {
  return { ...message, providerOptions: { ...message.providerOptions, ...options } };
}

/** A profile that marks messages with one fixed provider option (Anthropic, Bedrock, OpenRouter). */
export function messageMarker(
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

/** No marks: the messages as they are, no call-level options. */
export const unmarked = (input: CacheMarkInput): CacheMarkOutput => ({
  system: input.system,
  messages: input.messages.slice(),
  providerOptions: undefined,
});

/** The model's provider, lower-cased. */
export const providerOf = (model: CacheModel): string => model.provider.toLowerCase();
/** Whether a gateway model id names `family`'s models (`openai/gpt-5`). */
export const gatewayFamily = (model: CacheModel, family: string): boolean =>
  providerOf(model).startsWith('gateway') && model.modelId.toLowerCase().startsWith(`${family}/`);
