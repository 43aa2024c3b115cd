import {
  type BranchRecord,
  type ChatRecord,
  type CheckpointRecord,
  ContextConflictError,
  type ContextLaneRecord,
  type EngineRecord,
  type JsonObject,
  type JsonValue,
  type MessageNodeRecord,
  type StoredMessage,
  StoreError,
} from '@ctxgraph/fragments-core';
import { writtenNode } from '@ctxgraph/fragments-core/store-kit';
import type { SqlValue } from './sql-storage';

// Rows as SQLite returns them, and the records the contract returns. Every read parses a fresh
// object from the stored JSON text, so no caller can reach what is stored.

/** A row of `ctxgraph_chats`. */
export interface ChatRow {
  readonly id: string;
  readonly user_id: string;
  readonly title: string | null;
  readonly metadata: string;
  readonly active_branch: string;
  readonly revision: number;
  readonly rewritten_at: number;
  readonly next_sequence: number;
  readonly created_at: number;
  readonly updated_at: number;
}

/** A row of `ctxgraph_context_lanes`. */
export interface LaneRow {
  readonly chat_id: string;
  readonly fragments: string;
  readonly revision: number;
  readonly updated_at: number;
}

/** A row of `ctxgraph_nodes`. */
export interface NodeRow {
  readonly chat_id: string;
  readonly id: string;
  readonly message_id: string;
  readonly parent_id: string | null;
  readonly sequence: number;
  readonly message: string;
  readonly engine_record: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** A row of `ctxgraph_branches`. */
export interface BranchRow {
  readonly chat_id: string;
  readonly name: string;
  readonly head_message_id: string | null;
  readonly created_at: number;
  readonly updated_at: number;
}

/** A row of `ctxgraph_checkpoints`. */
export interface CheckpointRow {
  readonly chat_id: string;
  readonly name: string;
  readonly message_id: string;
  readonly created_at: number;
}

/**
 * The rows of a query as `Row`: the cast is the one place where the schema's column types meet
 * TypeScript, so every query selects whole rows of one table (`SELECT *`) or named aliases.
 */
export function rowsAs<Row>(rows: Record<string, SqlValue>[]): Row[] {
  return rows as unknown as Row[];
}

/** The chat as the contract returns it. */
export function chatRecord(row: ChatRow): ChatRecord {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    metadata: JSON.parse(row.metadata) as JsonObject,
    activeBranch: row.active_branch,
    revision: row.revision,
    rewrittenAt: row.rewritten_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A node as the contract returns it. */
export function nodeRecord(row: NodeRow): MessageNodeRecord {
  return {
    chatId: row.chat_id,
    id: row.id,
    parentId: row.parent_id,
    sequence: row.sequence,
    message: JSON.parse(row.message) as StoredMessage,
    engineRecord:
      row.engine_record === null ? null : (JSON.parse(row.engine_record) as EngineRecord),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * A node just written, for a commit's result: its message parsed from the written JSON the
 * first time it is read (the store kit's `writtenNode`): the engine keeps its own copy of what
 * it saved, so a turn does not pay parses nobody looks at.
 */
export function writtenNodeRecord(row: NodeRow): MessageNodeRecord {
  return writtenNode(
    row.chat_id,
    row.id,
    row.parent_id,
    row.sequence,
    row.message,
    row.engine_record === null ? null : (JSON.parse(row.engine_record) as EngineRecord),
    row.created_at,
    row.updated_at,
  );
}

/** The columns of `ctxgraph_nodes` a chain read selects, in the order of {@link chainNodeRecord}. */
export const CHAIN_COLUMNS =
  'id, parent_id, sequence, message, engine_record, created_at, updated_at';

/**
 * The record of a chain read's row (the columns of {@link CHAIN_COLUMNS}, as `raw()` returns
 * them): `chatId` is the chat the read is in.
 */
export function chainNodeRecord(chatId: string, row: SqlValue[]): MessageNodeRecord {
  const engineRecord = row[4] as string | null;
  return {
    chatId,
    id: row[0] as string,
    parentId: row[1] as string | null,
    sequence: row[2] as number,
    message: JSON.parse(row[3] as string) as StoredMessage,
    engineRecord: engineRecord === null ? null : (JSON.parse(engineRecord) as EngineRecord),
    createdAt: row[5] as number,
    updatedAt: row[6] as number,
  };
}

/** A branch as the contract returns it. */
export function branchRecord(row: BranchRow): BranchRecord {
  return {
    chatId: row.chat_id,
    name: row.name,
    headMessageId: row.head_message_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A checkpoint as the contract returns it. */
export function checkpointRecord(row: CheckpointRow): CheckpointRecord {
  return {
    chatId: row.chat_id,
    name: row.name,
    messageId: row.message_id,
    createdAt: row.created_at,
  };
}

/** The chat's context lane as the contract returns it (revision 0 and `[]` before the first save). */
export function laneRecord(chatId: string, row: LaneRow | undefined): ContextLaneRecord {
  if (row === undefined) return { chatId, fragments: [], revision: 0, updatedAt: null };
  return {
    chatId,
    fragments: JSON.parse(row.fragments) as JsonValue[],
    revision: row.revision,
    updatedAt: row.updated_at,
  };
}

/** Throws `ContextConflictError` when a save expected another revision. */
export function assertLaneRevision(
  chatId: string,
  row: LaneRow | undefined,
  expectedRevision: number | undefined,
): void {
  const currentRevision = row?.revision ?? 0;
  if (expectedRevision !== undefined && expectedRevision !== currentRevision)
    throw new ContextConflictError({ chatId, expectedRevision, currentRevision });
}

/** A row the schema promises (a chat's active branch, a chain's parent) is missing. */
export function missingRow(label: string, what: string): StoreError {
  return new StoreError(`${label}: ${what} is missing; the object's data is inconsistent.`);
}
