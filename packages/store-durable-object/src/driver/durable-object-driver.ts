import type {
  Awaitable,
  ContextStoreDriver,
  DriverMethod,
  DriverMethodName,
  DriverResult,
  PreparedInputs,
} from '@ctxgraph/fragments-core/store-kit';
import { ObjectChangeFeed } from './change-feed';
import { chatOperations } from './chat-operations';
import { liveReplyOperations } from './live-replies';
import { lookups } from './lookups';
import { messageOperations } from './message-operations';
import { messageWrites } from './message-writes';
import { pointerOperations } from './pointer-operations';
import { searchMessages } from './search';
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

/** What the driver takes beyond the storage, resolved by the store's constructor. */
export interface DurableObjectDriverOptions {
  /** The clock live replies are stamped with and their leases compared to. */
  readonly clock: () => number;
  /** How long an ended reply stays readable, in milliseconds of `clock`. */
  readonly endedReplyGraceMs: number;
}

/** The driver and what the store closes with it. */
export interface DurableObjectDriver extends ContextStoreDriver {
  /** Forgets the store's watchers (the store closes); the storage is the object's and stays. */
  readonly close: () => void;
}

/**
 * The driver over one Durable Object's SQLite storage. Every method runs synchronously, start to
 * end, on the object's single thread: no other call of the object runs in between, so each write
 * reads the head and moves it with nothing interleaved. Writes still run in `transactionSync`,
 * so a write that throws halfway leaves nothing behind. Each write that committed is announced
 * at once to the chat's watchers on every store over the storage (`change-feed.ts`).
 */
export function durableObjectDriver(
  storage: DurableObjectStorageLike,
  options: DurableObjectDriverOptions,
): DurableObjectDriver {
  const db = lookups(storage);
  const live = liveReplyOperations(db, options.clock, options.endedReplyGraceMs);
  const feed = new ObjectChangeFeed(storage);
  const chats = chatOperations(db, live.forget);
  const messages = messageOperations(db, messageWrites(db), live.commitLive);
  const pointers = pointerOperations(db);
  const { methods } = live;
  const changed = (input: { readonly chatId: string }): void => feed.changed(input.chatId);
  return {
    name: STORE_NAME,
    capabilities: {
      persistent: true,
      multiProcess: false,
      liveReplies: true,
      search: true,
      searchPrefix: true,
    },
    maxJsonBytes: DEFAULT_MAX_JSON_BYTES,
    ...chats,
    ...messages,
    ...pointers,
    // Every write that changes a chat is followed by a notice to its watchers.
    openChat: announced(chats.openChat, changed),
    updateChat: announced(chats.updateChat, changed),
    deleteChat: announced(chats.deleteChat, (chatId, deleted) => {
      if (deleted) feed.changed(chatId);
    }),
    saveContext: announced(chats.saveContext, changed),
    commit: announced(messages.commit, changed),
    append: announced(messages.append, changed),
    createBranch: announced(pointers.createBranch, changed),
    forkBranch: announced(pointers.forkBranch, changed),
    renameBranch: announced(pointers.renameBranch, changed),
    setActiveBranch: announced(pointers.setActiveBranch, changed),
    createCheckpoint: announced(pointers.createCheckpoint, changed),
    deleteCheckpoint: announced(pointers.deleteCheckpoint, changed),
    searchMessages: (query) => searchMessages(db, query),
    ...methods,
    startReply: announced(methods.startReply, changed),
    appendReplyChunks: announced(methods.appendReplyChunks, (input, result) => {
      if (input.count > 0) feed.appended(input.chatId, input.replyId, result.chunkCount);
    }),
    stopReply: announced(methods.stopReply, (input, records) => {
      if (records.length > 0) feed.changed(input.chatId);
    }),
    takeOverReply: announced(methods.takeOverReply, (input, taken) => {
      if (taken !== null) feed.changed(input.chatId);
    }),
    endReply: announced(methods.endReply, changed),
    watchChat: (chatId, listener) => feed.watch(chatId, listener),
    close: () => feed.close(),
  };
}

/**
 * `method`, followed by `notice` once it returned: after the write's `transactionSync` committed,
 * never for a write that threw (nothing was written).
 */
function announced<Name extends DriverMethodName>(
  method: DriverMethod<Name>,
  notice: (input: PreparedInputs[Name], result: DriverResult<Name>) => void,
): DriverMethod<Name> {
  return (input) => {
    const result: Awaitable<DriverResult<Name>> = method(input);
    if (!isThenable(result)) {
      notice(input, result);
      return result;
    }
    return Promise.resolve(result).then((settled) => {
      notice(input, settled);
      return settled;
    });
  };
}

function isThenable<T>(value: Awaitable<T>): value is PromiseLike<T> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { readonly then?: unknown }).then === 'function'
  );
}
