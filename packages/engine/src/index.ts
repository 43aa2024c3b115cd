export {
  DEFAULT_BRANCH_SUMMARY_INSTRUCTION,
  DEFAULT_COMPACTION_INSTRUCTION,
  type SummarizerOptions,
  summarizer,
} from './compaction/ai-summarizer';
export type {
  CompactionResult,
  CompactKeep,
  CompactOptions,
} from './compaction/compact';
export type { SummarizeContext, Summarizer } from './compaction/summarizer';
export {
  type ChatUpdate,
  type CheckpointOptions,
  ContextEngine,
  type ContextEngineOptions,
  type ModelResolveResult,
  type ResolveOptions,
  type ResolveResult,
  type SaveResult,
  type SwitchBranchOptions,
} from './context-engine';
export type {
  InspectCompaction,
  InspectEstimate,
  InspectNode,
  InspectOptions,
  InspectSnapshot,
} from './inspect';
export { DEFAULT_MODEL_PRICES, type ModelPrices } from './model-prices';
