export { CtxGraphError, type CtxGraphErrorOptions } from './errors/ctxgraph-error';
export {
  BranchExistsError,
  BranchNotFoundError,
  BudgetExceededError,
  type BudgetItem,
  type BudgetShortfall,
  ChatNotFoundError,
  CheckpointExistsError,
  CheckpointNotFoundError,
  ConflictError,
  ContextConflictError,
  EngineError,
  HeadConflictError,
  MessageIdConflictError,
  MessageNotFoundError,
  NotFoundError,
  OwnershipError,
  RenderError,
  SchemaVersionError,
  StoreError,
  UnsupportedCapabilityError,
  UnsupportedSpecificationError,
  ValidationError,
  type ValidationErrorOptions,
  type ValidationIssue,
} from './errors/errors';
export {
  LiveReplyConflictError,
  LiveReplyLostError,
  LiveReplyOffsetError,
} from './errors/live-reply-errors';
export {
  type AliasData,
  type AnalogyData,
  alias,
  analogy,
  type ClarificationData,
  type CorrectionData,
  clarification,
  correction,
  type ExampleData,
  type ExplainData,
  example,
  explain,
  type GlossaryData,
  type GuardrailData,
  glossary,
  guardrail,
  hint,
  type IdentityData,
  identity,
  type PersonaData,
  type PolicyData,
  type PreferenceData,
  type PrincipleData,
  persona,
  policy,
  preference,
  principle,
  type QuirkData,
  quirk,
  role,
  type StyleGuideData,
  styleGuide,
  type TermData,
  term,
  type WorkflowData,
  workflow,
} from './fragment/builders';

export type {
  ContextFragment,
  FragmentCodec,
  FragmentData,
  FragmentType,
} from './fragment/context-fragment';
export { fragment } from './fragment/fragment';
export { type FragmentBudget, withBudget } from './fragment/fragment-budget';
export {
  builtinFragmentDescriptors,
  type FragmentFieldDescriptor,
  type FragmentFieldKind,
  type FragmentTypeDescriptor,
} from './fragment/fragment-types';
export { isFragment, isFragmentObject, isLazyFragment, isMessageFragment } from './fragment/guards';
export { LAZY_ID, type LazyConfig, type LazyFragment, lastAssistantMessage } from './fragment/lazy';
export type { JsonObject, JsonValue } from './json';
export type { ContextRenderer } from './renderer/context-renderer';
export {
  DEFAULT_MAX_DEPTH,
  type RenderGroup,
  type RenderNode,
  type RenderScalar,
  type WalkOptions,
  walkFragments,
} from './renderer/render-tree';
export { TreeRenderer, type TreeRendererOptions } from './renderer/tree-renderer';
export {
  assertIdentifier,
  assertJsonObject,
  CHAT_PAGE_SIZE,
  describeValue,
  joinPath,
  jsonIssues,
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  MAX_JSON_DEPTH,
  prefixPath,
  stringProblem,
  utf8Length,
} from './rules';
export { nextBranchName } from './store/branch-names';
export {
  type ContextStoreCapabilities,
  OPTIONAL_CAPABILITIES,
  OPTIONAL_CAPABILITY_METHODS,
  type OptionalCapability,
  type OptionalCapabilityMethods,
  type OptionalStoreMethod,
  REQUIRED_STORE_METHODS,
  type RequiredStoreMethod,
} from './store/capabilities';
export {
  type BranchSummaryRecord,
  type CompactionMessageInput,
  type CompactionRecord,
  CTXGRAPH_METADATA_KEY,
  compactionMessage,
  type DroppedRecord,
  droppedMessage,
  type EngineRecordSource,
  engineRecordOf,
  type ProviderCompactionRecord,
  readBranchSummary,
  readCompaction,
  readDropped,
  splitEngineRecord,
  withoutEngineMetadata,
} from './store/compaction-node';
export type {
  AppendInput,
  AppendResult,
  ChainPage,
  ChatPointerInput,
  CommitFork,
  CommitInput,
  CommitMessage,
  CommitResult,
  ContextLaneRecord,
  ContextStore,
  CreateBranchInput,
  CreateCheckpointInput,
  FindMessageNodesInput,
  ForkBranchInput,
  GetChainInput,
  GetHeadInput,
  GetMessageInput,
  HeadState,
  ListChatsInput,
  OpenChatInput,
  OpenChatResult,
  RenameBranchInput,
  SaveContextInput,
  UpdateChatInput,
} from './store/context-store';
export {
  type AppendReplyChunksInput,
  type AppendReplyChunksResult,
  type ChatChange,
  type ChatChangeListener,
  type CommitEndReply,
  type CommitStartReply,
  ENDED_REPLY_GRACE,
  type EndReplyInput,
  LIVE_REPLY_LIMITS,
  type LiveChatState,
  type LiveReplyMethods,
  type LiveReplyRead,
  type LiveReplyRecord,
  type ReadReplyInput,
  type StartReplyInput,
  type StopReplyInput,
  type TakeOverReplyInput,
} from './store/live-replies';
export type {
  BranchRecord,
  ChatGraph,
  ChatRecord,
  CheckpointRecord,
  EngineRecord,
  MessageNodeRecord,
  Page,
  StoredMessage,
} from './store/records';
export type { PruneInput, PruneResult } from './store/retention';
export type { SearchHit, SearchMessagesInput } from './store/search';
export {
  type CalibrationSample,
  createEstimatorTokenizer,
  type EstimatorTokenizer,
  type EstimatorTokenizerOptions,
} from './tokenizer/estimator-tokenizer';
export { isTokenizer, type Tokenizer } from './tokenizer/tokenizer';

/** The specification version of the contracts this package defines for stores and renderers. */
export const SPECIFICATION_VERSION: 'v1' = 'v1';
