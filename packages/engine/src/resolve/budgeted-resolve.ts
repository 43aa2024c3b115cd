import {
  BudgetExceededError,
  type BudgetShortfall,
  type ContextFragment,
  type ContextRenderer,
  type HeadState,
} from '@ctxgraph/fragments-core';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import type { BudgetReport } from '../budget/budget-report';
import { TokenCounter } from '../budget/token-counter';
import { toMarkedModelMessages, toUnmarkedModelMessages } from '../cache/cache-markers';
import { type CacheUnit, predictCache } from '../cache/cache-prediction';
import type { CacheProviderOptions } from '../cache/cache-profiles';
import {
  anthropicCacheProfile,
  type CacheProfile,
  checkCacheRules,
  noCacheProfile,
  selectCacheProfile,
} from '../cache/cache-profiles';
import { registerPrediction } from '../cache/cache-reconcile';
import { segmentHash } from '../cache/segment-hash';
import {
  type AutoCompaction,
  type CheckedAutoCompact,
  compactForBudget,
  wantsCompaction,
} from '../compaction/auto-compact';
import { compactBranch } from '../compaction/compact';
import { shownMessageCount, visibleConversation } from '../compaction/compacted-view';
import { sendableMessages } from '../compaction/provider-parts';
import { conversation, pendingMessages } from '../conversation/conversation';
import { appliedCompaction } from '../session/chain-reads';
import type { ChatSession } from '../session/chat-session';
import {
  type CalibrationInUse,
  type CalibrationModel,
  calibrationOnPath,
  factorFor,
  registerCalibration,
} from '../usage/input-calibration';
import {
  type BudgetMemory,
  type BudgetOptions,
  type CheckedBudget,
  type FitResult,
  fitToBudget,
} from './fit-to-budget';
import { foldSystemMessages } from './fold-system-messages';

/** Options of {@link ContextEngine.resolve}. */
export interface ResolveOptions {
  /** How to render the context fragments; defaults to the engine's renderer. */
  renderer?: ContextRenderer;
  /**
   * `'ui'`: `messages` are AI SDK `UIMessage`s (the default). `'model'`: `messages` are model
   * messages, ready for `generateText({ system, messages })`.
   * @default 'ui'
   */
  format?: 'ui' | 'model';
  /**
   * Fit the system prompt and the history to a token budget (see `BudgetOptions`); the stored
   * graph never changes. Without it, nothing is left out and nothing is counted.
   */
  budget?: BudgetOptions;
}

/** What {@link ContextEngine.resolve} returns. */
export interface ResolveResult {
  /** The context fragments, rendered. */
  systemPrompt: string;
  /** The branch's saved messages, oldest first, then the pending ones, validated. */
  messages: UIMessage[];
  /** With `budget`: what was counted, kept and left out, the cache plan and prefix reuse. */
  budget?: BudgetReport;
  /** With `budget` and the engine's `autoCompact`, when the input passed the threshold. */
  compaction?: AutoCompaction;
  /**
   * With `budget`, when the cache profile needs a call-level option (OpenAI's `promptCacheKey`):
   * pass it as `streamText({ providerOptions })`. UI messages carry no breakpoint marks; use
   * `format: 'model'` for those.
   */
  providerOptions?: CacheProviderOptions;
}

/** What {@link ContextEngine.resolve} returns with `format: 'model'`. */
export interface ModelResolveResult {
  /** The context fragments, rendered. */
  systemPrompt: string;
  /**
   * The same conversation as model messages (with `budget`, cache breakpoints marked), without
   * system-role messages: those are folded into `system`.
   */
  messages: ModelMessage[];
  /**
   * The system message for `generateText({ system, messages })`: the rendered context, then the
   * history's system-role messages in order (blank-line separated), so no system message stays
   * in `messages` (AI SDK 7 refuses them there). With `budget`, it carries the system prompt's
   * cache breakpoint.
   */
  system: SystemModelMessage;
  /** With `budget`: what was counted, kept and left out, the cache plan and prefix reuse. */
  budget?: BudgetReport;
  /** With `budget` and the engine's `autoCompact`, when the input passed the threshold. */
  compaction?: AutoCompaction;
  /**
   * With `budget`, when the cache profile needs a call-level option (OpenAI's `promptCacheKey`,
   * stable per chat and branch): pass it as `generateText({ providerOptions })`.
   */
  providerOptions?: CacheProviderOptions;
}

/** One `resolve()` call, as the engine took it. */
export interface ResolveCall {
  /** Undefined for a resolve without a budget. */
  readonly budget: CheckedBudget | undefined;
  readonly renderer: ContextRenderer;
  readonly fragments: readonly ContextFragment[];
  readonly ticket: number;
  readonly format: 'ui' | 'model' | undefined;
}

