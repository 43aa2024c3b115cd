import type { CommitMessage } from './context-store';
import type { EngineRecord, MessageNodeRecord, StoredMessage } from './records';

// The engine keeps its own per-node data (recorded usage, compaction, branch summary, tombstone)
// in the node's engine record (`MessageNodeRecord.engineRecord`), beside the message and never
// inside it, so nothing an app or a chat client puts in a message can create or change it. Data
// written by versions before the field existed kept the record in the stored message's
// `metadata.ctxgraph` instead: `engineRecordOf` reads either, and `splitEngineRecord` moves such
// a record out of the message, as every engine read does (the read-time upgrade).

/**
 * The key of a message's `metadata` reserved for the engine's record in data stored by earlier
 * versions, which kept the record there. The engine drops it from every message an app sets and
 * never shows it in a message it hands out.
 */
export const CTXGRAPH_METADATA_KEY = 'ctxgraph';

/** What {@link engineRecordOf} and the record readers need of a node. */
export type EngineRecordSource = Pick<MessageNodeRecord, 'id' | 'message' | 'engineRecord'> & {
  /** The node's parent, for a provider compaction that names no boundary (`boundaryId: ''`). */
  readonly parentId?: string | null;
};

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The engine record of a node: its `engineRecord`, or, when it has none, the record an earlier
 * version kept in the message's `metadata.ctxgraph`. Null when the node has neither.
 */
export function engineRecordOf(node: EngineRecordSource): EngineRecord | null {
  if (isJsonObject(node.engineRecord)) return node.engineRecord as EngineRecord;
  const metadata = node.message.metadata;
  if (!isJsonObject(metadata) || !Object.hasOwn(metadata, CTXGRAPH_METADATA_KEY)) return null;
  const own = metadata[CTXGRAPH_METADATA_KEY];
  return isJsonObject(own) ? (own as EngineRecord) : null;
}

/**
 * The message without the reserved `metadata.ctxgraph` key (`metadata` left out when nothing else
 * is in it); the same object when it has no such key.
 */
