// `@ctxgraph/fragments-core/store-kit`: what a ContextStore implementer needs beyond the contract.
// The wrapper (`CheckedContextStore` / `defineContextStore` over a `ContextStoreDriver`) and the
// shared input checks it is built from, for stores that prefer to call them themselves.
export {
  CheckedContextStore,
  defineContextStore,
} from './checked-context-store';
export type {
  Awaitable,
  ContextStoreDriver,
  PreparedAppend,
  PreparedCommit,
  PreparedCreateBranch,
  PreparedCreateCheckpoint,
  PreparedForkBranch,
  PreparedGetChain,
  PreparedOpenChat,
  PreparedSaveContext,
  PreparedUpdateChat,
  StoreCall,
} from './context-store-driver';
export {
  activeBranchAfterPrune,
  type LinkedNode,
  type PreparedPrune,
  preparePrune,
  unreachableNodes,
} from './retention-input';
export { type BranchHead, branchesHolding, type SkeletonNode } from './search-branches';
export {
  compareSearchPositions,
  messageSearchText,
  type PreparedSearch,
  prepareSearch,
  SEARCH_PAGE_SIZE,
  SEARCH_QUERY_LIMITS,
  type SearchMatch,
  type SearchPosition,
  searchScore,
  searchSnippet,
  searchTerms,
  searchTokens,
} from './search-input';
export {
  assertChainLimit,
  assertForkBranchInput,
  assertIdentifier,
  assertInputObject,
  assertJsonObject,
  assertOptionalBoolean,
  assertTitle,
  CHAT_PAGE_SIZE,
  type ChatListQuery,
  chatCursor,
  forkBranchName,
  jsonIssues,
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  MAX_JSON_DEPTH,
  mergeMetadata,
  type PreparedCommitMessage,
  type PrepareMessagesOptions,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  prepareSaveContext,
  stringProblem,
  toJsonText,
  utf8Length,
} from './store-input';