/**
 * Resolves with or without a budget. Keeps what budgets need between calls: the token counter's
 * cache and, per branch, the last budgeted input's segment hashes (for the prefix report only:
 * the plan itself never depends on them).
 */
export class BudgetPlanner {
  readonly #counter = new TokenCounter();
  readonly #memory = new Map<string, BudgetMemory>();
  readonly #autoCompact: CheckedAutoCompact | undefined;

  constructor(autoCompact: CheckedAutoCompact | undefined) {
    this.#autoCompact = autoCompact;
  }

  /**
   * The calibration state on the shown path (the newest reply counted with the engine's
   * tokenizer) and the factor for the budget's model: read from the stored records alone, so a
   * new engine plans as a warm one does. With `calibration: false`, the factor is 1.
   */
  #calibration(
    session: ChatSession,
    budget: CheckedBudget,
  ): { models: readonly CalibrationModel[]; inUse: CalibrationInUse } {
    const { tokenizer } = session.settings;
    const { chain } = session.view;
    const from = (appliedCompaction(chain)?.boundaryPosition ?? -1) + 1;
    const models = calibrationOnPath(chain.entries, from, tokenizer.id);
    const inUse = session.settings.calibration
      ? factorFor(models, budget.model?.modelId ?? null)
      : { modelId: null, factor: 1, samples: 0 };
    return { models, inUse };
  }

  /**
   * `resolve()`: the system prompt and the conversation; with a budget, fitted to it (and, with
   * `autoCompact`, compacted first when it would leave history out). `opened` is the head state
   * this call's `open()` read, if any.
   */
  async resolve(
    session: ChatSession,
    call: ResolveCall,
    opened: HeadState | undefined,
  ): Promise<ResolveResult | ModelResolveResult> {
    if (call.budget === undefined) {
      const systemPrompt = call.renderer.render(call.fragments);
      const messages = await conversation(session, call.ticket, opened);
      if (call.format === 'model') {
        const system: SystemModelMessage = { role: 'system', content: systemPrompt };
        // No plan, so no cache marks: not even those the messages carried.
        return {
          systemPrompt,
          ...foldSystemMessages(system, await toUnmarkedModelMessages(messages)),
        };
      }
      return { systemPrompt, messages };
    }
    const compaction = await this.#compactFirst(session, call, call.budget, opened);
    // A compaction that ran may have moved the head: then the state `openChat` read is stale.
    const result = await this.#resolveWithin(
      session,
      call,
      call.budget,
      compaction === undefined ? opened : undefined,
    );
    return compaction === undefined ? result : { ...result, compaction };
  }

  /** The plan `resolve({ budget })` would make now, remembering nothing (`inspect()`, auto-compaction). */
  planDryRun(
    session: ChatSession,
    call: Omit<ResolveCall, 'ticket' | 'format' | 'budget'> & { readonly budget: CheckedBudget },
    pending: readonly UIMessage[],
  ): BudgetReport | { exceeded: BudgetShortfall } {
    const visible = visibleConversation(session.view.chain);
    const history = visible.messages;
    try {
      const previous = this.#memory.get(session.view.branch) ?? null;
      const { inUse } = this.#calibration(session, call.budget);
      const fitted = fitToBudget({
        calibration: inUse,
        budget: call.budget,
        tokenizer: session.settings.tokenizer,
        counter: this.#counter,
        renderer: call.renderer,
        fragments: call.fragments,
        messages: sendableMessages([...history, ...pending], visible.compaction),
        pendingFrom: history.length,
        compactionMessageId: visible.compaction?.entry.message?.id,
        previous,
      });
      return withCachePrediction(fitted, call.budget, previous?.cache ?? null).report;
    } catch (error) {
      if (BudgetExceededError.isInstance(error)) return { exceeded: error.shortfall };
      throw error;
    }
  }

  /**
   * With `autoCompact`: plans without remembering anything; when the plan would leave history
   * out or the input passes the threshold, compacts first. Undefined when it did not try.
   */
  async #compactFirst(
    session: ChatSession,
    call: ResolveCall,
    budget: CheckedBudget,
    opened: HeadState | undefined,
  ): Promise<AutoCompaction | undefined> {
    const options = this.#autoCompact;
    if (options === undefined) return undefined;
    const pending = await pendingMessages(session, call.ticket, opened);
    const { renderer, fragments } = call;
    const plan = this.planDryRun(session, { budget, renderer, fragments }, pending);
    if ('exceeded' in plan || !wantsCompaction(plan, options.threshold)) return undefined;
    return compactForBudget(() =>
      compactBranch(session, { summarize: options.summarize, keep: options.keep }),
    );
  }

  /** Plans from this call's input, applies, and remembers what the next report compares with. */
  async #resolveWithin(
    session: ChatSession,
    call: ResolveCall,
    budget: CheckedBudget,
    opened: HeadState | undefined,
  ): Promise<ResolveResult | ModelResolveResult> {
    const messages = await conversation(session, call.ticket, opened);
    const branch = session.view.branch;
    const previous = this.#memory.get(branch) ?? null;
    const { models, inUse } = this.#calibration(session, budget);
    const fitted = fitToBudget({
      calibration: inUse,
      budget,
      tokenizer: session.settings.tokenizer,
      counter: this.#counter,
      renderer: call.renderer,
      fragments: call.fragments,
      messages,
      pendingFrom: shownMessageCount(session.view.chain),
      compactionMessageId: appliedCompaction(session.view.chain)?.entry.message?.id,
      previous,
    });
    const { report, memory, profile } = withCachePrediction(
      fitted,
      budget,
      previous?.cache ?? null,
    );
    this.#memory.set(branch, memory);
    // The reply's `withUsage(…, { cache })` records this call's count against the reported input.
    registerCalibration(report.cache, {
      tokenizer: report.tokenizer,
      counted: report.totalTokens,
      factor: inUse.factor,
      models,
    });
    const { systemPrompt } = fitted;
    if (call.format !== 'model') {
      // UI messages carry no marks; a call-level option (a cache key) still applies.
      const { providerOptions } = profile.mark({
        model: budget.model ?? null,
        chatId: session.chatId,
        branch,
        system: { role: 'system', content: systemPrompt },
        messages: [],
        markSystem: false,
        markMessages: [],
      });
      const result: ResolveResult = { systemPrompt, messages: fitted.messages, budget: report };
      if (providerOptions !== undefined) result.providerOptions = providerOptions;
      return result;
    }
    const marked = await toMarkedModelMessages(systemPrompt, fitted.messages, report.breakpoints, {
      profile,
      model: budget.model ?? null,
      chatId: session.chatId,
      branch,
    });
    const result: ModelResolveResult = {
      systemPrompt,
      ...foldSystemMessages(marked.system, marked.messages),
      budget: report,
    };
    if (marked.providerOptions !== undefined) result.providerOptions = marked.providerOptions;
    return result;
  }
}

