// The next call's cache-aware estimate: what the budget plan's cache prediction says the provider
// reads and writes, priced. One function, so every view of "the next call" shows the same figures.

import {
  DEFAULT_MODEL_PRICES,
  findModelPrice,
  type ModelPrices,
  modelPricesProblem,
} from '../model-prices';
import type { BudgetReport } from './budget-report';

/** The cache-aware cost of the next call, from its budget plan's cache prediction. */
export interface NextCallEstimate {
  /** The cache profile the prediction follows (`'openai'`, `'anthropic'`, `'none'`, …). */
  readonly profile: string;
  /** The model priced, or null when none was named. */
  readonly modelId: string | null;
  /** Leading input tokens predicted to be read from the provider's cache (`cache.readTokens`). */
  readonly cachedTokens: number;
  /** Input tokens predicted to be written to the cache (`cache.writeTokens`). */
  readonly writtenTokens: number;
  /** The rest of the input: sent uncached. */
  readonly uncachedTokens: number;
  /**
   * USD: cached × cache-read price + written × cache-write price + the rest × input price. Null
   * when the model's price is not known.
   */
  readonly cost: number | null;
}

/** Options of {@link estimateNextCall}. */
export interface NextCallOptions {
  /** The model to price; defaults to the model the plan was made for (`budget.cache.modelId`). */
  modelId?: string | null;
  /** Prices over the built-in ones (`DEFAULT_MODEL_PRICES`). */
  prices?: ModelPrices;
}

/**
 * Prices the call a budget plan describes (`resolve({ budget }).budget`, or `inspect({ budget })`'s
 * plan) with the cache prediction of the model it was planned for: the tokens the provider is
 * predicted to read from its cache at the cache-read price, those it writes at the cache-write
 * price, the rest at the input price. A model with no cache is predicted to read nothing.
 *
 * @example
 * ```ts
 * const result = await engine.resolve({ budget: { maxInputTokens: 8000, model: 'gpt-4o-mini' } });
 * const { cachedTokens, cost } = estimateNextCall(result.budget, { modelId: 'gpt-4o-mini' });
 * ```
 */
export function estimateNextCall(
  budget: BudgetReport,
  options: NextCallOptions = {},
): NextCallEstimate {
  const problem = modelPricesProblem('estimateNextCall(budget, options)', options.prices);
  if (problem !== undefined) throw problem;
  const { cache } = budget;
  const total = budget.totalTokens;
  const cachedTokens = Math.min(total, cache.readTokens);
  const writtenTokens = Math.min(total - cachedTokens, cache.writeTokens);
  const uncachedTokens = total - cachedTokens - writtenTokens;
  const modelId = options.modelId === undefined ? cache.modelId : options.modelId;
  const price =
    modelId === null
      ? undefined
      : findModelPrice(modelId, { ...DEFAULT_MODEL_PRICES, ...options.prices });
  const cost =
    price === undefined
      ? null
      : (cachedTokens * price.cacheRead +
          writtenTokens * price.cacheWrite +
          uncachedTokens * price.input) /
        1_000_000;
  return { profile: cache.profile, modelId, cachedTokens, writtenTokens, uncachedTokens, cost };
}
