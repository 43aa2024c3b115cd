// A chat's context use and cost, small enough for a gauge beside the chat (issue #37): what the
// next call would send, the budget's window, what the chat's calls cost so far, and the cache
// prediction when a budget plans the call. Read from the engine's `inspect()`.
import { type BudgetOptions, type ContextEngine, estimateNextCall } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { leafNodeOf } from './chat-reads';

/** A chat's context use and cost, as `cycle.contextGauge()` answers it (plain JSON). */
export interface ContextGauge {
  /**
   * Tokens the next call would send from the path read: the rendered system context plus the
   * messages (the budget's plan of them when a budget is set and they fit), counted with the
   * engine's tokenizer, before the next question.
   */
  tokens: number;
  /** The budget's window (`maxInputTokens`), or null when no budget is set. */
  maxInputTokens: number | null;
  /** True when a budget is set and its required parts do not fit in its window. */
  exceeded: boolean;
  /** The tokenizer that counted (`'o200k_base'`, `'estimate:4.00'`, …). */
  tokenizer: string;
  /** The chat's recorded usage so far, every branch included. */
  usage: {
    /** Model calls recorded. */
    calls: number;
    inputTokens: number;
    outputTokens: number;
    cacheReadTokens: number;
    /** USD over the calls whose model has a price; null when none has. */
    cost: number | null;
  };
  /**
   * With a budget that fits: what the provider is predicted to read from and write to its cache
   * on the next call (its cache profile's prediction), and that call's input cost in USD when
   * `modelId` (or the budget's `model`) names a priced model, else null. Null without a budget
   * or when it is exceeded.
   */
  nextCall: {
    profile: string;
    cachedTokens: number;
    writtenTokens: number;
    uncachedTokens: number;
    cost: number | null;
  } | null;
}

/** Options of `cycle.contextGauge()`. */
export interface ContextGaugeOptions {
  /** The signed-in user; a chat of another user reads as unknown. */
  userId: string;
  /** The node the path ends at (a version's `leafNodeId`); the chat's newest message when absent. */
  node?: string;
  /** Sets the system context the chat's turns set (`BeginTurnOptions.context`), so it is counted. */
  context?: (engine: ContextEngine) => unknown;
  /**
   * The budget the turns plan with, for the window and the cache prediction.
   * @default the cycle's `budget`
   */
  budget?: BudgetOptions;
  /** The model the next call goes to, to price it (`'openai:gpt-4o'`, `'gpt-4.1-mini'`). */
  modelId?: string;
}

/** The gauge of the path to `options.node` (or the chat's newest node), on the chat's engine. */
export async function contextGaugeOf(
  engine: ContextEngine,
  store: ContextStore,
  options: ContextGaugeOptions,
  budget: BudgetOptions | undefined,
): Promise<ContextGauge> {
  const node = options.node ?? (await leafNodeOf(engine, store, undefined));
  await engine.continueFrom(node, { activate: false });
  // The context is the gauge's own, as a turn's is: a warm engine's is cleared first.
  engine.replaceContext([]);
  await options.context?.(engine);
  const snapshot = await engine.inspect({
    ...(budget === undefined ? {} : { budget }),
    ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
  });
  const plan = snapshot.budget;
  const planned = plan !== null && !('exceeded' in plan) ? plan : null;
  const chat = snapshot.usage.chat;
  // Without a model id the plan's own model prices it (a budget's `model`), when it names one.
  const next = planned === null ? null : (snapshot.nextCall ?? estimateNextCall(planned));
  return {
    tokens: planned?.totalTokens ?? snapshot.estimate.tokens,
    maxInputTokens: budget?.maxInputTokens ?? null,
    exceeded: plan !== null && 'exceeded' in plan,
    tokenizer: snapshot.estimate.tokenizer,
    usage: {
      calls: chat.calls,
      inputTokens: chat.inputTokens,
      outputTokens: chat.outputTokens,
      cacheReadTokens: chat.cacheReadTokens,
      cost: chat.cost,
    },
    nextCall:
      next === null
        ? null
        : {
            profile: next.profile,
            cachedTokens: next.cachedTokens,
            writtenTokens: next.writtenTokens,
            uncachedTokens: next.uncachedTokens,
            cost: next.cost,
          },
  };
}
