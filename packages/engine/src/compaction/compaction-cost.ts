// The cost policy's model: whether compacting the branch after this call costs less, over the
// next calls, than going on without compacting. Pure arithmetic over the budget plan, the cache
// profile's rules and the model's prices; no clock, no store.
import type { BudgetReport } from '../budget/budget-report';
import type { CacheRules } from '../cache/cache-profile';
import type { ResolvedModelPrice } from '../model-prices';
import type { CompactKeep } from './compact';

/**
 * What the cost policy weighed before a call, and its verdict (`result.compaction.decision`).
 * Costs are USD over the same next calls, summary calls included.
 */
export interface CompactionCostDecision {
  /** True when compacting after this call is predicted to cost less than waiting. */
  readonly compact: boolean;
  /** The model priced (the budget's model). */
  readonly modelId: string;
  /** The next calls counted (`autoCompact.horizon`). */
  readonly horizon: number;
  /** Tokens each next call is assumed to add (`autoCompact.growthTokens`, else the mean turn). */
  readonly growthTokens: number;
  /** The summary's assumed length in output tokens (`autoCompact.summaryTokens`, else the last one's). */
  readonly summaryTokens: number;
  /** This call's input tokens (the whole history, as the branch shows it). */
  readonly inputTokens: number;
  /** Tokens the summary would cover (everything before the turns `keep` keeps). */
  readonly spanTokens: number;
  /** Tokens of the turns kept after the summary (the pending ones included). */
  readonly keptTokens: number;
  /** USD over the horizon when the branch is compacted after this call (its summary call included). */
  readonly costIfCompacted: number;
  /**
   * USD over the horizon when it is not (with the compaction the budget forces once the history
   * would no longer fit, when that falls within the horizon).
   */
  readonly costIfWaiting: number;
}

/** The cost policy's settings, checked. */
export interface CostModelSettings {
  readonly horizon: number;
  readonly growthTokens: number | undefined;
  readonly summaryTokens: number | undefined;
  readonly keep: CompactKeep;
}

/** Everything {@link decideCompaction} weighs. */
export interface CostModelInput {
  readonly report: BudgetReport;
  readonly rules: CacheRules;
  readonly price: ResolvedModelPrice;
  readonly modelId: string;
  readonly settings: CostModelSettings;
  /** The summary tokens of the compaction the branch shows, if any (the default length). */
  readonly previousSummaryTokens: number | undefined;
  /** The id of the message that shows that compaction's summary (the plan's first), if any. */
  readonly summaryMessageId: string | undefined;
}

/** The summary length assumed when neither the option nor an earlier compaction gives one. */
const DEFAULT_SUMMARY_TOKENS = 1000;
/** What the engine frames a summary with ("Summary of the conversation so far:"), in tokens. */
const SUMMARY_FRAMING_TOKENS = 12;

/**
 * The model (stated so it can be checked and tuned):
 *
 * - Both paths send this call as it is; the compaction, when chosen, runs after it (in the
 *   background), so the paths differ from the next call on.
 * - Each next call adds `growthTokens` (a question and its reply); each call's whole input is
 *   cached after it, so the next call reads the previous input and writes (or sends uncached,
 *   where the provider does not bill writes) only what is new, by the profile's rules: nothing
 *   is read below `minCacheableTokens`, a prefix-mode read is rounded down to the prefix step,
 *   `mode: 'none'` reads nothing.
 * - Compacting costs the summary's call (the span as uncached input, the summary as output) and
 *   breaks the cached prefix after the system prompt: the call after it reads at most the
 *   system prompt and writes the rest (summary and kept turns).
 * - Without compacting now, the history grows until the next call would pass
 *   `maxInputTokens`; there the budget would cut, so the policy compacts (as `threshold` does):
 *   that compaction is counted when it falls within the horizon.
 * - Past the horizon, each path owes the share of its next compaction (at the limit) that its
 *   growth since its last one used up: a path is not cheaper for pushing a compaction just past
 *   the horizon's end.
 * - Calls come within the cache's time to live (a chat in use).
 *
 * Null when there is nothing to compact (fewer turns than `keep`).
 */
