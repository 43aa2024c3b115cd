export {
  type ChatClient,
  ChatClientError,
  type ChatClientOptions,
  type ChatPathAt,
  createChatClient,
  type FetchFunction,
} from './chat-client';
export { type ChatRoutes, chatRoutes } from './chat-routes';
export {
  type ChatDriver,
  type ChatSession,
  type ChatSessionOptions,
  type ChatSessionSnapshot,
  createChatSession,
} from './chat-session';
export {
  type ChatEventsFollower,
  type FollowChatEventsOptions,
  followChatEvents,
  type RetryOptions,
} from './follow-chat-events';
export {
  type LastMessageBody,
  lastMessageBody,
  prepareLastMessageRequest,
} from './last-message-request';
export {
  type ChatEvent,
  type ReplyOutcome,
  readChatEvent,
  readSavedChat,
  type SavedChat,
  type SavedVersions,
  type VersionNode,
} from './saved-chat';
