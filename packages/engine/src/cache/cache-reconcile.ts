// Predicted, then confirmed: the cache prediction a budgeted resolve made, checked against the
// cache reads and writes the provider reported for that call, per call and per branch.
import { ValidationError } from '@ctxgraph/fragments-core';
import {
  type CacheBreak,
  type CacheBreakCause,
  type CachePrediction,
  type CacheUnit,
  tokenTolerance,
  unitAt,
} from './cache-prediction';

/**
 * The predictions this process's resolves made, with the input they were made for. Module-
 * private: only a prediction returned by `resolve({ budget })` can be confirmed, so nothing a
 * client sends can make up one.
 */
const issued = new WeakMap<object, readonly CacheUnit[]>();

/** Remembers the input a prediction was made for (the planner calls it). */
export function registerPrediction(prediction: CachePrediction, units: readonly CacheUnit[]): void {
  issued.set(prediction, units);
}

/** How the provider's report compares with the prediction. */
export type CacheCallStatus =
  /** The share of input read from the cache is the predicted one (within 2 points). */
  | 'agreed'
  /** The provider read less than predicted. */
  | 'read-less'
  /** The provider read more than predicted (a cache warmed by another engine, say). */
  | 'read-more';

/** One call's prediction and what the provider confirmed, as recorded with the reply's usage. */
export interface CacheCallRecord {
  /** The cache profile the call was planned with. */
  readonly profile: string;
  /** In the engine's token counts. */
  readonly predicted: {
    readonly inputTokens: number;
    readonly reusableTokens: number;
    readonly newTokens: number;
    readonly readTokens: number;
    readonly writeTokens: number;
    readonly break: CacheBreak | null;
  };
  /** In the provider's token counts (from the reported usage). */
  readonly confirmed: {
    readonly inputTokens: number;
    readonly readTokens: number;
    /** Null when the provider does not report cache writes. */
    readonly writeTokens: number | null;
    /** The new tokens in the provider's count (the predicted share of its input). */
    readonly newTokens: number;
    /**
     * Where the provider's read stopped short of what the previous call sent (its read mapped
     * onto the input), and why; null when it read all of it.
     */
    readonly break: CacheBreak | null;
  };
  readonly status: CacheCallStatus;
  /**
   * The call's later steps (a tool-calling run: one provider call per step), second step first;
   * absent for a one-step call. `predicted` and `confirmed` above are the first step's.
   */
  readonly steps?: readonly CacheStepRecord[];
}

/**
 * A later step of a call, reconciled. Its input is the first step's plus the earlier steps'
 * output (tool calls and results), sent under the same marks, so it is predicted to read what the
 * first step left in the cache: with breakpoints, the prefix up to the last mark (the first
 * step's predicted read plus write); where the provider caches on its own (`'prefix'`), the first
 * step's whole input, rounded down to the prefix step. What the steps added is new input.
 */
export interface CacheStepRecord {
  /** In the engine's token counts (the step's input mapped with the first step's ratio). */
  readonly predicted: { readonly inputTokens: number; readonly readTokens: number };
  /** In the provider's token counts. */
  readonly confirmed: {
    readonly inputTokens: number;
    readonly readTokens: number;
    /** Null when the provider does not report cache writes. */
    readonly writeTokens: number | null;
    /** What the step sent beyond the step before it (that step's output and tool results). */
    readonly newTokens: number;
  };
  readonly status: CacheCallStatus;
  /** Where the step's read stopped short of the predicted read; null when it did not. */
  readonly break: CacheBreak | null;
}

/** One step's usage as the SDK reported it. */
interface ReportedStep {
  readonly inputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
}

const share = (part: number, whole: number): number => (whole > 0 ? part / whole : 0);

/**
 * Checks a prediction against the usage the provider reported for the call and returns the
 * record stored with the reply.
 */
