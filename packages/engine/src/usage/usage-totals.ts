import { type EngineRecordSource, engineRecordOf } from '@ctxgraph/fragments-core';
import { type CacheCallRecord, type CacheTotals, cacheTotals } from '../cache/cache-reconcile';
import { findModelPrice, type ModelPrices } from '../model-prices';
import { type MessageUsage, readUsage } from './message-usage';

// Reading the usage recorded on nodes back, and adding it up with its cost.

/** The usage recorded for a node, or null when it has none (or it is malformed). */
export function usageOf(node: EngineRecordSource): MessageUsage | null {
  return readUsage(engineRecordOf(node)?.usage);
}

/** Usage added up over messages, with its cost. */
export interface UsageTotals {
  /** Model calls recorded (a message continued in place with `add` counts each of its calls). */
  readonly calls: number;
  /**
   * Messages with recorded usage by how their call ended (`withUsage(…, { outcome })`): an
   * aborted or failed reply is counted apart from the complete ones.
   */
  readonly replies: {
    readonly complete: number;
    readonly aborted: number;
    readonly error: number;
    readonly interrupted: number;
  };
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
  replies: { complete: number; aborted: number; error: number; interrupted: number };
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  uncachedInputTokens: number;
  outputTokens: number;
  cost: number | null;
}

const emptySums = (): Sums => ({
  calls: 0,
  replies: { complete: 0, aborted: 0, error: 0, interrupted: 0 },
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
      sums.calls += usage.calls;
      sums.replies[usage.outcome] += 1;
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
