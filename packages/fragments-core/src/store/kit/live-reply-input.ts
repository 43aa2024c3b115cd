import { ValidationError } from '../../errors/errors';
import type { JsonValue } from '../../json';
import { assertIdentifier } from '../../rules/identifiers';
import { assertJsonObject, toJsonText } from '../../rules/storable-json';
import {
  type AppendReplyChunksInput,
  type CommitEndReply,
  type CommitStartReply,
  ENDED_REPLY_GRACE,
  type EndReplyInput,
  LIVE_REPLY_LIMITS,
  type ReadReplyInput,
  type StartReplyInput,
  type StopReplyInput,
  type TakeOverReplyInput,
} from '../live-replies';
import { assertInputObject, type ByteLimit, checkBytes } from './input-checks';

// The checks of the live-reply capability's input, one function per method (and one for a
// commit's `startReply` / `endReply`), and the prepared values a driver receives. As for the
// other methods, each field is read once into a fresh object, so what was checked is what the
// driver gets.

/** `startReply` input, checked; `data` serialized. */
export interface PreparedStartReply {
  readonly chatId: string;
  readonly replyId: string;
  readonly branch: string | null;
  readonly afterNodeId: string | null;
  readonly owner: string;
  /** The lease, in milliseconds from the store's now (1 to `LIVE_REPLY_LIMITS.maxLeaseMs`). */
  readonly leaseMs: number;
  /** The JSON text of `data` (`'{}'` when none was given). */
  readonly dataJson: string;
}

/** A commit's `startReply`, checked: the branch and the node it follows come from the commit. */
export interface PreparedCommitStartReply {
  readonly replyId: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly dataJson: string;
}

/** A commit's `endReply`, checked. */
export interface PreparedCommitEndReply {
  readonly replyId: string;
  readonly owner: string;
}

/** `appendReplyChunks` input, checked; the chunks serialized as one JSON array. */
export interface PreparedAppendReplyChunks {
  readonly chatId: string;
  readonly replyId: string;
  readonly owner: string;
  /** The offset of the first chunk (a safe integer, 0 or more). */
  readonly from: number;
  readonly leaseMs: number;
  /** The number of chunks (0 for a lease renewal). */
  readonly count: number;
  /** The JSON text of the chunks, an array (`'[]'` for none): store it as one batch. */
  readonly chunksJson: string;
}

/** `readReply` input, checked, `from` defaulted to 0. */
export interface PreparedReadReply {
  readonly chatId: string;
  readonly replyId: string;
  readonly from: number;
  /** The most chunks to return (0 or more), or undefined for every chunk from `from`. */
  readonly limit: number | undefined;
}

/** `stopReply` input, checked. */
export interface PreparedStopReply {
  readonly chatId: string;
  /** The reply, or undefined for every live reply of the chat. */
  readonly replyId: string | undefined;
}

/** `takeOverReply` input, checked. */
export interface PreparedTakeOverReply {
  readonly chatId: string;
  readonly replyId: string;
  readonly owner: string;
  readonly leaseMs: number;
}

/** `endReply` input, checked. */
export interface PreparedEndReply {
  readonly chatId: string;
  readonly replyId: string;
  readonly owner: string;
}

/**
 * A store's `endedReplyGraceMs` option: how long an ended reply stays readable, a whole number of
 * milliseconds from `ENDED_REPLY_GRACE.minMs` to `maxMs` (`defaultMs` when undefined), else a
 * `ValidationError` that names the store.
 *
 * @example
 * ```ts
 * const graceMs = endedReplyGraceOption('MyStore', options.endedReplyGraceMs); // 60000
 * ```
 */
export function endedReplyGraceOption(store: string, value: unknown): number {
  if (value === undefined) return ENDED_REPLY_GRACE.defaultMs;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < ENDED_REPLY_GRACE.minMs ||
    value > ENDED_REPLY_GRACE.maxMs
  ) {
    const problem = `expected an integer of milliseconds from ${ENDED_REPLY_GRACE.minMs} to ${ENDED_REPLY_GRACE.maxMs}, received ${describe(value)}`;
    throw new ValidationError(`${store}: endedReplyGraceMs ${problem}.`, {
      issues: [{ path: 'endedReplyGraceMs', message: problem }],
    });
  }
  return value;
}

