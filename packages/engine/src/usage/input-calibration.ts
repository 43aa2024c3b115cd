// Budgets calibrated by reported usage: each reply's reported input tokens against what the
// budget counted for that call correct the counter for that model. The samples and the state
// they build live in the replies' usage records (the engine's records in the store), so a new
// engine on the chat plans as a warm one does, and nothing a client sends can reach them.

import { type EngineRecordSource, engineRecordOf } from '@ctxgraph/fragments-core';

/** One model's calibration, as kept in the newest reply's usage record. */
export interface CalibrationModel {
  /** The model id the replies were recorded with (`withUsage(…, { modelId })`). */
  readonly modelId: string;
  /** The factor the budget multiplies its counts by for this model (reported ÷ counted). */
  readonly factor: number;
  /** How many samples were taken (absurd ones are not). */
  readonly samples: number;
  /** The newest samples' ratios (reported ÷ counted), newest first; the factor is their median. */
  readonly ratios: readonly number[];
}

/**
 * The calibration recorded with a reply's usage (`MessageUsage.calibration`): what the budget
 * counted for the call and the factor it used, and the state after this reply's sample (every
 * model's factor for the tokenizer), which the next budgeted call on the path starts from.
 */
export interface InputCalibrationRecord {
  /** The tokenizer that counted (`Tokenizer.id`); samples of another tokenizer are not mixed. */
  readonly tokenizer: string;
  /** The budget's count of the input it resolved for this call (the tokenizer's count). */
  readonly counted: number;
  /** The factor the budget used for the call (1 when it had none). */
  readonly factor: number;
  /**
   * The provider's reported input tokens of the call (its first step), or null when it reported
   * none.
   */
  readonly reported: number | null;
  /** False when the sample was left out as absurd (or nothing was reported). */
  readonly accepted: boolean;
  /** Every calibrated model after this sample, the most recently sampled first. */
  readonly models: readonly CalibrationModel[];
}

/** What a budgeted resolve registers with its cache prediction, for `withUsage` to record. */
interface CalibrationIssue {
  readonly tokenizer: string;
  readonly counted: number;
  readonly factor: number;
  /** The state the call planned from (the newest on the path for this tokenizer). */
  readonly models: readonly CalibrationModel[];
}

/** The factor a budgeted call uses, and where it comes from. */
export interface CalibrationInUse {
  /** The model whose factor is used, or null when none is calibrated yet. */
  readonly modelId: string | null;
  readonly factor: number;
  readonly samples: number;
}

/** Samples with fewer tokens than this (counted or reported) are too small to learn from. */
const MINIMUM_SAMPLE_TOKENS = 50;
/** A ratio outside these bounds is not a tokenizer's error but a wrong report: left out. */
const MINIMUM_RATIO = 0.25;
const MAXIMUM_RATIO = 4;
/** How many ratios each model keeps (the outlier check's window). */
const RATIOS_KEPT = 3;
/** How far the newest ratio may lie from the median before it counts as an outlier. */
const OUTLIER_SHARE = 0.25;
/** How many models a record keeps (the most recently sampled). */
const MODELS_KEPT = 8;
/** How far back along the shown path the state is looked for. */
const PATH_LOOKBACK = 64;

/** Predictions issued by this process's budgeted resolves → what the call counted. */
const issued = new WeakMap<object, CalibrationIssue>();

/** Remembers what a budgeted call counted, keyed by its cache prediction (the planner calls it). */
export function registerCalibration(prediction: object, issue: CalibrationIssue): void {
  issued.set(prediction, issue);
}

/**
 * The record `withUsage(…, { cache })` stores: the call's count and factor, the reported input,
 * and the state after the sample. Undefined when the prediction was not issued by a budgeted
 * resolve of this process (nothing from outside can make a sample).
 */
export function calibrationRecord(
  prediction: unknown,
  modelId: string,
  reported: number | null,
): InputCalibrationRecord | undefined {
  if (typeof prediction !== 'object' || prediction === null) return undefined;
  const issue = issued.get(prediction);
  if (issue === undefined) return undefined;
  const ratio = sampleRatio(issue.counted, reported);
  return {
    tokenizer: issue.tokenizer,
    counted: issue.counted,
    factor: issue.factor,
    reported,
    accepted: ratio !== null,
    models: ratio === null ? issue.models : withSample(issue.models, modelId, ratio),
  };
}

/** reported ÷ counted, or null for a sample too small or absurd to learn from. */
function sampleRatio(counted: number, reported: number | null): number | null {
  if (reported === null || !Number.isFinite(reported) || !Number.isFinite(counted)) return null;
  if (reported < MINIMUM_SAMPLE_TOKENS || counted < MINIMUM_SAMPLE_TOKENS) return null;
  const ratio = reported / counted;
  if (ratio < MINIMUM_RATIO || ratio > MAXIMUM_RATIO) return null;
  return Math.round(ratio * 10_000) / 10_000;
}

function withSample(
  models: readonly CalibrationModel[],
  modelId: string,
  ratio: number,
): CalibrationModel[] {
  const before = models.find((model) => model.modelId === modelId);
  const ratios = [ratio, ...(before?.ratios ?? [])].slice(0, RATIOS_KEPT);
  const updated: CalibrationModel = {
    modelId,
    factor: factorOf(ratios),
    samples: (before?.samples ?? 0) + 1,
    ratios,
  };
  return [updated, ...models.filter((model) => model.modelId !== modelId)].slice(0, MODELS_KEPT);
}