/**
 * The cache profile a budget uses: its own, none with `cacheMarkers: 'none'`, the one matching
 * its model, else Anthropic's (the marks before profiles existed).
 */
function profileFor(budget: CheckedBudget): CacheProfile {
  if (budget.cacheMarkers === 'none') return noCacheProfile();
  if (budget.cacheProfile !== undefined) return budget.cacheProfile;
  if (budget.model !== undefined) return selectCacheProfile(budget.model);
  return defaultProfile;
}

const defaultProfile = anthropicCacheProfile();

/**
 * Adds the cache prediction to a fitted plan: the input as cache units (the system prompt, then
 * each message), the marks the profile places, and the memory the next prediction starts from.
 */
function withCachePrediction(
  fitted: FitResult,
  budget: CheckedBudget,
  previous: Parameters<typeof predictCache>[0]['memory'],
): { report: BudgetReport; memory: BudgetMemory; profile: CacheProfile } {
  const profile = profileFor(budget);
  const modelId = budget.model?.modelId ?? null;
  const rules = checkCacheRules(profile.id, profile.rules(modelId ?? ''));
  const { report } = fitted;
  const units: CacheUnit[] = [
    {
      kind: 'system',
      id: 'system',
      name: 'system',
      tokens: report.systemPromptTokens,
      hash: segmentHash(fitted.systemPrompt),
    },
  ];
  for (const segment of fitted.memory.segments) {
    if (segment.kind !== 'message') continue;
    units.push({
      kind: 'message',
      id: segment.id,
      name: segment.name,
      tokens: segment.tokens,
      hash: segment.hash,
    });
  }
  const position = new Map<string, number>();
  units.forEach((unit, index) => {
    if (unit.kind === 'message') position.set(unit.id, index);
  });
  let marks: number[] = [];
  for (const breakpoint of report.breakpoints) {
    const index = breakpoint.kind === 'system' ? 0 : position.get(breakpoint.id);
    if (index !== undefined && (index > 0 || fitted.systemPrompt !== '')) marks.push(index);
  }
  marks = marks.slice(Math.max(0, marks.length - rules.maxBreakpoints));
  const predicted = predictCache({
    profile: profile.id,
    modelId,
    rules,
    units,
    marks,
    inputTokens: report.totalTokens,
    prefix: report.prefix,
    memory: previous,
    now: Date.now(),
  });
  registerPrediction(predicted.prediction, units);
  return {
    report: { ...report, cache: predicted.prediction },
    memory: { ...fitted.memory, cache: predicted.memory },
    profile,
  };
}
