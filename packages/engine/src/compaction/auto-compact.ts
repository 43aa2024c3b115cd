import { EngineError, ValidationError } from '@ctxgraph/fragments-core';
import type { BudgetReport } from '../budget/budget-report';
import { type CompactionResult, type CompactKeep, checkCompactOptions } from './compact';
import type { CompactionCostDecision } from './compaction-cost';
import type { Summarizer } from './summarizer';

/**
 * Option `autoCompact` of the engine: a budgeted `resolve({ budget })` compacts the branch before
 * it would have to leave history out, instead of leaving it out.
 */
export interface AutoCompactOptions {
  /** Makes the summary (`summarizer({ model })` is the built-in one). */
  readonly summarize: Summarizer;
  /**
   * When to compact. `'threshold'`: before the call, once the input passes `threshold` of the
   * budget. `'cost'`: after the call (`runDeferredCompaction()`, in the background), when the
   * budget's cache prediction and the model's prices say compacting costs less over the next
   * `horizon` calls than going on (`result.compaction.decision` shows the sums); before the call
   * only when the budget would otherwise leave history out, as `'threshold'` does then.
   * @default 'threshold'
   */
  readonly policy?: 'threshold' | 'cost';
  /**
   * `'threshold'` policy: compact when the input (system prompt and every message the branch
   * shows) would take more than this share of `budget.maxInputTokens`, or when the budget would
   * leave history out. Below 1 it compacts before the overflow. Not used by `'cost'`.
   * @default 0.8
   */
  readonly threshold?: number;
  /** What stays after the summary (as for `compact()`). @default 2 (the last two turns) */
  readonly keep?: CompactKeep;
  /** `'cost'` policy: how many next calls the costs are counted over. @default 20 */
  readonly horizon?: number;
  /**
   * `'cost'` policy: tokens each next call adds (a question and its reply).
   * @default the mean turn of the branch's history
   */
  readonly growthTokens?: number;
  /**
   * `'cost'` policy: the summary's expected length, in output tokens.
   * @default the branch's last summary, else 1000
   */
  readonly summaryTokens?: number;
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
       * `'cost'` policy: compacting pays, and runs after this call's reply is saved
       * (`runDeferredCompaction()`); this call is sent as the branch is.
       */
      readonly status: 'deferred';
      readonly decision: CompactionCostDecision;
    }
  | {
      /** `'cost'` policy: compacting would cost more than it saves over the horizon; not now. */
      readonly status: 'not-worth-it';
      readonly decision: CompactionCostDecision;
    }
  | {
      /**
       * A deferred compaction found the branch compacted by another writer since it was decided
       * (or while its summary was made): nothing was written.
       */
      readonly status: 'superseded';
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
  readonly policy: 'threshold' | 'cost';
  readonly threshold: number;
  readonly keep: CompactKeep;
  readonly horizon: number;
  readonly growthTokens: number | undefined;
  readonly summaryTokens: number | undefined;
}

/** A count option of the cost policy: a whole number within its bounds, or undefined. */
function checkCount(
  method: string,
  name: string,
  value: unknown,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(
      `${method}: autoCompact.${name} must be a whole number from ${min} to ${max}, received ${typeof value === 'string' ? JSON.stringify(value) : String(value)}.`,
      {
        issues: [
          { path: `autoCompact.${name}`, message: `expected an integer in [${min}, ${max}]` },
        ],
      },
    );
  }
  return value;
}

/** Checks the engine's `autoCompact` option; a `ValidationError` that says what to pass. */
export function checkAutoCompact(method: string, value: unknown): CheckedAutoCompact {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(
      `${method}: autoCompact must be an object such as { summarize: summarizer({ model }), threshold: 0.8 }.`,
      { issues: [{ path: 'autoCompact', message: 'expected an object' }] },
    );
  }
  const { threshold = 0.8, summarize, keep, policy = 'threshold' } = value as AutoCompactOptions;
  if (policy !== 'threshold' && policy !== 'cost') {
    throw new ValidationError(
      `${method}: autoCompact.policy must be 'threshold' or 'cost', received ${JSON.stringify(policy)}.`,
      { issues: [{ path: 'autoCompact.policy', message: "expected 'threshold' or 'cost'" }] },
    );
  }
  const options = value as AutoCompactOptions;
  const horizon = checkCount(method, 'horizon', options.horizon, 1, 10_000) ?? 20;
  const growthTokens = checkCount(method, 'growthTokens', options.growthTokens, 0, 100_000_000);
  const summaryTokens = checkCount(method, 'summaryTokens', options.summaryTokens, 1, 100_000_000);
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
  return {
    summarize: checked.summarize,
    policy,
    threshold,
    keep: checked.keep ?? 2,
    horizon,
    growthTokens,
    summaryTokens,
  };
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
  compact: () => Promise<CompactionResult | null | 'superseded'>,
): Promise<AutoCompaction> {
  try {
    const result = await compact();
    if (result === 'superseded') return { status: 'superseded' };
    return result === null ? { status: 'nothing-to-compact' } : { status: 'compacted', result };
  } catch (error) {
    if (!EngineError.isInstance(error)) throw error;
    return { status: 'failed', error: error.message };
  }
}
