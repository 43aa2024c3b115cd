export {
  ChatListPublisher,
  type ChatListPublisherOptions,
} from './chat-list/chat-list-publisher';
export {
  type ChatListUpdate,
  DurableObjectChatList,
} from './chat-list/durable-object-chat-list';
export {
  DEFAULT_SEARCH_CONCURRENCY,
  type FailedChatSearch,
  type SearchUserChatsInput,
  searchUserChats,
  type UserSearchPage,
} from './chat-list/search-user-chats';
export { type ObjectChatsListener, watchObjectChats } from './driver/change-feed';
export { DEFAULT_MAX_JSON_BYTES } from './driver/durable-object-driver';
export type { DurableObjectMigrationResult } from './driver/schema';
export type {
  DurableObjectStorageLike,
  SqlCursorLike,
  SqlStorageLike,
  SqlValue,
} from './driver/sql-storage';
export {
  DurableObjectContextStore,
  type DurableObjectContextStoreOptions,
} from './durable-object-context-store';
export {
  reviveError,
  type StoreCallOutcome,
  settleStoreCall,
  storeCallOutcome,
  type TransportedError,
} from './rpc/store-call-outcome';
