// `@ctxgraph/fragments-core/store-kit`: what a ContextStore implementer needs beyond the contract.
// The wrapper (`CheckedContextStore` / `defineContextStore` over a `ContextStoreDriver`) and the
// shared input checks it is built from, for stores that prefer to call them themselves. The data
// rules the checks apply (identifiers, storable JSON, UTF-8 length, limits) are the main entry's
// (`@ctxgraph/fragments-core`, `src/rules/`): codecs and the engine apply them too.

export {
  ChangePoller,
  type ChangePollerOptions,
  ChatWatchers,
  type ChatWatchersOptions,
  type ChatWatchersSource,
  type PolledChat,
  type PollTimers,
} from './chat-watchers';
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
  PreparedFindMessageNodes,
  PreparedForkBranch,
  PreparedGetChain,
  PreparedOpenChat,
  PreparedRenameBranch,
  PreparedSaveContext,
  PreparedUpdateChat,
  StoreCall,
} from './context-store-driver';
export { IndexHints } from './index-hints';
export {
  chunksFrom,
  endedReplyGraceOption,
  type LiveReplyDriver,
  type PreparedAppendReplyChunks,
  type PreparedCommitEndReply,
  type PreparedCommitLive,
  type PreparedCommitStartReply,
  type PreparedEndReply,
  type PreparedReadReply,
  type PreparedStartReply,
  type PreparedStopReply,
  type PreparedTakeOverReply,
  prepareAppendReplyChunks,
  prepareCommitLive,
  prepareEndReply,
  prepareReadReply,
  prepareStartReply,
  prepareStopReply,
  prepareTakeOverReply,
  type StoredChunkBatch,
} from './live-reply-input';
export { LIVE_REPLY_CALLS } from './live-reply-methods';
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
  assertInputObject,
  assertOptionalBoolean,
  assertTitle,
  type ChatListQuery,
  chatCursor,
  FIND_MESSAGE_NODES_LIMITS,
  findMessageNodesLimit,
  forkBranchName,
  mergeMetadata,
  type PreparedCommitMessage,
  type PrepareMessagesOptions,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  prepareSaveContext,
  toJsonText,
} from './store-input';
export {
  assignVersionIds,
  type VersionIdReads,
  versionNodeId,
  versionNodeIdCandidates,
  versionNumber,
} from './version-ids';
export { writtenNode } from './written-node';
