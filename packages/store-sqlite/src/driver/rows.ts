import type {
  BranchRecord,
  ChatRecord,
  CheckpointRecord,
  EngineRecord,
  JsonObject,
  MessageNodeRecord,
  StoredMessage,
} from '@ctxgraph/fragments-core';
import { writtenNode as lazyNode } from '@ctxgraph/fragments-core/store-kit';

// The rows the store's statements return, by column name, and the records made of them.

/** The branch every new chat starts on. */
export const MAIN_BRANCH = 'main';

/** A row of `<prefix>chats`. */
export interface ChatRow {
  id: string;
  user_id: string;
  title: string | null;
  metadata: string;
  active_branch: string;
  version: number;
  rewritten_at: number;
  created_at: number;
  updated_at: number;
}

/** A row of `<prefix>branches`. */
export interface BranchRow {
  chat_id: string;
  name: string;
  head_message_id: string | null;
  created_at: number;
  updated_at: number;
}

/** A row of `<prefix>checkpoints`. */
export interface CheckpointRow {
  chat_id: string;
  name: string;
  message_id: string;
  created_at: number;
}

/** The columns of `<prefix>messages` a record is made of. */
export interface MessageRow {
  id: string;
  parent_id: string | null;
  sequence: number;
  payload: string;
  /** The engine record's JSON text, or null when the node has none. */
  engine_record: string | null;
  created_at: number;
  updated_at: number;
}

/** The columns of `messages` read from a row in the statement that selects them all. */
export const MESSAGE_COLUMNS =
  'id, parent_id, sequence, payload, engine_record, created_at, updated_at';

/** A chat record of its row. */
export function chatRecord(row: ChatRow): ChatRecord {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    metadata: JSON.parse(row.metadata) as JsonObject,
    activeBranch: row.active_branch,
    // The `version` column holds the chat's revision (column names stay as shipped).
    revision: row.version,
    rewrittenAt: row.rewritten_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A branch record of its row. */
export function branchRecord(row: BranchRow): BranchRecord {
  return {
    chatId: row.chat_id,
    name: row.name,
    headMessageId: row.head_message_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A checkpoint record of its row. */
export function checkpointRecord(row: CheckpointRow): CheckpointRecord {
  return {
    chatId: row.chat_id,
    name: row.name,
    messageId: row.message_id,
    createdAt: row.created_at,
  };
}

/** A message node record of its row (the payload parsed now). */
export function messageRecord(chatId: string, row: MessageRow): MessageNodeRecord {
  return {
    chatId,
    id: row.id,
    parentId: row.parent_id,
    sequence: row.sequence,
    message: JSON.parse(row.payload) as StoredMessage,
    engineRecord:
      row.engine_record === null ? null : (JSON.parse(row.engine_record) as EngineRecord),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A node just written (see the store kit's `writtenNode`), its engine record from its JSON. */
export function writtenNode(
  chatId: string,
  id: string,
  parentId: string | null,
  sequence: number,
  json: string,
  engineRecordJson: string | null,
  createdAt: number,
  updatedAt: number,
): MessageNodeRecord {
  return lazyNode(
    chatId,
    id,
    parentId,
    sequence,
    json,
    engineRecordJson === null ? null : (JSON.parse(engineRecordJson) as EngineRecord),
    createdAt,
    updatedAt,
  );
}
