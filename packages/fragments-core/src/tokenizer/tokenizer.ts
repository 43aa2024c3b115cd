/**
 * Counts the tokens of a text for one model family. The engine's budget, its cache plan and
 * `inspect()` count through this contract; concrete counters are separate installs
 * (`@ctxgraph/tokenizer-o200k`, `@ctxgraph/tokenizer-cl100k`) or the dependency-free
 * {@link createEstimatorTokenizer}.
 *
 * Counts are cached per message and per `id`, so a tokenizer must give the same count for the same
 * text as long as its `id` stays the same: a tokenizer whose counting changes (a recalibrated
 * estimator) changes its `id` too.
 *
 * @example
 * ```ts
 * const words: Tokenizer = {
 *   specificationVersion: 'v1',
 *   id: 'words',
 *   count: (text) => text.split(/\s+/).filter(Boolean).length,
 * };
 * ```
 */
export interface Tokenizer {
  /** The specification version (of this contract) the tokenizer implements. */
  readonly specificationVersion: 'v1';
  /** A stable name of the counting (`'o200k_base'`, `'cl100k_base'`, `'estimate:4.00'`). */
  readonly id: string;
  /** The number of tokens of `text`: a non-negative integer, 0 for the empty string. */
  count(text: string): number;
}

/** True when `value` has the shape of a {@link Tokenizer} (any specification version). */
export function isTokenizer(value: unknown): value is Tokenizer {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Tokenizer>;
  return typeof candidate.id === 'string' && typeof candidate.count === 'function';
}
