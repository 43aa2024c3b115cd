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

/** What `resolve({ budget })` did, in `result.budget`. */
export interface BudgetReport {
  readonly maxInputTokens: number;
  /** The input's tokens: system prompt plus messages sent. */
  readonly totalTokens: number;
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
