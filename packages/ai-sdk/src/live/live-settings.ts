import {
  type AppendReplyChunksInput,
  type AppendReplyChunksResult,
  type ChatChangeListener,
  type ContextStore,
  type EndReplyInput,
  type LiveChatState,
  type LiveReplyRead,
  type LiveReplyRecord,
  type ReadReplyInput,
  type StartReplyInput,
  type StopReplyInput,
  type TakeOverReplyInput,
  ValidationError,
} from '@ctxgraph/fragments-core';

/** The live-reply methods of a store that declares `capabilities.liveReplies`, all present. */
export interface LiveStore {
  startReply(input: StartReplyInput): Promise<LiveReplyRecord>;
  appendReplyChunks(input: AppendReplyChunksInput): Promise<AppendReplyChunksResult>;
  readReply(input: ReadReplyInput): Promise<LiveReplyRead | null>;
  getLiveState(chatId: string): Promise<LiveChatState>;
  stopReply(input: StopReplyInput): Promise<readonly LiveReplyRecord[]>;
  takeOverReply(input: TakeOverReplyInput): Promise<LiveReplyRead | null>;
  endReply(input: EndReplyInput): Promise<void>;
  watchChat(chatId: string, listener: ChatChangeListener): () => void;
}

/** The cycle's live replies: the store's methods and how the cycle uses them. */
export interface LiveSettings {
  readonly store: LiveStore;
  /** How long a writer holds its reply without a write, in milliseconds. */
  readonly leaseMs: number;
  /** How long a chunk waits before its batch is appended, in milliseconds. */
  readonly flushMs: number;
}

/** `createChatCycle({ live })`. */
export type LiveOption = false | { leaseMs?: number; flushMs?: number } | undefined;

/**
 * The store's live-reply methods when the store declares `capabilities.liveReplies` (bound to
 * it), else undefined.
 */
export function liveStoreOf(store: ContextStore): LiveStore | undefined {
  if (store.capabilities.liveReplies !== true) return undefined;
  const {
    startReply,
    appendReplyChunks,
    readReply,
    getLiveState,
    stopReply,
    takeOverReply,
    endReply,
    watchChat,
  } = store;
  if (
    !startReply ||
    !appendReplyChunks ||
    !readReply ||
    !getLiveState ||
    !stopReply ||
    !takeOverReply ||
    !endReply ||
    !watchChat
  )
    return undefined;
  return {
    startReply: (input) => startReply.call(store, input),
    appendReplyChunks: (input) => appendReplyChunks.call(store, input),
    readReply: (input) => readReply.call(store, input),
    getLiveState: (chatId) => getLiveState.call(store, chatId),
    stopReply: (input) => stopReply.call(store, input),
    takeOverReply: (input) => takeOverReply.call(store, input),
    endReply: (input) => endReply.call(store, input),
    watchChat: (chatId, listener) => watchChat.call(store, chatId, listener),
  };
}

/**
 * The cycle's live settings: undefined when the store has no live replies or `live` is false;
 * a `ValidationError` for a lease or flush interval that is not a positive whole number of
 * milliseconds.
 */
export function liveSettingsOf(store: ContextStore, live: LiveOption): LiveSettings | undefined {
  if (live === false) return undefined;
  const leaseMs = live?.leaseMs ?? 10_000;
  const flushMs = live?.flushMs ?? 200;
  for (const [name, value] of [
    ['live.leaseMs', leaseMs],
    ['live.flushMs', flushMs],
  ] as const) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new ValidationError(
        `createChatCycle(options): ${name} must be a positive whole number of milliseconds, received ${String(value)}.`,
        { issues: [{ path: name, message: 'expected an integer > 0' }] },
      );
    }
  }
  if (flushMs >= leaseMs) {
    throw new ValidationError(
      `createChatCycle(options): live.flushMs (${flushMs}) must be shorter than live.leaseMs (${leaseMs}), or a reply's lease runs out between two of its writes.`,
      { issues: [{ path: 'live.flushMs', message: 'expected less than live.leaseMs' }] },
    );
  }
  const liveStore = liveStoreOf(store);
  return liveStore === undefined ? undefined : { store: liveStore, leaseMs, flushMs };
}