export function reconcileCache(
  where: string,
  prediction: unknown,
  usage: ReportedStep,
  laterSteps: readonly ReportedStep[] = [],
): CacheCallRecord {
  const units =
    typeof prediction === 'object' && prediction !== null ? issued.get(prediction) : undefined;
  if (units === undefined) {
    throw new ValidationError(
      `${where}: cache must be the prediction a budgeted resolve returned (result.budget.cache), as it was returned.`,
      { issues: [{ path: 'cache', message: 'expected result.budget.cache' }] },
    );
  }
  const planned = prediction as CachePrediction;
  const providerInput = usage.inputTokens ?? 0;
  const read = usage.cacheReadTokens ?? 0;
  // The provider counts with its own tokenizer: map its figures onto the engine's count.
  const scale = providerInput > 0 ? planned.inputTokens / providerInput : 1;
  const readInEngineTokens = read * scale;
  const tolerance = tokenTolerance(planned.inputTokens, planned.rules.prefixStep);
  const predictedShare = share(planned.readTokens, planned.inputTokens);
  const confirmedShare = share(read, providerInput);
  const status: CacheCallStatus =
    Math.abs(confirmedShare - predictedShare) <= 0.02 ||
    Math.abs(readInEngineTokens - planned.readTokens) <= tolerance
      ? 'agreed'
      : confirmedShare < predictedShare
        ? 'read-less'
        : 'read-more';
  let confirmedBreak: CacheBreak | null = null;
  if (status === 'agreed') confirmedBreak = planned.break;
  else if (readInEngineTokens < planned.reusableTokens - tolerance) {
    const at = unitAt(units, readInEngineTokens)?.unit ?? units[0];
    const cause: CacheBreakCause =
      status === 'read-less' ? 'unexplained' : (planned.break?.cause ?? 'unexplained');
    if (at !== undefined) {
      const named =
        at.kind === 'system' && planned.break?.kind === 'fragment' ? planned.break : null;
      confirmedBreak =
        named === null ? { kind: at.kind, id: at.id, name: at.name, cause } : { ...named, cause };
    }
  } else if (planned.break !== null && planned.break.cause !== 'first-call') {
    // Read at least what the previous call sent: only a changed prefix (reported as predicted)
    // remains a break.
    confirmedBreak =
      planned.break.cause === 'changed' || planned.break.cause === 'removed' ? planned.break : null;
  }
  const steps = reconcileLaterSteps(planned, units, providerInput, scale, tolerance, laterSteps);
  return {
    ...(steps.length === 0 ? {} : { steps }),
    profile: planned.profile,
    predicted: {
      inputTokens: planned.inputTokens,
      reusableTokens: planned.reusableTokens,
      newTokens: planned.newTokens,
      readTokens: planned.readTokens,
      writeTokens: planned.writeTokens,
      break: planned.break,
    },
    confirmed: {
      inputTokens: providerInput,
      readTokens: read,
      writeTokens: usage.cacheWriteTokens,
      newTokens: Math.round(providerInput * share(planned.newTokens, planned.inputTokens)),
      break: confirmedBreak,
    },
    status,
  };
}

/** What a later step is predicted to read (engine tokens): what the first step left cached. */
function laterStepRead(planned: CachePrediction): number {
  const { rules } = planned;
  if (rules.mode === 'breakpoints') return planned.readTokens + planned.writeTokens;
  if (rules.mode === 'prefix' && planned.inputTokens >= rules.minCacheableTokens) {
    const step = Math.max(1, rules.prefixStep);
    return Math.floor(planned.inputTokens / step) * step;
  }
  return 0;
}

