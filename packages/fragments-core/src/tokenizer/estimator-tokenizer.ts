import { ValidationError } from '../errors/errors';
import type { Tokenizer } from './tokenizer';

/** Options of {@link createEstimatorTokenizer}. */
export interface EstimatorTokenizerOptions {
  /**
   * How many characters of ASCII text make one token. Other characters (accents, CJK, emoji) count
   * as three ASCII characters each, since tokenizers split them finer.
   * @default 4
   */
  charactersPerToken?: number;
}

/** What the provider reported for a text the estimator also counted. */
export interface CalibrationSample {
  /** The estimator's count for the input (for example `inspect().estimate.tokens`). */
  estimatedTokens: number;
  /** The provider's count of the same input (the AI SDK's `usage.inputTokens`). */
  reportedTokens: number;
}

/**
 * A {@link Tokenizer} that estimates from character counts, with no dependency: for models without
 * a public tokenizer, or for apps that do not want to install one. `calibrate()` moves its ratio
 * toward what the provider reports; its `id` names the ratio, so cached counts never mix ratios.
 */
export interface EstimatorTokenizer extends Tokenizer {
  /** The ratio in use (characters of ASCII text per token). */
  readonly charactersPerToken: number;
  /**
   * Moves the ratio halfway toward the one the sample implies (clamped to 1–12 characters a
   * token) and returns the new ratio. Samples under 50 reported tokens are too small to learn
   * from and are ignored.
   */
  calibrate(sample: CalibrationSample): number;
}

const minimumRatio = 1;
const maximumRatio = 12;
const nonAsciiWeight = 3;

function assertRatio(where: string, value: unknown): asserts value is number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < minimumRatio ||
    value > maximumRatio
  ) {
    throw new ValidationError(
      `${where}: charactersPerToken must be a number from ${minimumRatio} to ${maximumRatio}, received ${String(value)}.`,
      { issues: [{ path: 'charactersPerToken', message: 'expected a number from 1 to 12' }] },
    );
  }
}

/**
 * Creates an {@link EstimatorTokenizer}.
 *
 * @example
 * ```ts
 * const tokenizer = createEstimatorTokenizer();
 * tokenizer.count('Hello, world!'); // 4
 * tokenizer.calibrate({ estimatedTokens: 1200, reportedTokens: 1000 });
 * ```
 */
export function createEstimatorTokenizer(
  options: EstimatorTokenizerOptions = {},
): EstimatorTokenizer {
  const where = 'createEstimatorTokenizer(options)';
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError(`${where}: options must be an object or omitted.`);
  }
  let ratio = options.charactersPerToken ?? 4;
  assertRatio(where, ratio);
  let id = idFor(ratio);
  return {
    specificationVersion: 'v1',
    get id() {
      return id;
    },
    get charactersPerToken() {
      return ratio;
    },
    count(text: string): number {
      let weight = 0;
      for (let index = 0; index < text.length; index += 1) {
        const code = text.charCodeAt(index);
        // A surrogate pair is one character: weigh its high half only.
        if (code >= 0xdc00 && code <= 0xdfff) continue;
        weight += code < 0x80 ? 1 : nonAsciiWeight;
      }
      return Math.ceil(weight / ratio);
    },
    calibrate(sample: CalibrationSample): number {
      const { estimatedTokens, reportedTokens } = (sample ?? {}) as Partial<CalibrationSample>;
      for (const [name, value] of [
        ['estimatedTokens', estimatedTokens],
        ['reportedTokens', reportedTokens],
      ] as const) {
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
          throw new ValidationError(
            `calibrate(sample): ${name} must be a non-negative number, received ${String(value)}.`,
            { issues: [{ path: name, message: 'expected a non-negative number' }] },
          );
        }
      }
      if ((reportedTokens as number) < 50 || (estimatedTokens as number) === 0) return ratio;
      const implied = (ratio * (estimatedTokens as number)) / (reportedTokens as number);
      const next = Math.min(maximumRatio, Math.max(minimumRatio, (ratio + implied) / 2));
      ratio = Math.round(next * 100) / 100;
      id = idFor(ratio);
      return ratio;
    },
  };
}

function idFor(ratio: number): string {
  return `estimate:${ratio.toFixed(2)}`;
}
