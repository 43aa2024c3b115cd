import type { JsonObject, JsonValue } from '../json';

// The live-reply capability of the store contract (`ContextStoreCapabilities.liveReplies`): a
// reply's stream kept in the store while it is generated, so any process sharing the store can
// follow it, stop it, or end it when its writer died, and a change feed per chat. The methods
// are on `ContextStore` (optional); their inputs and records are here.

/**
 * A reply being generated, as the store keeps it until its final save ends it, and for a grace
 * period after (see {@link ENDED_REPLY_GRACE}): an ended reply (`endedAt` set) stays readable
 * with its chunks (`readReply`), so a reader that was behind when it ended still reads its last
 * chunks, but it is no longer live (not in `getLiveState`, not stoppable, not writable). One per
 * (`chatId`, `replyId`): the primary key is also the claim on the reply (a second start of a live
 * reply is refused with `LiveReplyConflictError`; a start of an ended one replaces it).
 */
export interface LiveReplyRecord {
  /** The chat. */
  readonly chatId: string;
  /** The reply's message id (the id its UI message stream's `start` chunk carries). */
  readonly replyId: string;
  /**
   * The branch the reply was started on (for a commit's `startReply`, the branch the commit
   * wrote), or null when its writer did not say (its save may start a branch of its own).
   */
  readonly branch: string | null;
  /**
   * The node the reply follows (for a commit's `startReply`, the branch head after the commit:
   * the question), or null for a reply that starts a new root.
   */
  readonly afterNodeId: string | null;
  /** Who generates it: an opaque id of the process and turn that holds the record. */
  readonly owner: string;
  /**
   * Milliseconds since the epoch (the store's clock) until which the owner holds the reply;
   * each `appendReplyChunks` moves it. Once it has passed, `takeOverReply` may hand the reply to
   * another owner.
   */
  readonly leaseExpiresAt: number;
  /** When a stop was first asked for (`stopReply`), or null. The writer learns it from its next append. */
  readonly stopRequestedAt: number | null;
  /** The number of chunks appended: the offset of the next batch. */
  readonly chunkCount: number;
  /** When the reply was started (the store's clock). */
  readonly startedAt: number;
  /**
   * When the reply ended (its final save, `endReply`, or a commit's `endReply`; the store's
   * clock), or null while it is live.
   */
  readonly endedAt: number | null;
  /**
   * What the writer wants a reader or a taker-over to know (message metadata, whether it
   * continues a stored message, …): a JSON object kept as given.
   */
  readonly data: JsonObject;
}

/** Input of `ContextStore.startReply`: a live reply without a message write (a continuation). */
export interface StartReplyInput {
  /** The chat. */
  readonly chatId: string;
  /** The reply's message id. */
  readonly replyId: string;
  /** The branch it is generated on, or null (see {@link LiveReplyRecord.branch}). */
  readonly branch: string | null;
  /** The node it follows, or null (see {@link LiveReplyRecord.afterNodeId}). */
  readonly afterNodeId: string | null;
  /** Who generates it (a valid identifier). */
  readonly owner: string;
  /** How long the owner holds it before another process may take it over, in milliseconds. */
  readonly leaseMs: number;
  /** What a reader or a taker-over should know. @default {} */
  readonly data?: JsonObject;
}

/**
 * `CommitInput.startReply`: the reply that answers the commit's messages, started in the same
 * write, so a question is never stored without its reply's record. Its branch is the branch the
 * commit wrote and it follows the head the commit left.
 */
export interface CommitStartReply {
  /** The reply's message id. */
  readonly replyId: string;
  /** Who generates it. */
  readonly owner: string;
  /** How long the owner holds it, in milliseconds. */
  readonly leaseMs: number;
  /** What a reader or a taker-over should know. @default {} */
  readonly data?: JsonObject;
}

/**
 * `CommitInput.endReply`: the live reply the commit saves, ended in the same write (its record
 * marked ended, its chunks readable for the grace period), so a reader finds the reply either
 * live or saved, never both and never neither. Refused with `LiveReplyLostError` (and nothing
 * written) unless `owner` holds it (an ended reply is held by no one).
 */
export interface CommitEndReply {
  /** The reply. */
  readonly replyId: string;
  /** Its owner (the one that started it, or took it over). */
  readonly owner: string;
}

/** Input of `ContextStore.appendReplyChunks`. */
export interface AppendReplyChunksInput {
  /** The chat. */
  readonly chatId: string;
  /** The reply. */
  readonly replyId: string;
  /** Its owner; anyone else is refused with `LiveReplyLostError`. */
  readonly owner: string;
  /**
   * The offset of the first chunk: the reply's `chunkCount` (0 for the first batch). Anything
   * else is refused with `LiveReplyOffsetError`, so a lost or repeated batch never goes unseen.
   */
  readonly from: number;
  /** The chunks, in order (JSON values: UI message chunks). May be empty: then only the lease moves. */
  readonly chunks: readonly JsonValue[];
  /** The new lease, from now, in milliseconds. */
  readonly leaseMs: number;
}

