/** What one million input tokens cost, in US dollars. */
export type ModelPrices = Readonly<Record<string, number>>;

/**
 * List prices (USD per million input tokens) of common models, used by `inspect()` to estimate
 * cost. Prices change: pass `prices` to the engine or to `inspect()` to use your own. Keys are
 * model ids without a provider prefix; `openai:gpt-4o` and `gpt-4o-2024-08-06` both find `gpt-4o`.
 */
export const DEFAULT_MODEL_PRICES: ModelPrices = {
  'gpt-4o': 2.5,
  'gpt-4o-mini': 0.15,
  'gpt-4.1': 2,
  'gpt-4.1-mini': 0.4,
  'gpt-4.1-nano': 0.1,
  'gpt-5': 1.25,
  'gpt-5-mini': 0.25,
  'gpt-5-nano': 0.05,
  o3: 2,
  'o4-mini': 1.1,
  'claude-opus-4': 15,
  'claude-sonnet-4': 3,
  'claude-3-5-haiku': 0.8,
  'gemini-2.5-pro': 1.25,
  'gemini-2.5-flash': 0.3,
};

/** The price of `modelId`, trying the exact id, then without provider prefix and date suffix. */
export function findModelPrice(
  modelId: string,
  prices: ModelPrices,
): { model: string; price: number } | undefined {
  const withoutProvider = modelId.includes(':') ? modelId.slice(modelId.indexOf(':') + 1) : modelId;
  const withoutSlash = withoutProvider.includes('/')
    ? withoutProvider.slice(withoutProvider.lastIndexOf('/') + 1)
    : withoutProvider;
  const candidates = [
    modelId,
    withoutProvider,
    withoutSlash,
    withoutSlash.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/, ''),
  ];
  for (const candidate of candidates) {
    // Only the table's own entries: "toString" must not find Object.prototype.toString.
    if (!Object.hasOwn(prices, candidate)) continue;
    const price = prices[candidate];
    if (typeof price === 'number' && Number.isFinite(price)) return { model: candidate, price };
  }
  return undefined;
}