/**
 * The factor from a model's newest ratios: the newest one (the next call's input is mostly this
 * one's, so its ratio predicts best), unless it lies more than {@link OUTLIER_SHARE} from the
 * median of the last three, where one odd report is not followed: the median is used until a
 * second sample confirms the change.
 */
function factorOf(ratios: readonly number[]): number {
  const newest = ratios[0] as number;
  const middle = median(ratios);
  return Math.abs(newest - middle) <= OUTLIER_SHARE * middle ? newest : middle;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  const value =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return Math.round(value * 10_000) / 10_000;
}

/** A stored calibration read back, or null when it is not one (every field checked). */
export function readCalibration(value: unknown): InputCalibrationRecord | null {
  if (!isObject(value)) return null;
  const { tokenizer, counted, factor, reported, accepted, models } = value;
  if (typeof tokenizer !== 'string' || !isCount(counted) || !isRatio(factor)) return null;
  if (reported !== null && !isCount(reported)) return null;
  if (typeof accepted !== 'boolean' || !Array.isArray(models)) return null;
  const read: CalibrationModel[] = [];
  for (const model of models.slice(0, MODELS_KEPT)) {
    if (!isObject(model)) return null;
    const { modelId, factor: modelFactor, samples, ratios } = model;
    if (typeof modelId !== 'string' || !isRatio(modelFactor) || !isCount(samples)) return null;
    if (!Array.isArray(ratios) || !ratios.every(isRatio)) return null;
    read.push({ modelId, factor: modelFactor, samples, ratios: ratios.slice(0, RATIOS_KEPT) });
  }
  return { tokenizer, counted, factor, reported, accepted, models: read };
}

/**
 * The calibration state a budgeted call plans from: the newest reply on the shown path (entries
 * from `from` on: the conversation after the applied compaction's boundary, which a new engine
 * reads as a warm one holds it) whose record was counted with `tokenizer`. Looks back a bounded
 * number of messages, so a path without samples costs the same however long it is.
 */
export function calibrationOnPath(
  entries: readonly { readonly node: EngineRecordSource }[],
  from: number,
  tokenizer: string,
): readonly CalibrationModel[] {
  const stop = Math.max(from, entries.length - PATH_LOOKBACK);
  for (let index = entries.length - 1; index >= stop; index -= 1) {
    const node = (entries[index] as { node: EngineRecordSource }).node;
    const usage = engineRecordOf(node)?.usage;
    if (!isObject(usage)) continue;
    const record = readCalibration(usage.calibration);
    if (record !== null && record.tokenizer === tokenizer) return record.models;
  }
  return [];
}

/**
 * The recorded calibrations on the shown path, newest first (at most `limit`), with the message
 * that holds each: what `inspect()` shows as drift.
 */
export function calibrationSamples(
  entries: readonly { readonly node: EngineRecordSource }[],
  from: number,
  limit: number,
): {
  readonly messageId: string;
  readonly modelId: string;
  readonly record: InputCalibrationRecord;
}[] {
  const samples: {
    messageId: string;
    modelId: string;
    record: InputCalibrationRecord;
  }[] = [];
  const stop = Math.max(from, entries.length - PATH_LOOKBACK);
  for (let index = entries.length - 1; index >= stop && samples.length < limit; index -= 1) {
    const node = (entries[index] as { node: EngineRecordSource }).node;
    const usage = engineRecordOf(node)?.usage;
    if (!isObject(usage) || typeof usage.modelId !== 'string') continue;
    const record = readCalibration(usage.calibration);
    if (record !== null) samples.push({ messageId: node.id, modelId: usage.modelId, record });
  }
  return samples;
}

/**
 * The factor for a call to `modelId` (null: the model is not known, so the most recently
 * sampled one's). A model id names its model across the forms apps record and pass: a provider
 * prefix (`openai:`, `anthropic/`) is ignored, and a dated id (`claude-sonnet-4-20250514`)
 * matches its family's (`claude-sonnet-4`).
 */
export function factorFor(
  models: readonly CalibrationModel[],
  modelId: string | null,
): CalibrationInUse {
  const found =
    modelId === null
      ? models[0]
      : (models.find((model) => model.modelId === modelId) ??
        models.find((model) => sameModel(model.modelId, modelId)));
  return found === undefined
    ? { modelId: null, factor: 1, samples: 0 }
    : { modelId: found.modelId, factor: found.factor, samples: found.samples };
}

function bareModelId(modelId: string): string {
  const cut = Math.max(modelId.lastIndexOf(':'), modelId.lastIndexOf('/'));
  return modelId.slice(cut + 1).toLowerCase();
}

function sameModel(recorded: string, asked: string): boolean {
  const left = bareModelId(recorded);
  const right = bareModelId(asked);
  return left === right || left.startsWith(`${right}-`) || right.startsWith(`${left}-`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isRatio(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= MINIMUM_RATIO &&
    value <= MAXIMUM_RATIO
  );
}
