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
  BudgetOptions,
  BudgetReport,
  BudgetReportFragment,
  BudgetReportMessage,
} from './budget/fit-to-budget';
export type { CacheBreakpoint, LeftOutItem, LeftOutRule } from './budget/plan-budget';
export type { PrefixReport } from './budget/prefix-report';
export {
  type ChatUpdate,
  type CheckpointOptions,
  ContextEngine,
  type ContextEngineOptions,
  type DeleteBranchOptions,
  type ModelResolveResult,
  type ResolveOptions,
  type ResolveResult,
  type SaveResult,
  type UsageOptions,
} from './context-engine';
export type {
  InspectEstimate,
  InspectNextCall,
  InspectNode,
  InspectOptions,
  InspectSnapshot,
} from './inspect';
export { DEFAULT_MODEL_PRICES, type ModelPrice, type ModelPrices } from './model-prices';
export {
  type MessageUsage,
  type UsageInput,
  type UsageTotals,
  usageOf,
  withUsage,
} from './usage/message-usage';
