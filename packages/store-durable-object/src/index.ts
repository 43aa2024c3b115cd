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
