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
} from './context-engine';
export type { InspectEstimate, InspectNode, InspectOptions, InspectSnapshot } from './inspect';
export { DEFAULT_MODEL_PRICES, type ModelPrices } from './model-prices';
