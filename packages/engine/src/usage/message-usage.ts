import {
  type ContextFragment,
  isFragment,
  isLazyFragment,
  isMessageFragment,
  type JsonObject,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { type CacheCallRecord, readCacheRecord, reconcileCache } from '../cache/cache-reconcile';
import {
  calibrationRecord,
  type InputCalibrationRecord,
  readCalibration,
} from './input-calibration';
import {
  anthropicCacheCorrection,
  type PendingProviderCompaction,
  replyCompaction,
} from './provider-compaction';

/**
 * The usage of the model call that produced an assistant message, as stored in the node's engine
 * record (`engineRecord.usage`, beside the message, never in it). Counts the provider did not
 * report are null.
 */
export interface MessageUsage {
  /** The model that answered (`'claude-sonnet-4-20250514'`, `'openai:gpt-4o'`). */
  readonly modelId: string;
  /** All input tokens: uncached, read from cache and written to cache. */
  readonly inputTokens: number | null;
  /** Input tokens read from the provider's prompt cache. */
  readonly cacheReadTokens: number | null;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheWriteTokens: number | null;
  readonly outputTokens: number | null;
  /**
   * How many model calls these figures add up (a reply continued after a client-side tool result
   * with `withUsage(…, { add: true })` sums its calls). 1 when not recorded.
   */
  readonly calls: number;
  /**
   * How the call that produced the message ended: `'complete'` (a normal reply), `'aborted'`
   * (stopped by the client or the server), `'error'` (the model call failed) or `'interrupted'` (its process
   * died mid-reply: what it had streamed, saved by another). Recorded with
   * `withUsage(…, { outcome })`; `'complete'` when not recorded.
   */
  readonly outcome: ReplyOutcome;
  /**
   * With `withUsage(…, { cache })`: the call's cache prediction and what the provider's usage
   * confirmed of it (for a reply continued in place with `add`, the latest call's).
   */
  readonly cache?: CacheCallRecord;
  /**
   * With `withUsage(…, { cache })` after a budgeted resolve: what the budget counted for the call,
   * the factor it used, the input the provider reported, and the calibration state after this
   * sample (see `ContextEngineOptions.calibration`).
   */
  readonly calibration?: InputCalibrationRecord;
  /**
   * With `withUsage(…, { overflowRetry })`: the first call for this reply was refused by the
   * provider as too long for the model's context, and this reply is the answer to a second
   * call made with less history (see {@link OverflowRetry}).
   */
  readonly overflowRetry?: OverflowRetry;
}

/**
 * A reply's call that was retried once after the provider refused the first one as too long for
 * the model's context window (the AI SDK request cycle records it; `usageOf(node).overflowRetry`).
 */
export interface OverflowRetry {
  /** The input tokens the provider said it allows (its own count), when its error said. */
  readonly limit: number | null;
  /** The input tokens the provider counted for the refused call, when its error said. */
  readonly sent: number | null;
  /** The budget (in the engine's count) the second call was resolved with. */
  readonly maxInputTokens: number;
  /**
   * `'compacted'`: the engine's `autoCompact` summarized older turns for the second call;
   * `'cut'`: the budget left older history out.
   */
  readonly strategy: 'compacted' | 'cut';
}

/** How the call that produced a reply ended (see {@link MessageUsage.outcome}). */
export type ReplyOutcome = 'complete' | 'aborted' | 'error' | 'interrupted';

/** The AI SDK's usage of a call or step (`LanguageModelUsage`; only the fields read here). */
export interface StepUsage {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly inputTokenDetails?: {
    readonly cacheReadTokens?: number | undefined;
    readonly cacheWriteTokens?: number | undefined;
  };
  /** The AI SDK's older name for `inputTokenDetails.cacheReadTokens`. */
  readonly cachedInputTokens?: number | undefined;
}

/**
 * What {@link withUsage} takes: the AI SDK's `usage` of a call (`LanguageModelUsage`; only the
 * fields read here) and the model id.
 */
export interface UsageInput {
  /**
   * The call's usage (`result.totalUsage`). May be left out when `steps` is given: then the
   * steps' usage is summed and this is not read.
   */
  readonly usage?: StepUsage;
  readonly modelId: string;
  /**
   * The call's steps (`await result.steps`, or the `onFinish` event's `steps`): with tool calls a
   * `streamText` / `generateText` run makes one provider call per step, each with its own cache
   * reads and writes. When given, the recorded figures are the steps' summed (each step's
   * Anthropic compaction cache tokens added from its own `providerMetadata`), `calls` is the
   * number of steps, and the cache prediction is reconciled step by step: the first step is the
   * input the engine planned; a later step sends that input plus the earlier steps' output (tool
   * calls and results) under the same marks, so it is predicted to read what the first step left
   * in the cache and to write nothing the plan marked (see `CacheCallRecord.steps`).
   */
  readonly steps?: readonly {
    readonly usage: StepUsage;
    readonly providerMetadata?: unknown;
  }[];
  /**
   * When the saved message replaces a node in place (a reply continued after a client-side tool
   * result, under the same message id), add this usage to the usage recorded there (tokens and
   * calls summed) instead of replacing it. A new node simply gets this usage. @default false
   */
  readonly add?: boolean;
  /**
   * How the call ended: `'aborted'` or `'error'` marks a reply that is not a normal one (kept in
   * the engine's record, reported by `usage()` and `inspect()`), so it can be told apart.
   * @default 'complete'
   */
  readonly outcome?: ReplyOutcome;
  /**
   * The call's cache prediction, `result.budget.cache` of the budgeted resolve the call sent:
   * the engine checks it against the usage (hit rate, write amplification, where the read
   * stopped) and records both with the reply.
   */
  readonly cache?: unknown;
  /**
   * The call's `result.response` (its `messages` are what this call produced). When they hold a
   * provider's compaction (Anthropic's compaction block, OpenAI's compaction item) that the reply
   * carries, `save()` makes the reply a compaction node: the turns the call sent stay in the
   * graph but are no longer shown or sent, and a rewind before the reply brings them back. Only
   * a compaction among the call's own response messages counts, never one that a message (a
   * chat client's) merely contains.
   */
  readonly response?: unknown;
  /**
   * The call's `result.providerMetadata`. With Anthropic's `iterations` in it, the cache reads
   * and writes of the compaction step (which the AI SDK's usage leaves out) are added to the
   * recorded usage, and the compaction's own share is kept in the compaction node's record.
   */
  readonly providerMetadata?: unknown;
  /**
   * The reply answers a second call made after the provider refused the first as too long for
   * the model's context (kept in the engine's record, read back as `usageOf(node).overflowRetry`).
   */
  readonly overflowRetry?: OverflowRetry;
}

const where = 'withUsage(fragment, { usage, modelId })';

const OUTCOMES: readonly ReplyOutcome[] = ['complete', 'aborted', 'error', 'interrupted'];

function count(path: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ValidationError(
      `${where}: ${path} must be a non-negative integer or undefined, received ${String(value)}.`,
      { issues: [{ path, message: 'expected a non-negative integer' }] },
    );
  }
  return value;
}

