import type { CtxGraphErrorOptions } from './ctxgraph-error';
import { ConflictError } from './errors';

// The refusals of the live-reply capability (`ContextStoreCapabilities.liveReplies`). Each one
// means nothing was written.

/**
 * A live reply was started (`startReply`, or a commit's `startReply`) under a reply id the chat
 * already has a live record for. The record's primary key is the claim on the reply: two
 * processes that try to generate (or continue) the same reply at once get one record and one
 * refusal. Nothing was written (a commit that carried the start wrote no message either).
 */
export class LiveReplyConflictError extends ConflictError {
  static override readonly errorName: string = 'LiveReplyConflictError';
  /** The chat. */
  readonly chatId: string;
  /** The reply id that is already live. */
  readonly replyId: string;

  constructor(details: { chatId: string; replyId: string }, options: CtxGraphErrorOptions = {}) {
    super(
      `Reply "${details.replyId}" of chat "${details.chatId}" is already live (another process started or continues it). Nothing was written; follow the live reply instead of starting it again.`,
      options,
    );
    this.chatId = details.chatId;
    this.replyId = details.replyId;
  }
}

/**
 * A writer of a live reply no longer holds it: the record was ended (saved, or ended by another
 * process) or taken over by another owner after its lease ran out. Its chunks, its lease renewal
 * or its final save were refused and nothing was written: stop generating, the reply is someone
 * else's now.
 */
export class LiveReplyLostError extends ConflictError {
  static override readonly errorName: string = 'LiveReplyLostError';
  /** The chat. */
  readonly chatId: string;
  /** The reply. */
  readonly replyId: string;
  /** The owner that asked. */
  readonly owner: string;
  /** The owner that holds the record now, or null when the reply is not live any more. */
  readonly currentOwner: string | null;

  constructor(
    details: { chatId: string; replyId: string; owner: string; currentOwner: string | null },
    options: CtxGraphErrorOptions = {},
  ) {
    const now =
      details.currentOwner === null
        ? 'it is not live any more (it was ended)'
        : `it was taken over by "${details.currentOwner}" after its lease ran out`;
    super(
      `Owner "${details.owner}" no longer holds live reply "${details.replyId}" of chat "${details.chatId}": ${now}. Nothing was written; stop generating it.`,
      options,
    );
    this.chatId = details.chatId;
    this.replyId = details.replyId;
    this.owner = details.owner;
    this.currentOwner = details.currentOwner;
  }
}

/**
 * `appendReplyChunks` was given chunks that do not start where the reply's stream ends: `from` is
 * not the reply's `chunkCount` (a batch was lost, sent twice, or another writer appended). Nothing
 * was written; `chunkCount` says where the stream ends.
 */
export class LiveReplyOffsetError extends ConflictError {
  static override readonly errorName: string = 'LiveReplyOffsetError';
  /** The chat. */
  readonly chatId: string;
  /** The reply. */
  readonly replyId: string;
  /** The offset the batch was given at. */
  readonly from: number;
  /** The number of chunks the reply holds: the offset the next batch must have. */
  readonly chunkCount: number;

  constructor(
    details: { chatId: string; replyId: string; from: number; chunkCount: number },
    options: CtxGraphErrorOptions = {},
  ) {
    super(
      `Live reply "${details.replyId}" of chat "${details.chatId}" holds ${details.chunkCount} chunks, so the next batch starts at ${details.chunkCount}, not ${details.from}. Nothing was written.`,
      options,
    );
    this.chatId = details.chatId;
    this.replyId = details.replyId;
    this.from = details.from;
    this.chunkCount = details.chunkCount;
  }
}