/** What `ContextStore.appendReplyChunks` returns. */
export interface AppendReplyChunksResult {
  /** The reply's chunk count after the batch (the next batch's `from`). */
  readonly chunkCount: number;
  /** The new end of the lease (the store's clock). */
  readonly leaseExpiresAt: number;
  /** True once a stop was asked for (`stopReply`): finish the reply and save it. */
  readonly stopRequested: boolean;
}

/** Input of `ContextStore.readReply`. */
export interface ReadReplyInput {
  /** The chat. */
  readonly chatId: string;
  /** The reply. */
  readonly replyId: string;
  /** The offset of the first chunk wanted. @default 0 */
  readonly from?: number;
  /**
   * The most chunks wanted (a page: 0 reads the record alone): the read gives the chunks from
   * `from` to `from + limit`, fewer at the reply's end, so a reader of a long reply reads it in
   * pages and a store reads no more than a page's batches. @default every chunk from `from`
   */
  readonly limit?: number;
}

/** A live reply with its chunks (from an offset), as `readReply` and `takeOverReply` return it. */
export interface LiveReplyRead {
  /** The record, as it is now (`endedAt` set once the reply ended: no chunk will follow). */
  readonly record: LiveReplyRecord;
  /**
   * The chunks from the offset asked for to `record.chunkCount` (at most `limit` of them), in
   * order.
   */
  readonly chunks: readonly JsonValue[];
}

/** Input of `ContextStore.stopReply`. */
export interface StopReplyInput {
  /** The chat. */
  readonly chatId: string;
  /** The reply to stop; every live reply of the chat when omitted. */
  readonly replyId?: string;
}

/** Input of `ContextStore.takeOverReply`. */
export interface TakeOverReplyInput {
  /** The chat. */
  readonly chatId: string;
  /** The reply. */
  readonly replyId: string;
  /** The new owner. */
  readonly owner: string;
  /** The new owner's lease, from now, in milliseconds. */
  readonly leaseMs: number;
}

/** Input of `ContextStore.endReply`. */
export interface EndReplyInput {
  /** The chat. */
  readonly chatId: string;
  /** The reply. */
  readonly replyId: string;
  /** Its owner; anyone else is refused with `LiveReplyLostError`. */
  readonly owner: string;
}

/**
 * What `ContextStore.getLiveState` returns: a chat's live replies (not the ended ones) and its
 * change revision, read together.
 */
export interface LiveChatState {
  /** The chat. */
  readonly chatId: string;
  /**
   * A number that only grows while the chat exists: the chat's `revision` plus a count of the
   * live-reply writes that were not commits (a start, a stop, a takeover, an end). Every commit
   * and every such write raises it; chunk appends do not.
   */
  readonly changeRevision: number;
  /** The live replies (`endedAt` null), oldest start first. */
  readonly replies: readonly LiveReplyRecord[];
}

/**
 * A notice of the change feed (`ContextStore.watchChat`). A notice says that something changed
 * and where, not what: read the state again after it (`getLiveState`, `readReply`, `getHead`).
 *
 * - `'chat'`: the chat changed: a commit or append, a live reply started, stopped, taken over or
 *   ended, the chat deleted, or another write that moved the chat's `updatedAt`. Also sent once
 *   when the store starts watching the chat, and after the feed may have missed something (a
 *   reconnection): a watcher reads the state after each.
 * - `'chunks'`: chunks were appended to a live reply; `chunkCount` is its count after them.
 */
export type ChatChange =
  | { readonly type: 'chat'; readonly chatId: string }
  | {
      readonly type: 'chunks';
      readonly chatId: string;
      readonly replyId: string;
      readonly chunkCount: number;
    };

/** A listener of the change feed. It must not throw (an error it throws is rethrown asynchronously). */
export type ChatChangeListener = (change: ChatChange) => void;

/**
 * The optional methods of the live-reply capability, part of `ContextStore` (declare
 * `capabilities.liveReplies`; a store serves all of them or none). Bad input is refused with
 * `ValidationError` before anything is written, with the limits of {@link LIVE_REPLY_LIMITS} and
 * the store's JSON size limit (for `data` and for each batch of chunks). Times are the store's
 * clock (an option of the bundled stores, `Date.now` by default). Every method but `watchChat`
 * throws `ChatNotFoundError` for a chat that does not exist.
 */
