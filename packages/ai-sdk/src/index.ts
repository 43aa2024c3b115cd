export type {
  CycleEngineOptions,
  MessageVersion,
  ReplyUsage,
} from './cycle/attach';
export {
  type BeginTurnOptions,
  type ChatCycle,
  type ChatCycleOptions,
  type ChatTurn,
  chatErrorResponse,
  createChatCycle,
  type ReadOptions,
  type ReplySavedEvent,
  type RespondOptions,
  type StreamTextResultLike,
} from './cycle/chat-cycle';
export { ContinuationRefusedError } from './cycle/continuation-refused-error';
export { ChatNotFoundForUserError, ChatRequestError, ReplyNotSavedError } from './errors';
export { readChatBody } from './request/read-chat-body';
export {
  type ChatMessageSchemas,
  type ChatRequest,
  type ChatTrigger,
  readChatRequest,
  validateChatMessages,
} from './request/read-chat-request';
export { sumUsage } from './stream/call-usage';
export { createMemoryResumableStreams, type ResumableStreams } from './stream/resumable-streams';
export { toServerSentEvents, uiMessageStreamHeaders } from './stream/server-sent-events';
export { settleReply } from './stream/settle-reply';
