import {
  type ContextFragment,
  type EngineRecordSource,
  engineRecordOf,
  isFragment,
  isLazyFragment,
  isMessageFragment,
  type JsonObject,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { findModelPrice, type ModelPrices } from '../model-prices';
import {
  type CacheCallRecord,
  type CacheTotals,
  cacheTotals,
  readCacheRecord,
  reconcileCache,
} from './cache-reconcile';

/**
 * The usage of the model call that produced an assistant message, as stored in the node's engine
 * record (`engineRecord.usage`, beside the message, never in it). Counts the provider did not
 * report are null.
 */
export interface MessageUsage {
  /** The model that answered (`'claude-sonnet-4-20250514'`, `'openai:gpt-4o'`). */
  readonly modelId: string;
  /** All input tokens: uncached, read from cache and written to cache. */
  readonly inputTokens: number | null;
  /** Input tokens read from the provider's prompt cache. */
  readonly cacheReadTokens: number | null;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheWriteTokens: number | null;
  readonly outputTokens: number | null;
  /**
   * With `withUsage(…, { cache })`: the call's cache prediction and what the provider's usage
   * confirmed of it.
   */
  readonly cache?: CacheCallRecord;
}

/**
 * What {@link withUsage} takes: the AI SDK's `usage` of a call (`LanguageModelUsage`; only the
 * fields read here) and the model id.
 */
export interface UsageInput {
  readonly usage: {
    readonly inputTokens?: number | undefined;
    readonly outputTokens?: number | undefined;
    readonly inputTokenDetails?: {
      readonly cacheReadTokens?: number | undefined;
      readonly cacheWriteTokens?: number | undefined;
    };
    /** The AI SDK's older name for `inputTokenDetails.cacheReadTokens`. */
    readonly cachedInputTokens?: number | undefined;
  };
  readonly modelId: string;
  /**
   * The call's cache prediction, `result.budget.cache` of the budgeted resolve the call sent:
   * the engine checks it against the usage (hit rate, write amplification, where the read
   * stopped) and records both with the reply.
   */
  readonly cache?: unknown;
}

const where = 'withUsage(fragment, { usage, modelId })';

function count(path: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ValidationError(
      `${where}: ${path} must be a non-negative integer or undefined, received ${String(value)}.`,
      { issues: [{ path, message: 'expected a non-negative integer' }] },
    );
  }
  return value;
}

/** Checks the AI SDK usage and turns it into the stored form. */
function toMessageUsage(input: UsageInput): MessageUsage {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError(`${where}: the second argument must be { usage, modelId }.`);
  }
  const { usage, modelId } = input;
  if (typeof modelId !== 'string' || modelId.trim() === '') {
    throw new ValidationError(
      `${where}: modelId must be a non-empty string (the model that answered, such as result.response.modelId).`,
      { issues: [{ path: 'modelId', message: 'expected a non-empty string' }] },
    );
  }
  if (typeof usage !== 'object' || usage === null) {
    throw new ValidationError(`${where}: usage must be the AI SDK's usage object (result.usage).`, {
      issues: [{ path: 'usage', message: 'expected an object' }],
    });
  }
  const counted = {
    modelId,
    inputTokens: count('usage.inputTokens', usage.inputTokens),
    cacheReadTokens: count(
      'usage.inputTokenDetails.cacheReadTokens',
      usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens,
    ),
    cacheWriteTokens: count(
      'usage.inputTokenDetails.cacheWriteTokens',
      usage.inputTokenDetails?.cacheWriteTokens,
    ),
    outputTokens: count('usage.outputTokens', usage.outputTokens),
  };
  if (input.cache === undefined) return counted;
  return { ...counted, cache: reconcileCache(where, input.cache, counted) };
}

/**
 * The usage `withUsage` attached, by fragment. Module-private: only a fragment made by
 * `withUsage` in this process has an entry, so nothing an app or a chat client sends (JSON, a
 * message's metadata) can record usage.
 */
const recordedUsage = new WeakMap<object, MessageUsage>();

/**
 * The assistant message fragment with the usage of the call that produced it attached. The
 * message itself is not changed: `save()` stores the usage in the node's engine record, beside
 * the message, where no app metadata and no chat client can reach it; `engine.usage()` and
 * `inspect()` add it up per branch and per chat. Set the fragment this returns (a copy of it has
 * no usage).
 *
 * @example
 * ```ts
 * const result = await generateText({ model, system, messages });
 * engine.set(withUsage(assistant(result.text), { usage: result.usage, modelId: 'claude-sonnet-4' }));
 * await engine.save();
 * ```
 */
export function withUsage<T extends ContextFragment>(fragment: T, input: UsageInput): T {
  if (
    !isFragment(fragment) ||
    !isMessageFragment(fragment) ||
    isLazyFragment(fragment) ||
    typeof fragment.codec?.encode !== 'function'
  ) {
    throw new ValidationError(
      `${where}: fragment must be a message fragment such as assistant(text) or assistantText(text).`,
      { issues: [{ path: 'fragment', message: 'expected a message fragment with a codec' }] },
    );
  }
  const usage = toMessageUsage(input);
  const original = fragment.codec.encode() as UIMessage;
  if (original.role !== 'assistant') {
    throw new ValidationError(
      `${where}: usage belongs to the assistant message a call produced, but this is a ${original.role} message.`,
      { issues: [{ path: 'fragment', message: 'expected an assistant message' }] },
    );
  }
  const attached = { ...(fragment as ContextFragment) } as T;
  recordedUsage.set(attached, usage);
  return attached;
}

