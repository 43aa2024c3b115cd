export {
  type ChatUpdate,
  type CheckpointOptions,
  ContextEngine,
  type ContextEngineOptions,
  type ModelResolveResult,
  type ResolveOptions,
  type ResolveResult,
  type SaveResult,
} from './context-engine';
export type { InspectEstimate, InspectNode, InspectOptions, InspectSnapshot } from './inspect';
export { DEFAULT_MODEL_PRICES, type ModelPrices } from './model-prices';
