import type { StoredMessage } from './records';

// ctxgraph keeps its own per-message data in a UIMessage's `metadata`, under the key `ctxgraph`
// (an object). A compaction node and a branch summary are ordinary message nodes marked there, so
// any store that keeps a message's JSON as it was given (what the v1 conformance kit proves)
// carries them without knowing they exist.

/** The key of a message's `metadata` under which ctxgraph keeps its own data. */
export const CTXGRAPH_METADATA_KEY = 'ctxgraph';

/**
 * What a compaction node records in `metadata.ctxgraph.compaction`: the span it replaces and
 * what that saved. The node sits on the branch after the span (and after the messages it keeps);
 * a resolve that meets it sends its summary in place of the span.
 */
export interface CompactionRecord {
  /** The format of this record. */
  readonly version: 1;
  /** The last node the span covers: the summary replaces everything up to and including it. */
  readonly boundaryId: string;
  /**
   * Where the span starts: the id of the compaction node whose view it summarized (its summary
   * is the first message of the span: a compaction of a compaction), or null when it starts at
   * the root.
   */
  readonly previousCompactionId: string | null;
  /** How many messages of the conversation as it was sent the summary replaces. */
  readonly coveredMessages: number;
  /** Token counts, by `tokenizer`. */
  readonly tokens: {
    /** The tokenizer that counted (its `Tokenizer.id`: `'o200k_base'`, `'estimate:4.00'`, …). */
    readonly tokenizer: string;
    /** Tokens of the span's messages. */
    readonly covered: number;
    /** Tokens of the summary message. */
    readonly summary: number;
    /** `covered - summary`: what each resolve after the node no longer sends. */
    readonly saved: number;
  };
  /** Milliseconds since the epoch when the compaction was made. */
  readonly createdAt: number;
}

/**
 * What a branch summary records in `metadata.ctxgraph.branchSummary`: a node that brings the
 * conclusion of another branch onto this one (`switchBranch(name, { carry })`). It is an ordinary
 * message at its place in the chain; it replaces nothing.
 */
export interface BranchSummaryRecord {
  /** The format of this record. */
  readonly version: 1;
  /** The branch it summarizes. */
  readonly fromBranch: string;
  /** That branch's head when it was summarized (null when it was empty). */
  readonly fromHeadId: string | null;
  /** How many messages of that branch's conversation the summary covers. */
  readonly coveredMessages: number;
  /** Milliseconds since the epoch when the summary was made. */
  readonly createdAt: number;
}

/** The `metadata.ctxgraph` object of a stored message, or undefined when it has none. */
function ctxgraphMetadata(message: StoredMessage): Record<string, unknown> | undefined {
  const metadata = message.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return;
  const own = (metadata as Record<string, unknown>)[CTXGRAPH_METADATA_KEY];
  if (typeof own !== 'object' || own === null || Array.isArray(own)) return;
  return own as Record<string, unknown>;
}

/**
 * The compaction record of a stored message, or null when the message is not a compaction node
 * (or its record is not one this version reads: then it is an ordinary message).
 */
export function readCompaction(message: StoredMessage): CompactionRecord | null {
  const record = ctxgraphMetadata(message)?.compaction;
  if (typeof record !== 'object' || record === null) return null;
  const candidate = record as Partial<CompactionRecord>;
  if (
    candidate.version !== 1 ||
    typeof candidate.boundaryId !== 'string' ||
    candidate.boundaryId === '' ||
    candidate.boundaryId === message.id ||
    (candidate.previousCompactionId !== null && typeof candidate.previousCompactionId !== 'string')
  ) {
    return null;
  }
  return candidate as CompactionRecord;
}

/** The branch-summary record of a stored message, or null when it is not a branch summary. */
export function readBranchSummary(message: StoredMessage): BranchSummaryRecord | null {
  const record = ctxgraphMetadata(message)?.branchSummary;
  if (typeof record !== 'object' || record === null) return null;
  const candidate = record as Partial<BranchSummaryRecord>;
  if (candidate.version !== 1 || typeof candidate.fromBranch !== 'string') return null;
  return candidate as BranchSummaryRecord;
}

/** Input of {@link compactionMessage}. */
export interface CompactionMessageInput {
  /** The node id. */
  readonly id: string;
  /** The text sent in place of the span. */
  readonly text: string;
  /** What the node records. */
  readonly compaction: CompactionRecord;
  /** @default 'user' */
  readonly role?: 'user' | 'system';
}

/**
 * The stored message of a compaction node: one text part (the summary as sent) and the record
 * in `metadata.ctxgraph.compaction`.
 *
 * @example
 * ```ts
 * const message = compactionMessage({
 *   id: 'compaction-1',
 *   text: 'Summary of the conversation so far: …',
 *   compaction: { version: 1, boundaryId: 'm40', previousCompactionId: null, coveredMessages: 40,
 *     tokens: { tokenizer: 'o200k_base', covered: 5200, summary: 180, saved: 5020 },
 *     createdAt: Date.now() },
 * });
 * ```
 */
export function compactionMessage(input: CompactionMessageInput): StoredMessage {
  return {
    id: input.id,
    role: input.role ?? 'user',
    parts: [{ type: 'text', text: input.text }],
    metadata: { [CTXGRAPH_METADATA_KEY]: { compaction: input.compaction } },
  };
}

/**
 * What a dropped message records in `metadata.ctxgraph.dropped`: the node is a tombstone whose
 * content was reclaimed because a compaction covers it on every branch and checkpoint that reaches
 * it (the engine's `prune({ compacted: 'drop' })`). It keeps its id, parent and sequence; it has
 * no parts and is never shown.
 */
export interface DroppedRecord {
  /** The format of this record. */
  readonly version: 1;
  /** The compaction node whose summary stands in for it. */
  readonly compactionId: string;
  /** Milliseconds since the epoch when its content was dropped. */
  readonly droppedAt: number;
}

/** The dropped record of a stored message, or null when the message is not a tombstone. */
export function readDropped(message: StoredMessage): DroppedRecord | null {
  const record = ctxgraphMetadata(message)?.dropped;
  if (typeof record !== 'object' || record === null) return null;
  const candidate = record as Partial<DroppedRecord>;
  if (candidate.version !== 1 || typeof candidate.compactionId !== 'string') return null;
  return candidate as DroppedRecord;
}

/**
 * The tombstone that replaces a dropped message in place: same id and role, no parts, and the
 * record in `metadata.ctxgraph.dropped`. Of the original, only `metadata.ctxgraph.usage` (the
 * recorded usage of the model call, so cost totals stay true) is kept, as it was.
 *
 * @example
 * ```ts
 * const tombstone = droppedMessage(
 *   { id: 'm3', role: 'user', parts: [{ type: 'text', text: 'long question' }] },
 *   { version: 1, compactionId: 'compaction-1', droppedAt: Date.now() },
 * );
 * ```
 */
export function droppedMessage(original: StoredMessage, dropped: DroppedRecord): StoredMessage {
  const usage = ctxgraphMetadata(original)?.usage;
  return {
    id: original.id,
    role: original.role,
    parts: [],
    metadata: { [CTXGRAPH_METADATA_KEY]: { dropped, ...(usage === undefined ? {} : { usage }) } },
  };
}
