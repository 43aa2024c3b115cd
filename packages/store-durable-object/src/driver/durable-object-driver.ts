import type { ContextStoreDriver } from '@ctxgraph/fragments-core/store-kit';
import { chatOperations } from './chat-operations';
import { lookups } from './lookups';
import { messageOperations } from './message-operations';
import { messageWrites } from './message-writes';
import { pointerOperations } from './pointer-operations';
import type { DurableObjectStorageLike } from './sql-storage';

/** The name of the store in error messages and `toJSON()`. */
export const STORE_NAME = 'DurableObjectContextStore';

/**
 * The largest JSON text the store accepts, in UTF-8 bytes: Durable Object SQLite refuses a
 * string or a row over 2 MB (2,000,000 bytes), and this leaves room for the rest of the row.
 * A node row holds a message and its engine record: the two together must stay under the
 * platform's limit, or the platform refuses the write (a `StoreError`, nothing written).
 */
export const DEFAULT_MAX_JSON_BYTES = 1_900_000;

/**
 * The driver over one Durable Object's SQLite storage. Every method runs synchronously, start to
 * end, on the object's single thread: no other call of the object runs in between, so each write
 * reads the head and moves it with nothing interleaved. Writes still run in `transactionSync`,
 * so a write that throws halfway leaves nothing behind.
 */
export function durableObjectDriver(storage: DurableObjectStorageLike): ContextStoreDriver {
  const db = lookups(storage);
  return {
    name: STORE_NAME,
    capabilities: { persistent: true, multiProcess: false },
    maxJsonBytes: DEFAULT_MAX_JSON_BYTES,
    ...chatOperations(db),
    ...messageOperations(db, messageWrites(db)),
    ...pointerOperations(db),
  };
}