function assertLease(method: string, leaseMs: unknown): asserts leaseMs is number {
  if (
    typeof leaseMs !== 'number' ||
    !Number.isInteger(leaseMs) ||
    leaseMs < 1 ||
    leaseMs > LIVE_REPLY_LIMITS.maxLeaseMs
  ) {
    const problem = `expected an integer of milliseconds from 1 to ${LIVE_REPLY_LIMITS.maxLeaseMs}, received ${describe(leaseMs)}`;
    throw new ValidationError(`${method}: leaseMs ${problem}. Nothing was written.`, {
      issues: [{ path: 'leaseMs', message: problem }],
    });
  }
}

function assertOffset(method: string, field: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    const problem = `expected a whole number of chunks (0 or more), received ${describe(value)}`;
    throw new ValidationError(`${method}: ${field} ${problem}.`, {
      issues: [{ path: field, message: problem }],
    });
  }
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  return typeof value;
}

function dataText(method: string, data: unknown, limit: ByteLimit): string {
  if (data === undefined) return '{}';
  assertJsonObject(method, 'data', data);
  const text = JSON.stringify(data);
  checkBytes(method, 'data', text, limit);
  return text;
}

/** `startReply(input)`. */
export function prepareStartReply(input: StartReplyInput, limit: ByteLimit): PreparedStartReply {
  const method = 'startReply(input)';
  assertInputObject(method, input);
  const { chatId, replyId, branch, afterNodeId, owner, leaseMs, data } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'replyId', replyId);
  if (branch !== null) assertIdentifier(method, 'branch', branch);
  if (afterNodeId !== null) assertIdentifier(method, 'afterNodeId', afterNodeId);
  assertIdentifier(method, 'owner', owner);
  assertLease(method, leaseMs);
  return {
    chatId,
    replyId,
    branch,
    afterNodeId,
    owner,
    leaseMs,
    dataJson: dataText(method, data, limit),
  };
}

/** What a commit carries for the live-reply capability, checked. */
export interface PreparedCommitLive {
  readonly startReply: PreparedCommitStartReply | undefined;
  readonly endReply: PreparedCommitEndReply | undefined;
}

/**
 * A commit's `startReply` and `endReply`: refused with `ValidationError` when the store does not
 * declare `capabilities.liveReplies` (`served` false), when both are given, or when malformed.
 */
export function prepareCommitLive(
  startReply: CommitStartReply | undefined,
  endReply: CommitEndReply | undefined,
  served: boolean,
  limit: ByteLimit,
): PreparedCommitLive {
  const method = 'commit(input)';
  if (startReply === undefined && endReply === undefined)
    return { startReply: undefined, endReply: undefined };
  const field = startReply !== undefined ? 'startReply' : 'endReply';
  if (!served) {
    throw new ValidationError(
      `${method}: ${field} needs a store that declares capabilities.liveReplies, and this one does not. Nothing was written.`,
      { issues: [{ path: field, message: 'not supported by this store' }] },
    );
  }
  if (startReply !== undefined && endReply !== undefined) {
    throw new ValidationError(
      `${method}: give startReply or endReply, not both: a commit starts the reply that answers it, or saves the reply it ends. Nothing was written.`,
      { issues: [{ path: 'endReply', message: 'not allowed together with startReply' }] },
    );
  }
  if (startReply !== undefined) {
    if (typeof startReply !== 'object' || startReply === null)
      throw new ValidationError(`${method}: startReply must be an object.`, {
        issues: [{ path: 'startReply', message: 'expected an object' }],
      });
    const { replyId, owner, leaseMs, data } = startReply;
    assertIdentifier(method, 'startReply.replyId', replyId);
    assertIdentifier(method, 'startReply.owner', owner);
    assertLease(method, leaseMs);
    return {
      startReply: { replyId, owner, leaseMs, dataJson: dataText(method, data, limit) },
      endReply: undefined,
    };
  }
  const end = endReply as CommitEndReply;
  if (typeof end !== 'object' || end === null)
    throw new ValidationError(`${method}: endReply must be an object.`, {
      issues: [{ path: 'endReply', message: 'expected an object' }],
    });
  const { replyId, owner } = end;
  assertIdentifier(method, 'endReply.replyId', replyId);
  assertIdentifier(method, 'endReply.owner', owner);
  return { startReply: undefined, endReply: { replyId, owner } };
}