function reconcileLaterSteps(
  planned: CachePrediction,
  units: readonly CacheUnit[],
  firstInput: number,
  scale: number,
  tolerance: number,
  laterSteps: readonly ReportedStep[],
): CacheStepRecord[] {
  const predictedRead = laterStepRead(planned);
  let previousInput = firstInput;
  return laterSteps.map((step) => {
    const input = step.inputTokens ?? 0;
    const read = step.cacheReadTokens ?? 0;
    const readInEngineTokens = read * scale;
    const status: CacheCallStatus =
      Math.abs(readInEngineTokens - predictedRead) <= tolerance
        ? 'agreed'
        : readInEngineTokens < predictedRead
          ? 'read-less'
          : 'read-more';
    let stepBreak: CacheBreak | null = null;
    if (status === 'read-less') {
      const at = unitAt(units, readInEngineTokens)?.unit ?? units[0];
      if (at !== undefined)
        stepBreak = { kind: at.kind, id: at.id, name: at.name, cause: 'unexplained' };
    }
    const record: CacheStepRecord = {
      predicted: { inputTokens: Math.round(input * scale), readTokens: predictedRead },
      confirmed: {
        inputTokens: input,
        readTokens: read,
        writeTokens: step.cacheWriteTokens,
        newTokens: Math.max(0, input - previousInput),
      },
      status,
      break: stepBreak,
    };
    previousInput = input;
    return record;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const causes: ReadonlySet<string> = new Set<CacheBreakCause>([
  'first-call',
  'changed',
  'removed',
  'expired',
  'model-changed',
  'below-minimum',
  'not-marked',
  'not-cached',
  'unexplained',
]);

function readBreak(value: unknown): CacheBreak | null {
  if (!isObject(value)) return null;
  const { kind, id, name, cause } = value;
  if (kind !== 'fragment' && kind !== 'message' && kind !== 'system') return null;
  if (typeof id !== 'string' || typeof name !== 'string' || typeof cause !== 'string') return null;
  if (!causes.has(cause)) return null;
  return { kind, id, name, cause: cause as CacheBreakCause };
}

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;

/** A stored record read back (null when absent or malformed). */
export function readCacheRecord(value: unknown): CacheCallRecord | null {
  if (!isObject(value) || typeof value.profile !== 'string') return null;
  const { predicted, confirmed, status } = value;
  if (!isObject(predicted) || !isObject(confirmed)) return null;
  if (status !== 'agreed' && status !== 'read-less' && status !== 'read-more') return null;
  const steps = Array.isArray(value.steps)
    ? value.steps.map(readStepRecord).filter((step) => step !== null)
    : [];
  return {
    ...(steps.length === 0 ? {} : { steps }),
    profile: value.profile,
    predicted: {
      inputTokens: count(predicted.inputTokens),
      reusableTokens: count(predicted.reusableTokens),
      newTokens: count(predicted.newTokens),
      readTokens: count(predicted.readTokens),
      writeTokens: count(predicted.writeTokens),
      break: readBreak(predicted.break),
    },
    confirmed: {
      inputTokens: count(confirmed.inputTokens),
      readTokens: count(confirmed.readTokens),
      writeTokens: confirmed.writeTokens === null ? null : count(confirmed.writeTokens),
      newTokens: count(confirmed.newTokens),
      break: readBreak(confirmed.break),
    },
    status,
  };
}

function readStepRecord(value: unknown): CacheStepRecord | null {
  if (!isObject(value)) return null;
  const { predicted, confirmed, status } = value;
  if (!isObject(predicted) || !isObject(confirmed)) return null;
  if (status !== 'agreed' && status !== 'read-less' && status !== 'read-more') return null;
  return {
    predicted: {
      inputTokens: count(predicted.inputTokens),
      readTokens: count(predicted.readTokens),
    },
    confirmed: {
      inputTokens: count(confirmed.inputTokens),
      readTokens: count(confirmed.readTokens),
      writeTokens: confirmed.writeTokens === null ? null : count(confirmed.writeTokens),
      newTokens: count(confirmed.newTokens),
    },
    status,
    break: readBreak(value.break),
  };
}

/** One call whose cache read stopped short of what the previous call sent. */
export interface CacheMiss {
  /** The reply the call produced (the node its usage is recorded on). */
  readonly messageId: string;
  readonly status: CacheCallStatus;
  /** Where the plan expected the read to stop, and why. */
  readonly predicted: CacheBreak | null;
  /** Where the provider's read stopped, and why (`'unexplained'` when the rules do not say). */
  readonly confirmed: CacheBreak | null;
  /** For a later step of a tool-calling call: its number (2 for the second); absent for the first. */
  readonly step?: number;
}

/** The cache reconciliation added up over calls recorded with `withUsage(…, { cache })`. */
export interface CacheTotals {
  /** Provider calls with a prediction recorded (each step of a tool-calling call counts). */
  readonly calls: number;
  /** The provider's counts over those calls. */
  readonly inputTokens: number;
  readonly readTokens: number;
  /** Null when none of the calls' providers reports cache writes. */
  readonly writeTokens: number | null;
  /** Tokens no earlier input started with (the provider's count). */
  readonly newTokens: number;
  /** `readTokens / inputTokens` (0 without input). */
  readonly hitRate: number;
  /** The predicted share, in the engine's counts. */
  readonly predictedHitRate: number;
  /** `writeTokens / newTokens`: 1 when only new tokens are written; null without writes reported. */
  readonly writeAmplification: number | null;
  /** Calls per status. */
  readonly agreed: number;
  readonly readLess: number;
  readonly readMore: number;
  /** Every call with a predicted or confirmed break, oldest first. */
  readonly misses: readonly CacheMiss[];
}

/** Adds up the records of the calls, oldest first. */
export function cacheTotals(
  records: Iterable<{ readonly messageId: string; readonly record: CacheCallRecord }>,
): CacheTotals {
  let calls = 0;
  let inputTokens = 0;
  let readTokens = 0;
  let writeTokens: number | null = null;
  let newTokens = 0;
  let newTokensWithWrites = 0;
  let predictedRead = 0;
  let predictedInput = 0;
  const statuses = { agreed: 0, 'read-less': 0, 'read-more': 0 };
  const misses: CacheMiss[] = [];
  for (const { messageId, record } of records) {
    calls += 1;
    inputTokens += record.confirmed.inputTokens;
    readTokens += record.confirmed.readTokens;
    newTokens += record.confirmed.newTokens;
    if (record.confirmed.writeTokens !== null) {
      writeTokens = (writeTokens ?? 0) + record.confirmed.writeTokens;
      newTokensWithWrites += record.confirmed.newTokens;
    }
    predictedRead += record.predicted.readTokens;
    predictedInput += record.predicted.inputTokens;
    statuses[record.status] += 1;
    if (record.predicted.break !== null || record.confirmed.break !== null) {
      misses.push({
        messageId,
        status: record.status,
        predicted: record.predicted.break,
        confirmed: record.confirmed.break,
      });
    }
    (record.steps ?? []).forEach((step, index) => {
      calls += 1;
      inputTokens += step.confirmed.inputTokens;
      readTokens += step.confirmed.readTokens;
      newTokens += step.confirmed.newTokens;
      if (step.confirmed.writeTokens !== null) {
        writeTokens = (writeTokens ?? 0) + step.confirmed.writeTokens;
        newTokensWithWrites += step.confirmed.newTokens;
      }
      predictedRead += step.predicted.readTokens;
      predictedInput += step.predicted.inputTokens;
      statuses[step.status] += 1;
      if (step.break !== null)
        misses.push({
          messageId,
          status: step.status,
          predicted: null,
          confirmed: step.break,
          step: index + 2,
        });
    });
  }
  return {
    calls,
    inputTokens,
    readTokens,
    writeTokens,
    newTokens,
    hitRate: share(readTokens, inputTokens),
    predictedHitRate: share(predictedRead, predictedInput),
    writeAmplification:
      writeTokens === null || newTokensWithWrites === 0 ? null : writeTokens / newTokensWithWrites,
    agreed: statuses.agreed,
    readLess: statuses['read-less'],
    readMore: statuses['read-more'],
    misses,
  };
}