export function withoutEngineMetadata<T extends { readonly metadata?: unknown }>(message: T): T {
  const metadata = message.metadata;
  if (!isJsonObject(metadata) || !Object.hasOwn(metadata, CTXGRAPH_METADATA_KEY)) return message;
  const rest: Record<string, unknown> = {};
  let kept = 0;
  for (const key of Object.keys(metadata)) {
    if (key === CTXGRAPH_METADATA_KEY) continue;
    // defineProperty: a key such as `__proto__` stays an own key, as it was.
    Object.defineProperty(rest, key, {
      value: metadata[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
    kept += 1;
  }
  const { metadata: _dropped, ...others } = message as T & { metadata?: unknown };
  return (kept === 0 ? others : { ...others, metadata: rest }) as T;
}

/**
 * A node as the engine reads it: the record beside the message. A record kept in the message's
 * `metadata.ctxgraph` (data stored by an earlier version) becomes the node's `engineRecord`, and
 * the key leaves the message. A node with nothing to move is returned as it is.
 */
export function splitEngineRecord(node: MessageNodeRecord): MessageNodeRecord {
  const message = withoutEngineMetadata(node.message);
  if (message === node.message) return node;
  return { ...node, message, engineRecord: engineRecordOf(node) };
}

/**
 * What a compaction node records in its engine record's `compaction`: the span it replaces and
 * what that saved. The node sits on the branch after the span (and after the messages it keeps);
 * a resolve that meets it sends its summary in place of the span.
 */
export interface CompactionRecord {
  /** The format of this record. */
  readonly version: 1;
  /**
   * The last node the span covers: the summary replaces everything up to and including it.
   * A provider compaction (`provider` set) may name none (`''`): its boundary is then its
   * parent, the last node its call sent. The engine writes that when the reply is saved in one
   * write with that node and the store allocates the node's id (a new version of a message,
   * `CommitMessage.newVersion`); {@link readCompaction} gives such a record with the parent's id.
   */
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
  /**
   * Set when the provider compacted the conversation on its side (Anthropic's compaction block,
   * OpenAI's compaction item) and the reply that carries the compaction is this node: what the
   * provider said and what the compaction itself cost. Absent for the engine's own `compact()`.
   */
  readonly provider?: ProviderCompactionRecord;
}

/**
 * The provider side of a compaction node made from a reply (see {@link CompactionRecord.provider}):
 * the node is the reply itself, its boundary the last node the call sent, and the part of the
 * reply that holds the compaction goes back to the provider with the reply on every later call.
 */
export interface ProviderCompactionRecord {
  /** Which provider compacted: `'anthropic'` or `'openai'`. */
  readonly provider: string;
  /** The index, among the reply's parts, of the part that holds the compaction. */
  readonly partIndex: number;
  /** The provider's id of the compaction item (OpenAI's `itemId`), when it has one. */
  readonly itemId?: string;
  /**
   * Anthropic: the compaction block's text, as the call's response produced it. The engine sends
   * the block back from here, never from the reply's parts (a chat client can change those).
   * Absent in records written by earlier versions, which kept it only in the reply.
   */
  readonly text?: string;
  /**
   * OpenAI: the item's `encryptedContent`, as the call's response produced it (sent back when
   * responses are not stored). Like `text`, the engine sends it from here, never from the reply.
   */
  readonly encryptedContent?: string;
  /**
   * The compaction's own share of the call's usage (Anthropic's `usage.iterations` entry of type
   * `'compaction'`), already included in the reply's recorded usage: never added to totals again.
   */
  readonly usage?: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly cacheReadTokens: number;
    readonly cacheWriteTokens: number;
  };
}

/**
 * What a branch summary records in its engine record's `branchSummary`: a node that brings the
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

/**
 * The compaction record of a node, or null when it is not a compaction node (or its record is not
 * one this version reads: then it is an ordinary message). A provider compaction that names no
 * boundary comes with its parent's id as `boundaryId` (null without a parent: pass the node's
 * `parentId`).
 */
export function readCompaction(node: EngineRecordSource): CompactionRecord | null {
  const record = engineRecordOf(node)?.compaction;
  if (typeof record !== 'object' || record === null) return null;
  const candidate = record as Partial<CompactionRecord>;
  if (
    candidate.version !== 1 ||
    typeof candidate.boundaryId !== 'string' ||
    candidate.boundaryId === node.id ||
    (candidate.previousCompactionId !== null && typeof candidate.previousCompactionId !== 'string')
  ) {
    return null;
  }
  if (candidate.boundaryId !== '') return candidate as CompactionRecord;
  const parentId = node.parentId;
  if (typeof candidate.provider !== 'object' || candidate.provider === null) return null;
  if (typeof parentId !== 'string' || parentId === '') return null;
  return { ...(candidate as CompactionRecord), boundaryId: parentId };
}

/** The branch-summary record of a node, or null when it is not a branch summary. */
export function readBranchSummary(node: EngineRecordSource): BranchSummaryRecord | null {
  const record = engineRecordOf(node)?.branchSummary;
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
 * The commit entry of a compaction node: a message with one text part (the summary as sent), and
 * the record in the node's engine record (`{ compaction }`), beside the message.
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
export function compactionMessage(input: CompactionMessageInput): CommitMessage {
  return {
    id: input.id,
    message: {
      id: input.id,
      role: input.role ?? 'user',
      parts: [{ type: 'text', text: input.text }],
    },
    engineRecord: { compaction: input.compaction as unknown as EngineRecord },
  };
}

/**
 * What a dropped message records in its engine record's `dropped`: the node is a tombstone whose
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

/** The dropped record of a node, or null when it is not a tombstone. */
export function readDropped(node: EngineRecordSource): DroppedRecord | null {
  const record = engineRecordOf(node)?.dropped;
  if (typeof record !== 'object' || record === null) return null;
  const candidate = record as Partial<DroppedRecord>;
  if (candidate.version !== 1 || typeof candidate.compactionId !== 'string') return null;
  return candidate as DroppedRecord;
}

/**
 * The commit entry of the tombstone that replaces a dropped node in place: same id and role, no
 * parts, and `{ dropped }` as its engine record. Of the original, only the recorded usage of the
 * model call (its engine record's `usage`, so cost totals stay true) is kept, as it was.
 *
 * @example
 * ```ts
 * const tombstone = droppedMessage(
 *   { id: 'm3', message: { id: 'm3', role: 'user', parts: [{ type: 'text', text: 'long question' }] } },
 *   { version: 1, compactionId: 'compaction-1', droppedAt: Date.now() },
 * );
 * ```
 */
export function droppedMessage(
  original: EngineRecordSource,
  dropped: DroppedRecord,
): CommitMessage {
  const usage = engineRecordOf(original)?.usage;
  // The message keeps its own id (a version's node id may differ from it: message versions).
  const message: StoredMessage = {
    id: original.message.id,
    role: original.message.role,
    parts: [],
  };
  return {
    id: original.id,
    message,
    engineRecord: {
      dropped: dropped as unknown as EngineRecord,
      ...(usage === undefined ? {} : { usage }),
    },
  };
}