export interface LiveReplyMethods {
  /**
   * Optional (declare `capabilities.liveReplies`): starts a live reply without writing a message
   * (a continuation, a regenerate; a reply that answers new messages starts with them, in the
   * commit's `startReply`). `LiveReplyConflictError` when the chat already has a live reply of
   * that id (the claim two concurrent continuations race for); an ended reply of that id (in its
   * grace period) is replaced, its chunks dropped. Raises the chat's change revision.
   */
  startReply?(input: StartReplyInput): Promise<LiveReplyRecord>;
  /**
   * Optional (declare `capabilities.liveReplies`): appends a batch of chunks at offset `from` and
   * renews the owner's lease, in one write, and says whether a stop was asked for. Refused,
   * with nothing written, with `LiveReplyLostError` when `owner` does not hold the reply (it was
   * ended, by anyone, or taken over) and `LiveReplyOffsetError` when `from` is not the reply's
   * `chunkCount`.
   * An empty batch only renews the lease. Does not change the chat's change revision; watchers
   * get a `'chunks'` notice.
   */
  appendReplyChunks?(input: AppendReplyChunksInput): Promise<AppendReplyChunksResult>;
  /**
   * Optional (declare `capabilities.liveReplies`): a reply and its chunks from offset `from`
   * (default 0; past the end gives none), read together: a live one, or one that ended less than
   * the store's grace period ago ({@link ENDED_REPLY_GRACE}; `record.endedAt` set: it is saved,
   * or was ended without a save, and no chunk will follow), so a reader that was behind when it
   * ended reads its last chunks. Null when the reply was never started, or ended longer ago.
   */
  readReply?(input: ReadReplyInput): Promise<LiveReplyRead | null>;
  /**
   * Optional (declare `capabilities.liveReplies`): the chat's live replies (oldest start first;
   * not the ended ones) and its change revision, read together.
   */
  getLiveState?(chatId: string): Promise<LiveChatState>;
  /**
   * Optional (declare `capabilities.liveReplies`): asks a live reply (or, without `replyId`,
   * every live reply of the chat) to stop, wherever it is generated: its writer learns it from
   * its next `appendReplyChunks`. Returns the records asked (a reply already asked keeps its
   * first `stopRequestedAt`); idempotent; an unknown or ended `replyId` gives `[]`. Raises the
   * chat's change revision when it marked a reply.
   */
  stopReply?(input: StopReplyInput): Promise<readonly LiveReplyRecord[]>;
  /**
   * Optional (declare `capabilities.liveReplies`): hands a live reply whose lease has run out
   * (by the store's clock) to a new owner with a new lease, and returns it with all its chunks,
   * so the new owner can end it (save what was streamed); null when the reply is not live (never
   * started, or ended) or its lease has not run out. Of concurrent takers, one gets it. The old owner's later writes are
   * refused with `LiveReplyLostError`. Raises the chat's change revision.
   */
  takeOverReply?(input: TakeOverReplyInput): Promise<LiveReplyRead | null>;
  /**
   * Optional (declare `capabilities.liveReplies`): ends a live reply without a save (marked
   * ended, its chunks readable for the grace period); to end it with its save, commit with
   * `endReply`. `LiveReplyLostError` unless `owner` holds it. Raises the chat's change revision.
   */
  endReply?(input: EndReplyInput): Promise<void>;
  /**
   * Optional (declare `capabilities.liveReplies`): the chat's change feed. `listener` gets a
   * `'chat'` notice once the store watches the chat (at once, or once a database listener is
   * up), then within about a second of every change to the chat made through any store over the
   * same data, in this process or another (several changes may share one notice; a notice may
   * come without a change), and a `'chunks'` notice when chunks are appended. Read the state
   * after each notice. Returns the function that stops the notices. Timers and listening
   * connections run only while something watches, and stop with the last watcher and with
   * `close()`. The chat need not exist yet.
   */
  watchChat?(chatId: string, listener: ChatChangeListener): () => void;
}

/** The limits every store applies to live-reply input, with the same messages. */
export const LIVE_REPLY_LIMITS: {
  /** The longest lease, in milliseconds (one day). */
  readonly maxLeaseMs: number;
  /** The most chunks one `appendReplyChunks` may carry. */
  readonly maxChunksPerBatch: number;
} = {
  maxLeaseMs: 86_400_000,
  maxChunksPerBatch: 10_000,
};

/**
 * How long a store keeps an ended reply readable (`readReply`, with `record.endedAt` set), by
 * its clock: a reader that was behind when the reply ended (a resume on a slow connection, a
 * busy process) still reads its last chunks. The bundled stores take it as their
 * `endedReplyGraceMs` option, from `minMs` to `maxMs`, `defaultMs` when not given. After it, the
 * reply reads as never started, and its record and chunks are deleted lazily: by a later write
 * that ends a reply (in any chat of the store), or with its chat. No timer runs for it.
 */
export const ENDED_REPLY_GRACE: {
  /** The default grace period, in milliseconds (one minute). */
  readonly defaultMs: number;
  /** The shortest grace period a store may keep, in milliseconds (30 seconds). */
  readonly minMs: number;
  /** The longest grace period a store may keep, in milliseconds (one day). */
  readonly maxMs: number;
} = {
  defaultMs: 60_000,
  minMs: 30_000,
  maxMs: 86_400_000,
};
