import type {
  AppendResult,
  BranchRecord,
  ChatRecord,
  CheckpointRecord,
  EngineRecord,
  JsonObject,
  MessageNodeRecord,
  StoredMessage,
} from '@ctxgraph/fragments-core';
import { StoreError } from '@ctxgraph/fragments-core';
import { type PreparedCommitMessage, writtenNode } from '@ctxgraph/fragments-core/store-kit';

/** A query parameter the store binds. */
export type Parameter = string | number | boolean | null | readonly (string | null)[];
/** A row as postgres.js returns it with `.values()`. */
export type Row = readonly unknown[];

export const CHAT_COLUMNS =
  'c.chat_id, c.user_id, c.title, c.metadata::text, c.active_branch, c.version, c.rewritten_at, c.created_at, c.updated_at';
export const BRANCH_COLUMNS = 'b.chat_id, b.name, b.head_message_id, b.created_at, b.updated_at';
export const MESSAGE_COLUMNS =
  'm.chat_id, m.message_id, m.parent_id, m.sequence, m.message::text, m.created_at, m.updated_at, m.engine_record::text';
export const CHECKPOINT_COLUMNS = 'k.chat_id, k.name, k.message_id, k.created_at';
/** How many columns `CHAT_COLUMNS` has: the offset of what follows them in a row. */
export const CHAT_WIDTH = 9;

/** How often a call retries on its own after a race it can settle by itself (see `commit`). */
export const MAX_ATTEMPTS = 4;

export function text(value: unknown): string {
  return String(value);
}

export function optionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

export function integer(value: unknown): number {
  return Number(value);
}

export function chatFrom(row: Row, offset = 0): ChatRecord {
  return {
    id: text(row[offset]),
    userId: text(row[offset + 1]),
    title: optionalText(row[offset + 2]),
    metadata: JSON.parse(text(row[offset + 3])) as JsonObject,
    activeBranch: text(row[offset + 4]),
    revision: integer(row[offset + 5]), // the `version` column holds the chat's revision
    rewrittenAt: integer(row[offset + 6]),
    createdAt: integer(row[offset + 7]),
    updatedAt: integer(row[offset + 8]),
  };
}

export function branchFrom(row: Row, offset = 0): BranchRecord {
  return {
    chatId: text(row[offset]),
    name: text(row[offset + 1]),
    headMessageId: optionalText(row[offset + 2]),
    createdAt: integer(row[offset + 3]),
    updatedAt: integer(row[offset + 4]),
  };
}

export function messageFrom(row: Row, offset = 0): MessageNodeRecord {
  return {
    chatId: text(row[offset]),
    id: text(row[offset + 1]),
    parentId: optionalText(row[offset + 2]),
    sequence: integer(row[offset + 3]),
    message: JSON.parse(text(row[offset + 4])) as StoredMessage,
    engineRecord: engineRecordFrom(row[offset + 7]),
    createdAt: integer(row[offset + 5]),
    updatedAt: integer(row[offset + 6]),
  };
}

/** The engine record of a node from its JSON text, or null when it has none. */
function engineRecordFrom(value: unknown): EngineRecord | null {
  return value === null || value === undefined ? null : (JSON.parse(text(value)) as EngineRecord);
}

export function checkpointFrom(row: Row, offset = 0): CheckpointRecord {
  return {
    chatId: text(row[offset]),
    name: text(row[offset + 1]),
    messageId: text(row[offset + 2]),
    createdAt: integer(row[offset + 3]),
  };
}

/**
 * The result of a write statement that wrote. Its first row carries the head, the revision, the
 * chat's last sequence and the number of new nodes; its rows carry the nodes it replaced (each
 * kept its place). The new nodes are not sent back: they are the write's messages that were not
 * replaced, in order, taking the sequences up to the last one, each the child of the one before
 * (the first, of the previous head), created at `now`, with the record given.
 */
export function writeResult(
  chatId: string,
  prepared: readonly PreparedCommitMessage[],
  rows: readonly Row[],
  now: number,
): AppendResult {
  const first = rows[0] as Row;
  const replaced = new Map<string, Row>();
  for (const row of rows) if (row[3] !== null) replaced.set(text(row[3]), row);
  const inserted = integer(first[14]);
  if (integer(first[15]) !== inserted || inserted + replaced.size !== prepared.length)
    throw new StoreError(
      `commit: PostgreSQL reported ${inserted} new and ${replaced.size} replaced messages for a write of ${prepared.length}.`,
    );
  let sequence = integer(first[13]) - inserted;
  let parentId = optionalText(first[9]);
  const nodes = prepared.map((message): MessageNodeRecord => {
    const row = replaced.get(message.id);
    // The message parsed when first read; the record is what the row holds: the one given, or
    // the one a replaced node kept.
    if (row !== undefined)
      return writtenNode(
        chatId,
        message.id,
        optionalText(row[4]),
        integer(row[5]),
        message.json,
        engineRecordFrom(row[12]),
        integer(row[6]),
        integer(row[7]),
      );
    sequence += 1;
    const node = writtenNode(
      chatId,
      message.id,
      parentId,
      sequence,
      message.json,
      engineRecordFrom(message.engineRecordJson),
      now,
      now,
    );
    parentId = message.id;
    return node;
  });
  return {
    headMessageId: optionalText(first[2]),
    revision: integer(first[0]),
    rewrittenAt: integer(first[1]),
    nodes,
    previousHeadId: optionalText(first[9]),
  };
}

export function isUniqueViolationOf(error: unknown, constraint: string): boolean {
  const shape = error as { code?: unknown; constraint_name?: unknown } | null;
  return (
    typeof shape === 'object' &&
    shape !== null &&
    shape.code === '23505' &&
    shape.constraint_name === constraint
  );
}

export function isRetryableRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}