export function decideCompaction(input: CostModelInput): CompactionCostDecision | null {
  const { report, rules, price, settings } = input;
  const split = splitAtKeep(report, settings.keep, input.summaryMessageId);
  if (split === null) return null;
  const system = report.systemPromptTokens;
  const inputTokens = report.totalTokens + report.droppedHistory.tokens;
  const spanTokens = split.span + report.droppedHistory.tokens;
  const keptTokens = split.kept;
  const growth = settings.growthTokens ?? split.meanTurn;
  const summaryTokens =
    settings.summaryTokens ?? input.previousSummaryTokens ?? DEFAULT_SUMMARY_TOKENS;
  // The input right after a compaction: system prompt, summary, kept turns.
  const compacted = system + summaryTokens + SUMMARY_FRAMING_TOKENS + keptTokens;
  const limit = report.maxInputTokens;
  const perMillion = (tokens: number, usd: number): number => (tokens * usd) / 1_000_000;
  const outputPrice = price.output ?? price.input;
  const summaryCall = (span: number): number =>
    perMillion(span, price.input) + perMillion(summaryTokens, outputPrice);
  const call = (size: number, cachedPrefix: number): number => {
    let read = 0;
    if (rules.mode !== 'none' && cachedPrefix >= rules.minCacheableTokens) {
      read =
        rules.mode === 'prefix'
          ? rules.minCacheableTokens +
            Math.floor((cachedPrefix - rules.minCacheableTokens) / rules.prefixStep) *
              rules.prefixStep
          : cachedPrefix;
    }
    read = Math.min(read, size);
    const rest = size - read;
    const written =
      rules.mode !== 'none' && rules.reportsWrites && size >= rules.minCacheableTokens ? rest : 0;
    return (
      perMillion(read, price.cacheRead) +
      perMillion(written, price.cacheWrite) +
      perMillion(rest - written, price.input)
    );
  };
  const path = (compactNow: boolean): number => {
    let cost = 0;
    let size = inputTokens;
    let cached = inputTokens;
    if (compactNow) {
      cost += summaryCall(spanTokens);
      size = compacted;
      cached = system;
    }
    for (let step = 1; step <= settings.horizon; step += 1) {
      let next = size + growth;
      let prefix = cached;
      if (next > limit) {
        // The budget would cut here: the policy compacts first, as the threshold policy does.
        cost += summaryCall(next - compacted + summaryTokens);
        next = compacted;
        prefix = system;
      }
      cost += call(next, Math.min(prefix, next));
      size = next;
      cached = next;
    }
    // What the path owes past the horizon: the share of the next compaction its growth since
    // the last one used up (the budget forces one at the limit), so that compacting now is not
    // judged by a horizon that happens to end just before the other path's next compaction.
    const used = Math.min(1, Math.max(0, (size - compacted) / Math.max(1, limit - compacted)));
    return cost + used * summaryCall(limit - compacted + summaryTokens);
  };
  const costIfCompacted = path(true);
  const costIfWaiting = path(false);
  return {
    compact: costIfCompacted < costIfWaiting,
    modelId: input.modelId,
    horizon: settings.horizon,
    growthTokens: growth,
    summaryTokens,
    inputTokens,
    spanTokens,
    keptTokens,
    costIfCompacted,
    costIfWaiting,
  };
}

/**
 * The plan's messages split where `compact()` would cut (the last `keep` turns kept, a turn
 * starting at a user message), and the mean tokens of a turn before the pending one. Null when
 * nothing would be left to summarize. A tool call split from its result moves the real cut
 * earlier; the estimate does not follow it.
 */
function splitAtKeep(
  report: BudgetReport,
  keep: CompactKeep,
  summaryMessageId: string | undefined,
): { span: number; kept: number; meanTurn: number } | null {
  const messages = report.messages;
  const hasSummary = summaryMessageId !== undefined && messages[0]?.id === summaryMessageId;
  let first: number;
  if (typeof keep === 'object' && 'fromMessageId' in keep) {
    first = messages.findIndex((message) => message.id === keep.fromMessageId);
    if (first < 0) return null;
  } else {
    const turns = typeof keep === 'number' ? keep : keep.turns;
    first = messages.length;
    let seen = 0;
    while (seen < turns && first > (hasSummary ? 1 : 0)) {
      first -= 1;
      if (messages[first]?.role === 'user') seen += 1;
    }
    if (seen < turns) return null;
  }
  // Only a summary before the cut: nothing new to summarize.
  if (first === 0 || (first === 1 && hasSummary)) return null;
  let span = 0;
  let kept = 0;
  let saved = 0;
  let turns = 0;
  messages.forEach((message, index) => {
    if (index < first) span += message.tokens;
    else kept += message.tokens;
    if (message.pending || (index === 0 && hasSummary)) return;
    saved += message.tokens;
    if (message.role === 'user') turns += 1;
  });
  return { span, kept, meanTurn: turns === 0 ? 0 : Math.round(saved / turns) };
}
