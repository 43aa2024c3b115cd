// What `resolve({ budget })` reports (`result.budget`): the budget report's types, read by the
// resolve pipeline that fills them, by auto-compaction and by the next call's estimate.

import type { CachePrediction } from '../cache/cache-prediction';
import type { CacheBreakpoint } from '../cache/cache-profile';
import type { PrefixReport } from '../cache/prefix-report';
import type { LeftOutItem } from './plan-budget';

/** A kept part of the input, counted. */
export interface BudgetReportFragment {
  /** `'#<position in the context lane>'`, or the fragment's id. */
  readonly id: string;
  readonly name: string;
  /** Tokens of the fragment rendered alone. */
  readonly tokens: number;
  readonly priority: number;
  readonly required: boolean;
  readonly kept: boolean;
}

/** A message sent, counted. */
export interface BudgetReportMessage {
  readonly id: string;
  readonly role: string;
  /** Text tokens plus a per-message overhead. */
  readonly tokens: number;
  /** Not saved yet. */
  readonly pending: boolean;
}

/**
 * The calibration a budgeted call used: the factor, learned from the provider's reported input
 * on earlier replies of the path, that turns the tokenizer's counts into the provider's.
 */
export interface BudgetCalibration {
  /** The model whose recorded replies gave the factor, or null when none is calibrated yet. */
  readonly modelId: string | null;
  /** Reported ÷ counted (1 when uncalibrated or `calibration: false`). */
  readonly factor: number;
  /** How many of that model's replies the factor has learned from. */
  readonly samples: number;
  /**
   * The input the provider is expected to report: `totalTokens × factor`, rounded. The plan
   * keeps it within `maxInputTokens`.
   */
  readonly inputTokens: number;
}

/** What `resolve({ budget })` did, in `result.budget`. */
export interface BudgetReport {
  readonly maxInputTokens: number;
  /** The input's tokens in the tokenizer's counts: system prompt plus messages sent. */
  readonly totalTokens: number;
  /** The calibration the plan used (`calibration.inputTokens` is in the provider's counts). */
  readonly calibration: BudgetCalibration;
  /** The tokenizer that counted (`Tokenizer.id`). */
  readonly tokenizer: string;
  /** The rendered system prompt's tokens. */
  readonly systemPromptTokens: number;
  /** Every context fragment, in lane order, kept or not. */
  readonly fragments: readonly BudgetReportFragment[];
  /** The messages sent, oldest first. */
  readonly messages: readonly BudgetReportMessage[];
  /** What was left out, and by which rule. */
  readonly leftOut: readonly LeftOutItem[];
  /**
   * History left out of this input, in tokens and messages (a compaction could summarize it
   * instead of dropping it).
   */
  readonly droppedHistory: { readonly messages: number; readonly tokens: number };
  /** Where provider cache breakpoints go (and, with `format: 'model'`, were marked). */
  readonly breakpoints: readonly CacheBreakpoint[];
  /** How much of this input repeats the previous budgeted call on this chat and branch. */
  readonly prefix: PrefixReport;
  /**
   * The cache profile used and what it predicts the provider reads from and writes to its
   * cache; pass it to `withUsage(…, { cache })` to have it confirmed against the reported usage.
   */
  readonly cache: CachePrediction;
}