/** `appendReplyChunks(input)`. */
export function prepareAppendReplyChunks(
  input: AppendReplyChunksInput,
  limit: ByteLimit,
): PreparedAppendReplyChunks {
  const method = 'appendReplyChunks(input)';
  assertInputObject(method, input);
  const { chatId, replyId, owner, from, chunks, leaseMs } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'replyId', replyId);
  assertIdentifier(method, 'owner', owner);
  assertOffset(method, 'from', from);
  assertLease(method, leaseMs);
  if (!Array.isArray(chunks)) {
    throw new ValidationError(
      `${method}: chunks must be an array (empty to renew the lease only).`,
      {
        issues: [{ path: 'chunks', message: 'expected an array' }],
      },
    );
  }
  if (chunks.length > LIVE_REPLY_LIMITS.maxChunksPerBatch) {
    const problem = `holds ${chunks.length} chunks, more than one batch may (${LIVE_REPLY_LIMITS.maxChunksPerBatch})`;
    throw new ValidationError(`${method}: chunks ${problem}. Nothing was written.`, {
      issues: [{ path: 'chunks', message: problem }],
    });
  }
  // One walk checks and serializes the batch: it is stored as one JSON array.
  const chunksJson = toJsonText(method, 'chunks', chunks);
  checkBytes(method, 'chunks', chunksJson, limit);
  return { chatId, replyId, owner, from, leaseMs, count: chunks.length, chunksJson };
}

/** `readReply(input)`. */
export function prepareReadReply(input: ReadReplyInput): PreparedReadReply {
  const method = 'readReply(input)';
  assertInputObject(method, input);
  const { chatId, replyId, from, limit } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'replyId', replyId);
  if (from !== undefined) assertOffset(method, 'from', from);
  if (limit !== undefined) assertOffset(method, 'limit', limit);
  return { chatId, replyId, from: from ?? 0, limit };
}

/** `stopReply(input)`. */
export function prepareStopReply(input: StopReplyInput): PreparedStopReply {
  const method = 'stopReply(input)';
  assertInputObject(method, input);
  const { chatId, replyId } = input;
  assertIdentifier(method, 'chatId', chatId);
  if (replyId !== undefined) assertIdentifier(method, 'replyId', replyId);
  return { chatId, replyId };
}

/** `takeOverReply(input)`. */
export function prepareTakeOverReply(input: TakeOverReplyInput): PreparedTakeOverReply {
  const method = 'takeOverReply(input)';
  assertInputObject(method, input);
  const { chatId, replyId, owner, leaseMs } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'replyId', replyId);
  assertIdentifier(method, 'owner', owner);
  assertLease(method, leaseMs);
  return { chatId, replyId, owner, leaseMs };
}

/** `endReply(input)`. */
export function prepareEndReply(input: EndReplyInput): PreparedEndReply {
  const method = 'endReply(input)';
  assertInputObject(method, input);
  const { chatId, replyId, owner } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'replyId', replyId);
  assertIdentifier(method, 'owner', owner);
  return { chatId, replyId, owner };
}

/** One stored batch of chunks: the offset of its first chunk, its count, its JSON text (an array). */
export interface StoredChunkBatch {
  readonly seq: number;
  readonly count: number;
  readonly json: string;
}

/**
 * The chunks from offset `from`, at most `limit` of them (all when undefined), out of the batches
 * that hold them (in offset order; a batch that ends at or before `from`, or starts at or after
 * `from + limit`, may be left out: a store reads only the batches a page needs). For stores that
 * keep a batch as one JSON array.
 *
 * @example
 * ```ts
 * chunksFrom([{ seq: 0, count: 2, json: '["a","b"]' }, { seq: 2, count: 1, json: '["c"]' }], 1, 1); // ['b']
 * ```
 */
export function chunksFrom(
  batches: readonly StoredChunkBatch[],
  from: number,
  limit?: number,
): JsonValue[] {
  const end = limit === undefined ? Number.POSITIVE_INFINITY : from + limit;
  const chunks: JsonValue[] = [];
  for (const batch of batches) {
    if (batch.seq + batch.count <= from) continue;
    if (batch.seq >= end) break;
    const values = JSON.parse(batch.json) as JsonValue[];
    const skip = Math.max(0, from - batch.seq);
    const stop = Math.min(values.length, end - batch.seq);
    for (let index = skip; index < stop; index += 1) chunks.push(values[index] as JsonValue);
  }
  return chunks;
}
