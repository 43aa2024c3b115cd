import {
  BranchNotFoundError,
  type BranchRecord,
  ChatNotFoundError,
  type ChatRecord,
  type CheckpointRecord,
  type EngineRecord,
  type JsonObject,
  type MessageNodeRecord,
  type StoredMessage,
} from '@ctxgraph/fragments-core';

// Everything the store keeps is plain data plus JSON text: message content, metadata and the
// context lane are held as the JSON text the kit's input checks produced, so a caller mutating
// what it passed in or what it got back can never reach the stored copy (every read parses a
// fresh object).

/** A message node. */
export interface NodeState {
  readonly id: string;
  /** `message.id`: the node id, or (message versions) another id the message carries. */
  messageId: string;
  readonly parentId: string | null;
  readonly sequence: number;
  json: string;
  /** The engine record's JSON text, or null when the node has none. */
  engineRecordJson: string | null;
  readonly createdAt: number;
  updatedAt: number;
}

/** A branch pointer. */
export interface BranchState {
  readonly name: string;
  headMessageId: string | null;
  readonly createdAt: number;
  updatedAt: number;
}

/** A checkpoint pointer. */
export interface CheckpointState {
  readonly name: string;
  readonly messageId: string;
  readonly createdAt: number;
}

/** A saved context lane (a chat has none until its first `saveContext`). */
export interface ContextLaneState {
  /** The JSON text of the fragments array, as the caller's values serialized. */
  readonly json: string;
  readonly revision: number;
  readonly updatedAt: number;
}

/** A chat and everything it owns. */
export interface ChatState {
  readonly id: string;
  readonly userId: string;
  title: string | null;
  metadataJson: string;
  activeBranch: string;
  revision: number;
  rewrittenAt: number;
  readonly createdAt: number;
  updatedAt: number;
  nextSequence: number;
  /** Insertion order is sequence order: a replace mutates a node, it is never re-inserted. */
  readonly nodes: Map<string, NodeState>;
  /**
   * The index behind `findMessageNodes`: message id → the nodes holding it, in sequence order
   * (oldest first). Kept by every write, prune and replace.
   */
  readonly byMessageId: Map<string, NodeState[]>;
  /** Insertion order is creation order (oldest first). */
  readonly branches: Map<string, BranchState>;
  /** Insertion order is creation order (oldest first); a replaced checkpoint moves to the end. */
  readonly checkpoints: Map<string, CheckpointState>;
  context: ContextLaneState | undefined;
}

/** Every chat of one store, by id. */
export type MemoryChats = Map<string, ChatState>;

/** The branch every chat starts with. */
export const MAIN_BRANCH = 'main';

/** The chat, or `ChatNotFoundError`. */
export function requireChat(chats: MemoryChats, chatId: string): ChatState {
  const chat = chats.get(chatId);
  if (chat === undefined) throw new ChatNotFoundError(chatId);
  return chat;
}

/** The branch, or `BranchNotFoundError`. */
export function requireBranch(chat: ChatState, name: string): BranchState {
  const branch = chat.branches.get(name);
  if (branch === undefined) throw new BranchNotFoundError(chat.id, name);
  return branch;
}

/** Now, but never before `previous`: `updatedAt` must not go back if the clock does. */
export function timeAfter(previous: number): number {
  return Math.max(Date.now(), previous);
}

/** Code-unit order, the same order the kit's `listChats` cursors compare with. */
export function compareIds(left: string, right: string): number {
  if (left === right) return 0;
  return left < right ? -1 : 1;
}

/** The chat as the contract returns it. */
export function chatRecord(chat: ChatState): ChatRecord {
  return {
    id: chat.id,
    userId: chat.userId,
    title: chat.title,
    metadata: JSON.parse(chat.metadataJson) as JsonObject,
    activeBranch: chat.activeBranch,
    revision: chat.revision,
    rewrittenAt: chat.rewrittenAt,
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt,
  };
}

/** Adds a node to the message-id index, keeping each list in sequence order. */
export function indexNode(chat: ChatState, node: NodeState): void {
  const list = chat.byMessageId.get(node.messageId);
  if (list === undefined) {
    chat.byMessageId.set(node.messageId, [node]);
    return;
  }
  // Usually appended (a new node has the highest sequence); a replace that changes the message
  // id may land in the middle.
  let index = list.length;
  while (index > 0 && (list[index - 1] as NodeState).sequence > node.sequence) index -= 1;
  list.splice(index, 0, node);
}

/** Removes a node from the message-id index. */
export function unindexNode(chat: ChatState, node: NodeState): void {
  const list = chat.byMessageId.get(node.messageId);
  if (list === undefined) return;
  const index = list.indexOf(node);
  if (index >= 0) list.splice(index, 1);
  if (list.length === 0) chat.byMessageId.delete(node.messageId);
}

/** A node as the contract returns it (a fresh copy of the message). */
export function nodeRecord(chatId: string, node: NodeState): MessageNodeRecord {
  return {
    chatId,
    id: node.id,
    parentId: node.parentId,
    sequence: node.sequence,
    message: JSON.parse(node.json) as StoredMessage,
    engineRecord:
      node.engineRecordJson === null ? null : (JSON.parse(node.engineRecordJson) as EngineRecord),
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
  };
}

/** A branch as the contract returns it. */
export function branchRecord(chatId: string, branch: BranchState): BranchRecord {
  return {
    chatId,
    name: branch.name,
    headMessageId: branch.headMessageId,
    createdAt: branch.createdAt,
    updatedAt: branch.updatedAt,
  };
}

/** A checkpoint as the contract returns it. */
export function checkpointRecord(chatId: string, checkpoint: CheckpointState): CheckpointRecord {
  return {
    chatId,
    name: checkpoint.name,
    messageId: checkpoint.messageId,
    createdAt: checkpoint.createdAt,
  };
}
