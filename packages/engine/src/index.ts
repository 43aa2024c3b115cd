export type {
  CheckpointOptions,
  DeleteBranchOptions,
  EnginePruneResult,
  PruneOptions,
  SwitchBranchOptions,
} from './branches/branch-operations';
export type {
  BranchComparisonReport,
  BranchSideReport,
  CompareBranchesOptions,
} from './branches/compare-branches';
export {
  type PruneUserChatsOptions,
  type PruneUserChatsResult,
  pruneUserChats,
} from './branches/retention';
export type { SearchOptions } from './branches/search';
export type {
  BudgetCalibration,
  BudgetReport,
  BudgetReportFragment,
  BudgetReportMessage,
} from './budget/budget-report';
export {
  estimateNextCall,
  type NextCallEstimate,
  type NextCallOptions,
} from './budget/next-call';
export type { LeftOutItem, LeftOutRule } from './budget/plan-budget';
export type {
  CacheBreak,
  CacheBreakCause,
  CachePrediction,
} from './cache/cache-prediction';
export type { CacheBreakpoint } from './cache/cache-profile';
export {
  type AnthropicCacheProfileOptions,
  anthropicCacheProfile,
  anthropicMinCacheableTokens,
  BUILT_IN_CACHE_PROFILES,
  bedrockCacheProfile,
  type CacheMarkInput,
  type CacheMarkOutput,
  type CacheModel,
  type CacheProfile,
  type CacheProviderOptions,
  type CacheRules,
  deepSeekCacheProfile,
  googleCacheProfile,
  noCacheProfile,
  type OpenAICacheProfileOptions,
  openAICacheProfile,
  openRouterCacheProfile,
  promptCacheKey,
  selectCacheProfile,
} from './cache/cache-profiles';
export type {
  CacheCallRecord,
  CacheCallStatus,
  CacheMiss,
  CacheStepRecord,
  CacheTotals,
} from './cache/cache-reconcile';
export type { PrefixReport } from './cache/prefix-report';
export {
  DEFAULT_BRANCH_SUMMARY_INSTRUCTION,
  DEFAULT_COMPACTION_INSTRUCTION,
  type SummarizerOptions,
  summarizer,
} from './compaction/ai-summarizer';
export type { AutoCompaction, AutoCompactOptions } from './compaction/auto-compact';
export type {
  CompactionResult,
  CompactKeep,
  CompactOptions,
} from './compaction/compact';
export type { CompactionCostDecision } from './compaction/compaction-cost';
export type { CompactedDropReport } from './compaction/drop-originals';
export type { SummarizeContext, Summarizer } from './compaction/summarizer';
export { ContextEngine } from './context-engine';
export type { ContextEngineOptions, SaveResult, UsageOptions } from './context-engine-options';
export type {
  InspectCalibration,
  InspectCalibrationSample,
  InspectCompaction,
  InspectEstimate,
  InspectNextCall,
  InspectNode,
  InspectOptions,
  InspectSnapshot,
} from './inspect';
export type {
  ContinueFromOptions,
  ContinueFromResult,
  LocateResult,
  MessageVersion,
  PathVersions,
} from './messages/message-graph';
export { DEFAULT_MODEL_PRICES, type ModelPrice, type ModelPrices } from './model-prices';
export type { ModelResolveResult, ResolveOptions, ResolveResult } from './resolve/budgeted-resolve';
export type { BudgetOptions } from './resolve/fit-to-budget';
export type { ChatUpdate } from './session/chat-session';
export type { SaveOptions } from './session/write-messages';
export type { CalibrationModel, InputCalibrationRecord } from './usage/input-calibration';
export {
  type MessageUsage,
  type OverflowRetry,
  type ReplyOutcome,
  type StepUsage,
  type UsageInput,
  withUsage,
} from './usage/message-usage';
export { type UsageTotals, usageOf } from './usage/usage-totals';
