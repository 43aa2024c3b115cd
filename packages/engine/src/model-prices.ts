import { ValidationError } from '@ctxgraph/fragments-core';

/**
 * One model's prices, in US dollars per million tokens. Cache prices are optional: without
 * `cacheRead`, cached input costs `input`; without `cacheWrite`, written input costs `input`
 * (OpenAI and Gemini charge nothing extra to write; Anthropic charges 1.25×).
 */
export interface ModelPrice {
  /** Uncached input. */
  readonly input: number;
  /** Input read from the provider's prompt cache. */
  readonly cacheRead?: number;
  /** Input written to the provider's prompt cache. */
  readonly cacheWrite?: number;
  /** Output. Without it, output is not priced (the total says so). */
  readonly output?: number;
}

/**
 * Prices by model id: a {@link ModelPrice}, or a number (USD per million input tokens, the same
 * for cached and written input). An entry stands for the model as a whole: it replaces the
 * built-in entry of that key (fields it leaves out are not taken from the built-in one). Every
 * price is a finite number >= 0; the engine refuses any other table with a `ValidationError`
 * naming the entry, wherever one is passed.
 */
export type ModelPrices = Readonly<Record<string, number | ModelPrice>>;

/**
 * List prices of common models (USD per million tokens), used by `inspect()` and `usage()` to
 * estimate cost. Prices change: pass `prices` to the engine or to the call to use your own. Keys
 * are model ids without a provider prefix; `openai:gpt-4o`, `anthropic/claude-sonnet-4` and
 * `gpt-4o-2024-08-06` all find theirs.
 */
export const DEFAULT_MODEL_PRICES: ModelPrices = {
  'gpt-4o': { input: 2.5, cacheRead: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cacheRead: 0.075, output: 0.6 },
  'gpt-4.1': { input: 2, cacheRead: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cacheRead: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cacheRead: 0.025, output: 0.4 },
  'gpt-5': { input: 1.25, cacheRead: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cacheRead: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cacheRead: 0.005, output: 0.4 },
  o3: { input: 2, cacheRead: 0.5, output: 8 },
  'o4-mini': { input: 1.1, cacheRead: 0.275, output: 4.4 },
  'claude-opus-4': { input: 15, cacheRead: 1.5, cacheWrite: 18.75, output: 75 },
  'claude-sonnet-4': { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 },
  'claude-3-5-haiku': { input: 0.8, cacheRead: 0.08, cacheWrite: 1, output: 4 },
  'gemini-2.5-pro': { input: 1.25, cacheRead: 0.31, output: 10 },
  'gemini-2.5-flash': { input: 0.3, cacheRead: 0.075, output: 2.5 },
};

/** A price found in a table, with every field filled in. */
export interface ResolvedModelPrice {
  /** The table key that matched. */
  readonly model: string;
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Null when the table gives no output price. */
  readonly output: number | null;
}

/** The fields a {@link ModelPrice} may have. */
const PRICE_FIELDS: ReadonlySet<string> = new Set(['input', 'cacheRead', 'cacheWrite', 'output']);

/** How a refused value is shown in a message: a string quoted, so "3" is not read as 3. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * What is wrong with a price table, if anything: the first entry that is not a finite number
 * >= 0 or a {@link ModelPrice} of such numbers (an `input`, optional `cacheRead`, `cacheWrite`,
 * `output`, nothing else), named by model key and field. Undefined (no table) is fine. A table
 * from an environment variable holds strings: "3" is refused, not read as 3, since a wrong price
 * would otherwise turn costs into null and hide the built-in price of that model.
 */
export function modelPricesProblem(method: string, prices: unknown): ValidationError | undefined {
  if (prices === undefined) return undefined;
  if (!isPlainObject(prices))
    return new ValidationError(
      `${method}: prices must be an object of model id to price (USD per million tokens), received ${shown(prices)}.`,
      { issues: [{ path: 'prices', message: 'expected an object' }] },
    );
  const refuse = (path: string, where: string, text: string, issue: string): ValidationError =>
    new ValidationError(`${method}: ${where} ${text}`, { issues: [{ path, message: issue }] });
  for (const model of Object.keys(prices)) {
    const price = prices[model];
    const where = `prices[${JSON.stringify(model)}]`;
    const path = `prices.${model}`;
    if (typeof price === 'number' || !isPlainObject(price)) {
      if (finite(price)) continue;
      return refuse(
        path,
        where,
        `must be a finite number >= 0 (USD per million input tokens) or a price { input, cacheRead?, cacheWrite?, output? }, received ${shown(price)}.`,
        'expected a finite number >= 0 or a ModelPrice',
      );
    }
    for (const field of Object.keys(price)) {
      if (!PRICE_FIELDS.has(field))
        return refuse(
          path,
          where,
          `has an unknown field ${JSON.stringify(field)} (a price has input, cacheRead, cacheWrite and output).`,
          'unknown field',
        );
    }
    if (price.input === undefined)
      return refuse(
        `${path}.input`,
        `${where}.input`,
        'is required (USD per million uncached input tokens).',
        'required',
      );
    for (const field of PRICE_FIELDS) {
      const value = price[field];
      if (value === undefined || finite(value)) continue;
      return refuse(
        `${path}.${field}`,
        `${where}.${field}`,
        `must be a finite number >= 0 (USD per million tokens), received ${shown(value)}.`,
        'expected a finite number >= 0',
      );
    }
  }
  return undefined;
}

const finite = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** The price of `modelId`, trying the exact id, then without provider prefix and date suffix. */
export function findModelPrice(
  modelId: string,
  prices: ModelPrices,
): ResolvedModelPrice | undefined {
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
    if (finite(price)) {
      return { model: candidate, input: price, cacheRead: price, cacheWrite: price, output: null };
    }
    if (typeof price === 'object' && price !== null && finite(price.input)) {
      return {
        model: candidate,
        input: price.input,
        cacheRead: finite(price.cacheRead) ? price.cacheRead : price.input,
        cacheWrite: finite(price.cacheWrite) ? price.cacheWrite : price.input,
        output: finite(price.output) ? price.output : null,
      };
    }
  }
  return undefined;
}
