import {
  BudgetExceededError,
  type ContextFragment,
  type ContextRenderer,
  type Tokenizer,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { BudgetReport, BudgetReportMessage } from '../budget/budget-report';
import { planBudget } from '../budget/plan-budget';
import type { CountedMessage, TokenCounter } from '../budget/token-counter';
import type { CacheMemory } from '../cache/cache-prediction';
import { cacheModelOf } from '../cache/cache-profile';
import { type CacheModel, type CacheProfile, isCacheProfile } from '../cache/cache-profiles';
import { comparePrefix, type Segment } from '../cache/prefix-report';
import type { CalibrationInUse } from '../usage/input-calibration';

/** `resolve({ budget })`: fit the system prompt and the history to a token budget. */
export interface BudgetOptions {
  /** The most input tokens the call may take (system prompt and messages), a positive integer. */
  maxInputTokens: number;
  /**
   * The size of the chunks history is cut in, as a share of the budget: a chunk starts at the
   * first turn after every `releaseRatio × maxInputTokens` tokens of history. When history must
   * go, whole chunks go, so about that much room is freed and the following calls grow on the
   * same prefix (and hit the provider's cache) instead of shifting the window every turn. The
   * boundaries are fixed places in the history, so an engine made per request cuts where a
   * long-lived one does. 0 cuts only what must go.
   *
   * `'write-bound'`, for a provider that charges for cache writes (Anthropic, Bedrock,
   * OpenRouter's Anthropic models): a chunk is the history's room divided by 1.1, so a cut makes
   * the provider write again at most a tenth of the new tokens the chunk lets in (write
   * amplification at most 1.1). The price is context: right after a cut little history is sent,
   * so pair it with `autoCompact` (a summary stands in for what went). Opt-in for that reason.
   * @default 0.3
   */
  releaseRatio?: number | 'write-bound';
  /**
   * With `format: 'model'` and neither `model` nor `cacheProfile`: `'anthropic'` marks the
   * planned cache breakpoints with `providerOptions.anthropic.cacheControl` (other providers
   * ignore it). `'none'` leaves the messages unmarked and predicts no cache reads, whatever the
   * model or profile.
   * @default 'anthropic'
   */
  cacheMarkers?: 'anthropic' | 'none';
  /**
   * The model the call goes to: an AI SDK `LanguageModel` (its `provider` and `modelId` are
   * read), `{ provider, modelId }`, or a model id string: a gateway id
   * (`'anthropic/claude-sonnet-4'`), a provider registry id (`'openai:gpt-4o'`) or a bare id of a
   * known family (`'gpt-4o-mini'`, `'claude-sonnet-4'`, `'gemini-2.5-flash'`, `'deepseek-chat'`). It picks the cache profile (Anthropic, Bedrock, OpenRouter, OpenAI, Google, DeepSeek, else none) and
   * the rules the cache prediction follows. Without it (and without `cacheProfile`), the
   * Anthropic profile marks the messages (`cacheMarkers`).
   */
  model?: CacheModel | string;
  /** A cache profile to use whatever the model (one of the built-in ones, or your own). */
  cacheProfile?: CacheProfile;
}

/**
 * What the engine keeps per chat and branch between budgeted calls: only what the report compares
 * with (the prefix shared with the previous input). What is sent never depends on it, so a warm
 * engine sends what a fresh one would.
 */
export interface BudgetMemory {
  readonly segments: readonly Segment[];
  /** What the cache prediction of the next call starts from (set by the planner). */
  readonly cache?: CacheMemory;
}

/** The checked budget with its defaults. */
export interface CheckedBudget {
  readonly maxInputTokens: number;
  /** Undefined when the caller gave none (the default depends on the cache profile). */
  readonly releaseRatio: number | 'write-bound' | undefined;
  readonly cacheMarkers: 'anthropic' | 'none';
  readonly model: CacheModel | undefined;
  readonly cacheProfile: CacheProfile | undefined;
}

/** `budget.model` as `{ provider, modelId }`, checked. */
function checkModel(method: string, model: unknown): CacheModel | undefined {
  if (model === undefined) return undefined;
  if (typeof model === 'string' && model.trim() !== '') return cacheModelOf(model);
  if (typeof model === 'object' && model !== null) {
    const { provider, modelId } = model as Partial<CacheModel>;
    if (typeof provider === 'string' && typeof modelId === 'string' && modelId !== '')
      return { provider, modelId };
  }
  throw new ValidationError(
    `${method}: budget.model must be an AI SDK model (with provider and modelId), { provider, modelId } or a model id string, received ${model === null ? 'null' : typeof model}.`,
    { issues: [{ path: 'budget.model', message: 'expected a model with provider and modelId' }] },
  );
}

/** Checks `budget` at the boundary; throws a `ValidationError` that says what to pass. */
export function checkBudget(method: string, budget: unknown): CheckedBudget {
  if (typeof budget !== 'object' || budget === null || Array.isArray(budget)) {
    throw new ValidationError(
      `${method}: budget must be an object such as { maxInputTokens: 8000 }, received ${budget === null ? 'null' : Array.isArray(budget) ? 'an array' : typeof budget}.`,
      { issues: [{ path: 'budget', message: 'expected an object' }] },
    );
  }
  const { maxInputTokens, releaseRatio, cacheMarkers = 'anthropic' } = budget as BudgetOptions;
  if (
    typeof maxInputTokens !== 'number' ||
    !Number.isSafeInteger(maxInputTokens) ||
    maxInputTokens <= 0
  ) {
    throw new ValidationError(
      `${method}: budget.maxInputTokens must be a positive integer (the most input tokens the call may take), received ${typeof maxInputTokens === 'number' ? String(maxInputTokens) : typeof maxInputTokens}.`,
      { issues: [{ path: 'budget.maxInputTokens', message: 'expected a positive integer' }] },
    );
  }
  if (
    releaseRatio !== undefined &&
    releaseRatio !== 'write-bound' &&
    (typeof releaseRatio !== 'number' || !(releaseRatio >= 0 && releaseRatio <= 0.9))
  ) {
    throw new ValidationError(
      `${method}: budget.releaseRatio must be a number from 0 to 0.9 or 'write-bound', received ${String(releaseRatio)}.`,
      {
        issues: [
          {
            path: 'budget.releaseRatio',
            message: "expected a number from 0 to 0.9 or 'write-bound'",
          },
        ],
      },
    );
  }
  if (cacheMarkers !== 'anthropic' && cacheMarkers !== 'none') {
    throw new ValidationError(
      `${method}: budget.cacheMarkers must be 'anthropic' or 'none', received ${JSON.stringify(cacheMarkers)}.`,
      { issues: [{ path: 'budget.cacheMarkers', message: "expected 'anthropic' or 'none'" }] },
    );
  }
  const cacheProfile = (budget as BudgetOptions).cacheProfile;
  if (cacheProfile !== undefined && !isCacheProfile(cacheProfile)) {
    throw new ValidationError(
      `${method}: budget.cacheProfile must be a CacheProfile (an object with id, matches, rules and mark), such as anthropicCacheProfile().`,
      { issues: [{ path: 'budget.cacheProfile', message: 'expected a CacheProfile' }] },
    );
  }
  const model = checkModel(method, (budget as BudgetOptions).model);
  return { maxInputTokens, releaseRatio, cacheMarkers, model, cacheProfile };
}

/**
 * Runs `plan`; a `BudgetExceededError` from a calibrated plan (whose room was the budget divided
 * by the factor) is told in the provider's tokens: the budget asked for, each required part's
 * count times the factor, and the tokenizer named with the factor (`'estimate:4.00×1.3'`).
 */
function calibratedShortfall<T>(factor: number, maxInputTokens: number, plan: () => T): T {
  try {
    return plan();
  } catch (error) {
    if (factor === 1 || !BudgetExceededError.isInstance(error)) throw error;
    const { shortfall } = error;
    throw new BudgetExceededError({
      maxInputTokens,
      requiredTokens: Math.round(shortfall.requiredTokens * factor),
      required: shortfall.required.map((item) => ({
        ...item,
        tokens: Math.round(item.tokens * factor),
      })),
      tokenizer: `${shortfall.tokenizer}×${factor}`,
    });
  }
}

/** Everything {@link fitToBudget} needs. */
export interface FitInput {
  readonly budget: CheckedBudget;
  readonly tokenizer: Tokenizer;
  readonly counter: TokenCounter;
  readonly renderer: ContextRenderer;
  readonly fragments: readonly ContextFragment[];
  /** History then pending messages, oldest first. */
  readonly messages: readonly UIMessage[];
  /** Index of the first pending message in `messages`. */
  readonly pendingFrom: number;
  /**
   * The message id of the compaction the history is shown through (its summary, or the
   * provider-compaction reply), if any: when it leads `messages`, the planner keeps it while
   * any history is kept.
   */
  readonly compactionMessageId?: string | undefined;
  readonly previous: BudgetMemory | null;
  /** The calibration to plan with (reported ÷ counted for the model); none plans as counted. */
  readonly calibration?: CalibrationInUse;
}

/** What {@link fitToBudget} produces. */
export interface FitResult {
  readonly systemPrompt: string;
  readonly messages: UIMessage[];
  /** The report, without the cache prediction (the planner adds it). */
  readonly report: Omit<BudgetReport, 'cache'>;
  readonly memory: BudgetMemory;
}

/**
 * Counts the segments, plans (pure), renders the kept fragments and keeps the planned messages.
 * The rendered system prompt is counted as a whole; when its wrapping costs more than the planner
 * assumed, it plans again with the measured overhead (at most three times). Every call starts
 * from the same assumption (no wrapping), so the plan depends on this call's input alone.
 */
export function fitToBudget(input: FitInput): FitResult {
  const { tokenizer, counter, renderer, fragments, messages, previous } = input;
  const fragmentCounts = fragments.map((fragment) =>
    counter.fragment(tokenizer, renderer, fragment),
  );
  const planFragments = fragments.map((fragment, index) => ({
    id: fragment.id ?? `#${index}`,
    name: fragment.name,
    tokens: (fragmentCounts[index] as { tokens: number }).tokens,
    priority: fragment.budget?.priority ?? 0,
    required: fragment.budget?.required ?? false,
  }));
  const counts = counter.messages(tokenizer, messages);
  // Counted messages are plan messages (id, role, tokens): no copy per resolve, but for the
  // compaction's message (the cached count stays unflagged).
  const first = counts[0];
  const planMessages =
    first !== undefined &&
    input.compactionMessageId !== undefined &&
    first.id === input.compactionMessageId &&
    input.pendingFrom > 0
      ? [{ ...first, compaction: true }, ...counts.slice(1)]
      : counts;
  const calibration = input.calibration ?? { modelId: null, factor: 1, samples: 0 };
  // The budget is in the provider's tokens; the plan counts in the tokenizer's, so the room it
  // plans with is the budget divided by the factor (the provider reports `factor` tokens for
  // each one counted).
  const room = Math.max(1, Math.floor(input.budget.maxInputTokens / calibration.factor));
  let overheadTokens = 0;
  for (let attempt = 1; ; attempt += 1) {
    const plan = calibratedShortfall(calibration.factor, input.budget.maxInputTokens, () =>
      planBudget({
        maxInputTokens: room,
        chunkBudgetTokens: input.budget.maxInputTokens,
        releaseRatio: input.budget.releaseRatio ?? 0.3,
        overheadTokens,
        fragments: planFragments,
        messages: planMessages,
        pendingFrom: input.pendingFrom,
        tokenizer: tokenizer.id,
      }),
    );
    const keptFragments = fragments.filter((_, index) => plan.keptFragments[index]);
    const systemPrompt = renderer.render(keptFragments);
    const systemPromptTokens = counter.text(tokenizer, systemPrompt);
    let fragmentTokens = 0;
    planFragments.forEach((fragment, index) => {
      if (plan.keptFragments[index]) fragmentTokens += fragment.tokens;
    });
    const measuredOverhead = Math.max(0, systemPromptTokens - fragmentTokens);
    const totalTokens = plan.totalTokens - overheadTokens + measuredOverhead;
    if (totalTokens > room && attempt < 3 && measuredOverhead > overheadTokens) {
      overheadTokens = measuredOverhead;
      continue;
    }
    const segments: Segment[] = [];
    planFragments.forEach((fragment, index) => {
      if (!plan.keptFragments[index]) return;
      segments.push({
        kind: 'fragment',
        id: fragment.id,
        name: fragment.name,
        tokens: fragment.tokens,
        hash: (fragmentCounts[index] as { hash: string }).hash,
      });
    });
    const reportMessages: BudgetReportMessage[] = [];
    const keptIndexes: number[] = plan.keptCompaction ? [0] : [];
    for (let index = plan.firstKeptIndex; index < messages.length; index += 1) {
      keptIndexes.push(index);
    }
    for (const index of keptIndexes) {
      const message = counts[index] as CountedMessage;
      segments.push({
        kind: 'message',
        id: message.id,
        name: message.role,
        tokens: message.tokens,
        hash: message.hash,
      });
      reportMessages.push({
        id: message.id,
        role: message.role,
        tokens: message.tokens,
        pending: index >= input.pendingFrom,
      });
    }
    const prefix = comparePrefix(previous?.segments ?? null, segments, measuredOverhead);
    return {
      systemPrompt,
      messages: plan.keptCompaction
        ? [messages[0] as UIMessage, ...messages.slice(plan.firstKeptIndex)]
        : messages.slice(plan.firstKeptIndex),
      report: {
        maxInputTokens: input.budget.maxInputTokens,
        totalTokens,
        calibration: {
          ...calibration,
          inputTokens: Math.round(totalTokens * calibration.factor),
        },
        tokenizer: tokenizer.id,
        systemPromptTokens,
        fragments: planFragments.map((fragment, index) => ({
          ...fragment,
          kept: plan.keptFragments[index] as boolean,
        })),
        messages: reportMessages,
        leftOut: plan.leftOut,
        droppedHistory: {
          messages: plan.droppedHistoryMessages,
          tokens: plan.droppedHistoryTokens,
        },
        breakpoints: plan.breakpoints,
        prefix,
      },
      memory: { segments },
    };
  }
}
