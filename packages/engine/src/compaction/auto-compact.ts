import { EngineError, ValidationError } from '@ctxgraph/fragments-core';
import type { BudgetReport } from '../budget/budget-report';
import { type CompactionResult, type CompactKeep, checkCompactOptions } from './compact';
import type { Summarizer } from './summarizer';

/**
 * Option `autoCompact` of the engine: a budgeted `resolve({ budget })` compacts the branch before
 * it would have to leave history out, instead of leaving it out.
 */
export interface AutoCompactOptions {
  /** Makes the summary (`summarizer({ model })` is the built-in one). */
  readonly summarize: Summarizer;
  /**
   * Compact when the input (system prompt and every message the branch shows) would take more
   * than this share of `budget.maxInputTokens`, or when the budget would leave history out.
   * Below 1 it compacts before the overflow.
   * @default 0.8
   */
  readonly threshold?: number;
  /** What stays after the summary (as for `compact()`). @default 2 (the last two turns) */
  readonly keep?: CompactKeep;
}

/** What the automatic compaction did before a budgeted resolve, in `result.compaction`. */
export type AutoCompaction =
  | {
      /** A compaction node was written; the result's messages start with its summary. */
      readonly status: 'compacted';
      readonly result: CompactionResult;
    }
  | {
      /** Over the threshold, but fewer turns than `keep`: the budget fitted the history as usual. */
      readonly status: 'nothing-to-compact';
    }
  | {
      /**
       * The summarizer (or the write) failed: nothing was written, and the budget fitted the
       * history as usual (older turns left out). `error` says why.
       */
      readonly status: 'failed';
      readonly error: string;
    };

/** The checked option, with its defaults. */
export interface CheckedAutoCompact {
  readonly summarize: Summarizer;
  readonly threshold: number;
  readonly keep: CompactKeep;
}

/** Checks the engine's `autoCompact` option; a `ValidationError` that says what to pass. */
export function checkAutoCompact(method: string, value: unknown): CheckedAutoCompact {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(
      `${method}: autoCompact must be an object such as { summarize: summarizer({ model }), threshold: 0.8 }.`,
      { issues: [{ path: 'autoCompact', message: 'expected an object' }] },
    );
  }
  const { threshold = 0.8, summarize, keep } = value as AutoCompactOptions;
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    throw new ValidationError(
      `${method}: autoCompact.threshold must be a number above 0 and at most 1 (a share of budget.maxInputTokens), received ${String(threshold)}.`,
      { issues: [{ path: 'autoCompact.threshold', message: 'expected a number in (0, 1]' }] },
    );
  }
  let checked: ReturnType<typeof checkCompactOptions>;
  try {
    checked = checkCompactOptions({ summarize, ...(keep === undefined ? {} : { keep }) });
  } catch (error) {
    if (!ValidationError.isInstance(error)) throw error;
    throw new ValidationError(
      `${method}: autoCompact: ${error.message.replace('compact(options): ', '')}`,
      { issues: error.issues.map((issue) => ({ ...issue, path: `autoCompact.${issue.path}` })) },
    );
  }
  return { summarize: checked.summarize, threshold, keep: checked.keep ?? 2 };
}

/**
 * True when the plan a budget would make calls for a compaction: it leaves history out, or the
 * whole input would take more than `threshold` of the budget.
 */
export function wantsCompaction(report: BudgetReport, threshold: number): boolean {
  // In the provider's tokens, as the budget is: a calibrated plan's counts times its factor.
  const whole = (report.totalTokens + report.droppedHistory.tokens) * report.calibration.factor;
  return report.droppedHistory.messages > 0 || whole > threshold * report.maxInputTokens;
}

/** Runs the compaction; a failure of the compaction itself becomes a `'failed'` outcome. */
export async function compactForBudget(
  compact: () => Promise<CompactionResult | null>,
): Promise<AutoCompaction> {
  try {
    const result = await compact();
    return result === null ? { status: 'nothing-to-compact' } : { status: 'compacted', result };
  } catch (error) {
    if (!EngineError.isInstance(error)) throw error;
    return { status: 'failed', error: error.message };
  }
}