/** The engine record `save()` writes for a fragment: its usage when `withUsage` made it. */
export function engineRecordFor(fragment: ContextFragment): JsonObject | undefined {
  const usage = recordedUsage.get(fragment);
  return usage === undefined ? undefined : { usage: { ...usage } as unknown as JsonObject };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The usage recorded for a node, or null when it has none (or it is malformed). */
export function usageOf(node: EngineRecordSource): MessageUsage | null {
  const usage = engineRecordOf(node)?.usage;
  if (!isPlainObject(usage) || typeof usage.modelId !== 'string') return null;
  const read = (value: unknown): number | null =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
  const result: MessageUsage = {
    modelId: usage.modelId,
    inputTokens: read(usage.inputTokens),
    cacheReadTokens: read(usage.cacheReadTokens),
    cacheWriteTokens: read(usage.cacheWriteTokens),
    outputTokens: read(usage.outputTokens),
  };
  const cache = usage.cache === undefined ? null : readCacheRecord(usage.cache);
  return cache === null ? result : { ...result, cache };
}

/** Usage added up over messages, with its cost. */
export interface UsageTotals {
  /** Messages that carry usage (model calls recorded). */
  readonly calls: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** Input neither read from nor written to the cache. */
  readonly uncachedInputTokens: number;
  readonly outputTokens: number;
  /** USD, over the calls whose model has a price; null when none has. */
  readonly cost: number | null;
  /** Models with no price in the table: their calls are not in `cost`. */
  readonly unpricedModels: readonly string[];
  /**
   * The same figures per model id: an object without a prototype (`Object.create(null)`), so a
   * model id such as `__proto__` or `constructor` is an entry like any other.
   */
  readonly byModel: Readonly<
    Record<string, Omit<UsageTotals, 'byModel' | 'unpricedModels' | 'cache'>>
  >;
  /**
   * The cache predictions recorded with the usage (`withUsage(…, { cache })`), reconciled with
   * what the providers reported: hit rate, write amplification and every miss, predicted and
   * confirmed.
   */
  readonly cache: CacheTotals;
}

interface Sums {
  calls: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  uncachedInputTokens: number;
  outputTokens: number;
  cost: number | null;
}

const emptySums = (): Sums => ({
  calls: 0,
  inputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  uncachedInputTokens: 0,
  outputTokens: 0,
  cost: null,
});

/**
 * Adds up the usage recorded on `nodes` and prices it: uncached input × input price, cache
 * reads × cache-read price, cache writes × cache-write price, output × output price.
 */
export function totalUsage(nodes: Iterable<EngineRecordSource>, prices: ModelPrices): UsageTotals {
  const total = emptySums();
  // Keyed by data (a model id): a Map, never a plain object.
  const models = new Map<string, Sums>();
  const unpriced = new Set<string>();
  const cacheRecords: { messageId: string; record: CacheCallRecord }[] = [];
  for (const node of nodes) {
    const usage = usageOf(node);
    if (usage === null) continue;
    if (usage.cache !== undefined) cacheRecords.push({ messageId: node.id, record: usage.cache });
    const cacheRead = usage.cacheReadTokens ?? 0;
    const cacheWrite = usage.cacheWriteTokens ?? 0;
    const input = usage.inputTokens ?? 0;
    const uncached = Math.max(0, input - cacheRead - cacheWrite);
    const output = usage.outputTokens ?? 0;
    const price = findModelPrice(usage.modelId, prices);
    let cost: number | null = null;
    if (price === undefined) unpriced.add(usage.modelId);
    else {
      cost =
        (uncached * price.input +
          cacheRead * price.cacheRead +
          cacheWrite * price.cacheWrite +
          output * (price.output ?? 0)) /
        1_000_000;
      if (price.output === null && output > 0) unpriced.add(`${usage.modelId} (output)`);
    }
    let model = models.get(usage.modelId);
    if (model === undefined) {
      model = emptySums();
      models.set(usage.modelId, model);
    }
    for (const sums of [total, model]) {
      sums.calls += 1;
      sums.inputTokens += input;
      sums.cacheReadTokens += cacheRead;
      sums.cacheWriteTokens += cacheWrite;
      sums.uncachedInputTokens += uncached;
      sums.outputTokens += output;
      if (cost !== null) sums.cost = (sums.cost ?? 0) + cost;
    }
  }
  const byModel: Record<string, Sums> = Object.create(null);
  for (const [modelId, sums] of models) byModel[modelId] = sums;
  return {
    ...total,
    unpricedModels: [...unpriced].sort(),
    byModel,
    cache: cacheTotals(cacheRecords),
  };
}