/** What `withUsage` keeps for a fragment: the usage as stored, and whether it adds up. */
interface RecordedUsage {
  readonly usage: StoredUsage;
  readonly add: boolean;
  /** The provider compaction the reply carries (the call's response produced it). */
  readonly compaction?: PendingProviderCompaction;
}

/** The usage as the engine record holds it. */
type StoredUsage = Omit<MessageUsage, 'outcome' | 'calls'> & {
  readonly calls?: number;
  readonly outcome?: ReplyOutcome;
};

/** Checks the AI SDK usage and turns it into the stored form. */
function toMessageUsage(input: UsageInput): RecordedUsage {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError(`${where}: the second argument must be { usage, modelId }.`);
  }
  const { usage, modelId } = input;
  if (typeof modelId !== 'string' || modelId.trim() === '') {
    throw new ValidationError(
      `${where}: modelId must be a non-empty string (the model that answered, such as result.response.modelId).`,
      { issues: [{ path: 'modelId', message: 'expected a non-empty string' }] },
    );
  }
  const steps = checkSteps(input.steps);
  if (steps === undefined && (typeof usage !== 'object' || usage === null)) {
    throw new ValidationError(
      `${where}: usage must be the AI SDK's usage object (result.totalUsage), or pass steps (result.steps).`,
      { issues: [{ path: 'usage', message: 'expected an object' }] },
    );
  }
  const { add, outcome } = input;
  if (add !== undefined && typeof add !== 'boolean') {
    throw new ValidationError(`${where}: add must be a boolean or undefined.`, {
      issues: [{ path: 'add', message: 'expected a boolean' }],
    });
  }
  if (outcome !== undefined && !OUTCOMES.includes(outcome)) {
    throw new ValidationError(
      `${where}: outcome must be 'complete', 'aborted', 'error' or 'interrupted', received ${JSON.stringify(outcome) ?? String(outcome)}.`,
      {
        issues: [
          { path: 'outcome', message: "expected 'complete', 'aborted', 'error' or 'interrupted'" },
        ],
      },
    );
  }
  const overflowRetry =
    input.overflowRetry === undefined ? undefined : checkOverflowRetry(input.overflowRetry);
  const measured =
    steps === undefined
      ? [stepFigures('usage', usage as StepUsage, input.providerMetadata)]
      : steps.map((step, index) =>
          stepFigures(`steps[${index}].usage`, step.usage, step.providerMetadata),
        );
  const sum = (pick: (step: StepFigures) => number | null): number | null =>
    measured.reduce<number | null>(
      (total, step) => (pick(step) === null ? total : (total ?? 0) + (pick(step) as number)),
      null,
    );
  const counted = {
    modelId,
    inputTokens: sum((step) => step.counted.inputTokens),
    cacheReadTokens: sum((step) => step.counted.cacheReadTokens),
    cacheWriteTokens: sum((step) => step.counted.cacheWriteTokens),
    outputTokens: sum((step) => step.counted.outputTokens),
  };
  const first = measured[0] as StepFigures;
  // The budget's count against the provider's for the input the engine planned (the first step's:
  // later steps add tool traffic the budget did not count).
  const calibration =
    input.cache === undefined
      ? undefined
      : calibrationRecord(input.cache, modelId, first.reported.inputTokens);
  return {
    usage: {
      ...counted,
      ...(measured.length > 1 ? { calls: measured.length } : {}),
      ...(outcome === undefined || outcome === 'complete' ? {} : { outcome }),
      ...(overflowRetry === undefined ? {} : { overflowRetry }),
      // The prediction is of the calls the engine sent, so it is checked against the figures the
      // SDK reported for each, not the compaction step's cache tokens added above.
      ...(input.cache === undefined
        ? {}
        : {
            cache: reconcileCache(
              where,
              input.cache,
              first.reported,
              measured.slice(1).map((step) => step.reported),
            ),
          }),
      ...(calibration === undefined ? {} : { calibration }),
    },
    add: add === true,
  };
}

