// `@ctxgraph/fragments-core/store-kit`: what a ContextStore implementer needs beyond the contract.
// The wrapper (`CheckedContextStore` / `defineContextStore` over a `ContextStoreDriver`), the
// defaults it gives a thin driver (`append`, `forkBranch`), and the input checks it is built
// from, one prepare function per contract method, for stores that prefer to call them
// themselves. The data rules the checks apply (identifiers, storable JSON, UTF-8 length, limits)
// are the main entry's (`@ctxgraph/fragments-core`, `src/rules/`): codecs and the engine apply
// them too.

export { toJsonText } from '../../rules/storable-json';
export {
  type ChatListQuery,
  chatCursor,
  type PreparedOpenChat,
  type PreparedSaveContext,
  type PreparedUpdateChat,
  prepareChatId,
  prepareListChats,
  prepareOpenChat,
  prepareSaveContext,
  prepareUpdateChat,
} from './chat-input';
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
export {
  type PreparedAppend,
  type PreparedCommit,
  type PreparedCommitMessage,
  prepareAppend,
  prepareCommit,
} from './commit-input';
export type {
  Awaitable,
  ContextStoreDriver,
  DriverMethod,
  DriverMethodName,
  DriverResult,
  DriverResults,
  KitDefaultedMethod,
  LiveReplyDriver,
  OptionalDriverMethods,
  PreparedInputs,
  RequiredDriverMethods,
  StoreCall,
} from './context-store-driver';
export { IndexHints } from './index-hints';
export {
  assertInputObject,
  assertOptionalBoolean,
  assertTitle,
  mergeMetadata,
  type StoreInputOptions,
} from './input-checks';
export {
  chunksFrom,
  endedReplyGraceOption,
  type PreparedAppendReplyChunks,
  type PreparedCommitEndReply,
  type PreparedCommitStartReply,
  type PreparedEndReply,
  type PreparedReadReply,
  type PreparedStartReply,
  type PreparedStopReply,
  type PreparedTakeOverReply,
  prepareAppendReplyChunks,
  prepareEndReply,
  prepareReadReply,
  prepareStartReply,
  prepareStopReply,
  prepareTakeOverReply,
  type StoredChunkBatch,
} from './live-reply-input';
export {
  forkBranchName,
  type PreparedCreateBranch,
  type PreparedCreateCheckpoint,
  type PreparedForkBranch,
  type PreparedRenameBranch,
  prepareCreateBranch,
  prepareCreateCheckpoint,
  prepareForkBranch,
  preparePointer,
  prepareRenameBranch,
} from './pointer-input';
export {
  FIND_MESSAGE_NODES_LIMITS,
  type PreparedFindMessageNodes,
  type PreparedGetChain,
  prepareFindMessageNodes,
  prepareGetChain,
  prepareGetHead,
  prepareGetMessage,
} from './read-input';
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
  searchCursor,
  searchScore,
  searchSnippet,
  searchTerms,
  searchTokens,
} from './search-input';
export {
  assignVersionIds,
  type VersionIdReads,
  versionNodeId,
  versionNodeIdCandidates,
  versionNumber,
} from './version-ids';
export { writtenNode } from './written-node';
