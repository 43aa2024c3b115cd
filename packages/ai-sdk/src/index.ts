// The public surface: what an app calls. Building blocks the cycle is made of (the body check
// alone, settling, usage sums) are in `@ctxgraph/ai-sdk/internal`, without a semver promise.

// One type for a message's versions: the engine's, read with the app's UI message type.
// A reply's overflow retry, as `StoredConversation.retries` and `usageOf(node)` show it.
export type { MessageVersion, OverflowRetry } from '@ctxgraph/engine';
export type { CycleEngineOptions } from './cycle/attach';
export type { CompactionEvent } from './cycle/background-compaction';
export {
  type ChatCycle,
  type ContextGauge,
  type ContextGaugeOptions,
  type ConversationVersions,
  createChatCycle,
  type StoredConversation,
} from './cycle/chat-cycle';
export { chatErrorResponse } from './cycle/chat-error-response';
export type { ChatTurn, TurnHistoryToolsOptions } from './cycle/chat-turn';
export { ContinuationRefusedError } from './cycle/continuation-refused-error';
export type {
  BeginTurnOptions,
  ChatCycleOptions,
  FollowOptions,
  ReadOptions,
  ReplySavedEvent,
} from './cycle/cycle-options';
export { ChatNotFoundForUserError, ChatRequestError, ReplyNotSavedError } from './errors';
export {
  type ChatHandlerOptions,
  type ChatRequestContext,
  createChatHandler,
} from './handler/chat-handler';
export { readStopRequest, type StopRequest } from './handler/stop-request';
export {
  type HistoryBranch,
  type HistoryHit,
  type HistoryMessage,
  type HistoryRefusal,
  type HistoryScope,
  type HistoryTools,
  type HistoryToolsOptions,
  historyTools,
  type ListBranchesInput,
  type ListBranchesResult,
  type ListBranchesTool,
  type ReadBranchInput,
  type ReadBranchResult,
  type ReadBranchTool,
  type SearchHistoryInput,
  type SearchHistoryResult,
  type SearchHistoryTool,
} from './history/history-tools';
export { readChatBody } from './request/read-chat-body';
export type {
  ChatMessageSchemas,
  ChatRequest,
  ChatTrigger,
} from './request/read-chat-request';
export { type ContextOverflow, contextOverflowOf } from './stream/context-overflow';
export type { TurnModelCall, TurnModelInput } from './stream/overflow-retry-source';
export { REPLY_FOLLOWS_HEADER } from './stream/reply-response';
export type { RespondOptions, StreamTextResultLike } from './stream/reply-source';
export { createMemoryResumableStreams, type ResumableStreams } from './stream/resumable-streams';