/** `overflowRetry` checked and copied (plain numbers and a known strategy only). */
function checkOverflowRetry(value: unknown): OverflowRetry {
  const fail = (path: string, message: string): never => {
    throw new ValidationError(
      `${where}: overflowRetry must be { limit, sent, maxInputTokens, strategy }; ${path} ${message}.`,
      { issues: [{ path, message }] },
    );
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('overflowRetry', 'is not an object');
  const { limit, sent, maxInputTokens, strategy } = value as Record<string, unknown>;
  const tokens = (path: string, figure: unknown): number | null =>
    figure === null || figure === undefined ? null : count(path, figure);
  if (
    typeof maxInputTokens !== 'number' ||
    !Number.isSafeInteger(maxInputTokens) ||
    maxInputTokens < 1
  )
    fail('overflowRetry.maxInputTokens', 'is not a positive integer');
  if (strategy !== 'compacted' && strategy !== 'cut')
    fail('overflowRetry.strategy', "is not 'compacted' or 'cut'");
  return {
    limit: tokens('overflowRetry.limit', limit),
    sent: tokens('overflowRetry.sent', sent),
    maxInputTokens: maxInputTokens as number,
    strategy: strategy as OverflowRetry['strategy'],
  };
}

/** A stored overflow retry read back, or undefined when it is not one. */
function readOverflowRetry(value: unknown): OverflowRetry | undefined {
  if (!isPlainObject(value)) return undefined;
  const figure = (entry: unknown): number | null =>
    typeof entry === 'number' && Number.isSafeInteger(entry) && entry >= 0 ? entry : null;
  const { maxInputTokens, strategy } = value;
  if (typeof maxInputTokens !== 'number' || !Number.isSafeInteger(maxInputTokens)) return undefined;
  if (strategy !== 'compacted' && strategy !== 'cut') return undefined;
  return { limit: figure(value.limit), sent: figure(value.sent), maxInputTokens, strategy };
}

/** One step's figures: as the SDK reported them, and as recorded (Anthropic correction added). */
interface StepFigures {
  readonly reported: {
    readonly inputTokens: number | null;
    readonly cacheReadTokens: number | null;
    readonly cacheWriteTokens: number | null;
  };
  readonly counted: {
    readonly inputTokens: number | null;
    readonly cacheReadTokens: number | null;
    readonly cacheWriteTokens: number | null;
    readonly outputTokens: number | null;
  };
}

function stepFigures(path: string, usage: StepUsage, providerMetadata: unknown): StepFigures {
  const reported = {
    inputTokens: count(`${path}.inputTokens`, usage.inputTokens),
    cacheReadTokens: count(
      `${path}.inputTokenDetails.cacheReadTokens`,
      usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens,
    ),
    cacheWriteTokens: count(
      `${path}.inputTokenDetails.cacheWriteTokens`,
      usage.inputTokenDetails?.cacheWriteTokens,
    ),
  };
  // Anthropic's compaction step: its input and output are in the SDK's usage already, its cache
  // reads and writes are not (see anthropicCacheCorrection): add those, nothing else.
  const correction = anthropicCacheCorrection(providerMetadata);
  const plus = (value: number | null, added: number): number | null =>
    added === 0 ? value : (value ?? 0) + added;
  return {
    reported,
    counted: {
      inputTokens: plus(
        reported.inputTokens,
        correction.cacheReadTokens + correction.cacheWriteTokens,
      ),
      cacheReadTokens: plus(reported.cacheReadTokens, correction.cacheReadTokens),
      cacheWriteTokens: plus(reported.cacheWriteTokens, correction.cacheWriteTokens),
      outputTokens: count(`${path}.outputTokens`, usage.outputTokens),
    },
  };
}

/** `steps` checked: undefined when not given; a ValidationError when not a non-empty list of steps. */
function checkSteps(steps: UsageInput['steps']): UsageInput['steps'] {
  if (steps === undefined) return undefined;
  const fail = (path: string, message: string): never => {
    throw new ValidationError(
      `${where}: steps must be the call's steps (result.steps), each with its usage; ${path} ${message}.`,
      { issues: [{ path, message }] },
    );
  };
  if (!Array.isArray(steps) || steps.length === 0) fail('steps', 'is not a non-empty array');
  steps.forEach((step, index) => {
    if (typeof step !== 'object' || step === null) fail(`steps[${index}]`, 'is not an object');
    if (typeof step.usage !== 'object' || step.usage === null)
      fail(`steps[${index}].usage`, 'is not an object');
  });
  return steps;
}

/**
 * The usage stored for a node continued in place (`add`): the recorded one plus the new one,
 * counts summed (null only when neither has a count), calls summed, the new call's model and
 * outcome. Undefined when either is not a usage record.
 */
export function addUsage(recorded: unknown, added: unknown): JsonObject | undefined {
  const before = readUsage(recorded);
  const now = readUsage(added);
  if (before === null || now === null) return undefined;
  const sum = (left: number | null, right: number | null): number | null =>
    left === null && right === null ? null : (left ?? 0) + (right ?? 0);
  return {
    modelId: now.modelId,
    inputTokens: sum(before.inputTokens, now.inputTokens),
    cacheReadTokens: sum(before.cacheReadTokens, now.cacheReadTokens),
    cacheWriteTokens: sum(before.cacheWriteTokens, now.cacheWriteTokens),
    outputTokens: sum(before.outputTokens, now.outputTokens),
    calls: before.calls + now.calls,
    ...(now.outcome === 'complete' ? {} : { outcome: now.outcome }),
    ...(now.cache === undefined ? {} : { cache: now.cache as unknown as JsonObject }),
    ...(now.calibration === undefined
      ? {}
      : { calibration: now.calibration as unknown as JsonObject }),
    ...(now.overflowRetry === undefined
      ? {}
      : { overflowRetry: now.overflowRetry as unknown as JsonObject }),
  };
}

/**
 * The usage `withUsage` attached, by fragment. Module-private: only a fragment made by
 * `withUsage` in this process has an entry, so nothing an app or a chat client sends (JSON, a
 * message's metadata) can record usage.
 */
const recordedUsage = new WeakMap<object, RecordedUsage>();

/**
 * The assistant message fragment with the usage of the call that produced it attached. The
 * message itself is not changed: `save()` stores the usage in the node's engine record, beside
 * the message, where no app metadata and no chat client can reach it; `engine.usage()` and
 * `inspect()` add it up per branch and per chat. Set the fragment this returns (a copy of it has
 * no usage).
 *
 * @example
 * ```ts
 * const result = await generateText({ model, system, messages });
 * engine.set(withUsage(assistant(result.text), { usage: result.usage, modelId: 'claude-sonnet-4' }));
 * await engine.save();
 * ```
 */
export function withUsage<T extends ContextFragment>(fragment: T, input: UsageInput): T {
  if (
    !isFragment(fragment) ||
    !isMessageFragment(fragment) ||
    isLazyFragment(fragment) ||
    typeof fragment.codec?.encode !== 'function'
  ) {
    throw new ValidationError(
      `${where}: fragment must be a message fragment such as assistant(text) or assistantText(text).`,
      { issues: [{ path: 'fragment', message: 'expected a message fragment with a codec' }] },
    );
  }
  const usage = toMessageUsage(input);
  const original = fragment.codec.encode() as UIMessage;
  if (original.role !== 'assistant') {
    throw new ValidationError(
      `${where}: usage belongs to the assistant message a call produced, but this is a ${original.role} message.`,
      { issues: [{ path: 'fragment', message: 'expected an assistant message' }] },
    );
  }
  const compaction =
    input.response === undefined
      ? undefined
      : replyCompaction(original.parts, input.response, input.providerMetadata);
  const attached = { ...(fragment as ContextFragment) } as T;
  recordedUsage.set(attached, compaction === undefined ? usage : { ...usage, compaction });
  return attached;
}

/**
 * The key of the record `engineRecordFor` hands to `save()` under which a reply's provider
 * compaction waits until the save knows where the node goes (its boundary); `save()` turns it
 * into the node's `compaction` and never writes it.
 */
export const PENDING_PROVIDER_COMPACTION = 'pendingProviderCompaction';

/**
 * The engine record `save()` writes for a fragment: its usage when `withUsage` made it (and a
 * provider compaction its call produced, under {@link PENDING_PROVIDER_COMPACTION}).
 */
export function engineRecordFor(fragment: ContextFragment): JsonObject | undefined {
  const recorded = recordedUsage.get(fragment);
  if (recorded === undefined) return undefined;
  const usage = { usage: { ...recorded.usage } as unknown as JsonObject };
  return recorded.compaction === undefined
    ? usage
    : {
        ...usage,
        [PENDING_PROVIDER_COMPACTION]: recorded.compaction as unknown as JsonObject,
      };
}

/** True when `withUsage(…, { add: true })` made the fragment (its usage adds to a replaced node's). */
export function usageAddsFor(fragment: ContextFragment): boolean {
  return recordedUsage.get(fragment)?.add === true;
}

/** A stored usage record read back, or null when it is not one. */
export function readUsage(usage: unknown): MessageUsage | null {
  if (!isPlainObject(usage) || typeof usage.modelId !== 'string') return null;
  const read = (value: unknown): number | null =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
  const calls = usage.calls;
  const outcome = usage.outcome;
  const result: MessageUsage = {
    modelId: usage.modelId,
    inputTokens: read(usage.inputTokens),
    cacheReadTokens: read(usage.cacheReadTokens),
    cacheWriteTokens: read(usage.cacheWriteTokens),
    outputTokens: read(usage.outputTokens),
    calls: typeof calls === 'number' && Number.isSafeInteger(calls) && calls >= 1 ? calls : 1,
    outcome:
      outcome === 'aborted' || outcome === 'error' || outcome === 'interrupted'
        ? outcome
        : 'complete',
  };
  const cache = usage.cache === undefined ? null : readCacheRecord(usage.cache);
  const calibration = usage.calibration === undefined ? null : readCalibration(usage.calibration);
  const overflowRetry = readOverflowRetry(usage.overflowRetry);
  return {
    ...result,
    ...(cache === null ? {} : { cache }),
    ...(calibration === null ? {} : { calibration }),
    ...(overflowRetry === undefined ? {} : { overflowRetry }),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
