export type { JsonObject, JsonValue } from './json';

export { CtxGraphError, type CtxGraphErrorOptions } from './errors/ctxgraph-error';
export {
  BranchExistsError,
  BranchNotFoundError,
  ChatNotFoundError,
  CheckpointExistsError,
  CheckpointNotFoundError,
  ConflictError,
  EngineError,
  HeadConflictError,
  MessageNotFoundError,
  NotFoundError,
  OwnershipError,
  RenderError,
  SchemaVersionError,
  StoreError,
  UnsupportedSpecificationError,
  ValidationError,
  type ValidationErrorOptions,
  type ValidationIssue,
} from './errors/errors';

export type { ContextFragment, FragmentCodec, FragmentData, FragmentType } from './fragment/context-fragment';
export { isFragment, isFragmentObject, isLazyFragment, isMessageFragment } from './fragment/guards';
export { fragment } from './fragment/fragment';
export { LAZY_ID, lastAssistantMessage, type LazyConfig, type LazyFragment } from './fragment/lazy';
export {
  alias,
  analogy,
  clarification,
  correction,
  example,
  explain,
  glossary,
  guardrail,
  hint,
  identity,
  persona,
  policy,
  preference,
  principle,
  quirk,
  role,
  styleGuide,
  term,
  workflow,
  type AliasData,
  type AnalogyData,
  type ClarificationData,
  type CorrectionData,
  type ExampleData,
  type ExplainData,
  type GlossaryData,
  type GuardrailData,
  type IdentityData,
  type PersonaData,
  type PolicyData,
  type PreferenceData,
  type PrincipleData,
  type QuirkData,
  type StyleGuideData,
  type TermData,
  type WorkflowData,
} from './fragment/builders';

export type { ContextRenderer } from './renderer/context-renderer';
export {
  DEFAULT_MAX_DEPTH,
  walkFragments,
  type RenderGroup,
  type RenderNode,
  type RenderScalar,
  type WalkOptions,
} from './renderer/render-tree';
export { TreeRenderer, type TreeRendererOptions } from './renderer/tree-renderer';

export type {
  ChainPage,
  ChatPointerInput,
  CommitInput,
  CommitMessage,
  CommitResult,
  ContextStore,
  ContextStoreCapabilities,
  CreateBranchInput,
  CreateCheckpointInput,
  GetChainInput,
  GetHeadInput,
  GetMessageInput,
  HeadState,
  ListChatsInput,
  OpenChatInput,
  OpenChatResult,
  UpdateChatInput,
} from './store/context-store';
export type {
  BranchRecord,
  ChatGraph,
  ChatRecord,
  CheckpointRecord,
  MessageNodeRecord,
  Page,
  StoredMessage,
} from './store/records';
export {
  assertChainLimit,
  assertIdentifier,
  assertJsonObject,
  CHAT_PAGE_SIZE,
  chatCursor,
  MAX_IDENTIFIER_LENGTH,
  mergeMetadata,
  prepareChatList,
  prepareCommit,
  toJsonText,
  type ChatListQuery,
  type PreparedCommitMessage,
} from './store/store-input';

/** The contract version this package defines for stores and renderers. */
export const SPECIFICATION_VERSION: 'v1' = 'v1';
