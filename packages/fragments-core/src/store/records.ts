import type { JsonObject } from '../json';

/**
 * A stored conversation message: the AI SDK `UIMessage` JSON as `codec.encode()` produced it
 * (a `UIMessage` is assignable to it). Stores keep the whole object as opaque JSON, any other
 * keys included, and give it back unchanged.
 */
export interface StoredMessage {
  /**
   * The message id: equal to the node id, except for a later version of the message, where
   * several nodes (versions on sibling branches) hold the same message id.
   */
  readonly id: string;
  /** `'user'`, `'assistant'` or `'system'`. */
  readonly role: string;
  /** The message parts. */
  readonly parts: readonly unknown[];
  /** Message metadata, when the message has any. */
  readonly metadata?: unknown;
}

/**
 * The engine's own record of a message node (its recorded usage, its compaction or branch-summary
 * record, its tombstone record): opaque JSON that only the engine writes, kept beside the message
 * and never inside it. Every store keeps it byte-for-byte like the message and gives it back as
 * {@link MessageNodeRecord.engineRecord}; the engine never takes one from an app or a chat client.
 */
export type EngineRecord = JsonObject;

/** A chat: one conversation graph, owned by one user. */
export interface ChatRecord {
  /** The chat id. */
  readonly id: string;
  /** The owner. Only this user may open the chat. */
  readonly userId: string;
  /** A human title, or null. */
  readonly title: string | null;
  /** Free-form JSON metadata (merged by `updateChat`). */
  readonly metadata: JsonObject;
  /** The branch a newly opened engine works on (where the last rewind, restore or switch left it). */
  readonly activeBranch: string;
  /**
   * The chat's revision: the number of message writes (`commit`, `append`) so far, up by exactly
   * one with each. When it has not changed, no message of the chat has. (A message's *versions*
   * are something else: the nodes of an edited message, see `CommitMessage.newVersion`.)
   */
  readonly revision: number;
  /**
   * The `revision` of the last commit that replaced an existing node's content in place (0 when
   * none has). A reader that cached nodes up to revision R must re-read them when this is above R;
   * when it is not, only new nodes can have appeared.
   */
  readonly rewrittenAt: number;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** Milliseconds since the epoch; moves on every write to the chat. */
  readonly updatedAt: number;
}

/** A message node of the graph. */
export interface MessageNodeRecord {
  /** The chat it belongs to. Ids are scoped to their chat. */
  readonly chatId: string;
  /**
   * The node id, unique in the chat: the message id, except for a node of a later version of the
   * message, whose id differs from `message.id`.
   */
  readonly id: string;
  /** The previous message in the conversation, or null for a root. */
  readonly parentId: string | null;
  /**
   * A per-chat number that increases with every inserted node: it fixes order, never timestamps.
   * Replacing a node's content keeps its sequence.
   */
  readonly sequence: number;
  /** The message. */
  readonly message: StoredMessage;
  /**
   * The engine's record of the node ({@link EngineRecord}), or null when it has none. Every read
   * returns it (`getChain`, `getMessage`, `findMessageNodes`, `getGraph`, the nodes of a commit or
   * append); a reader treats an absent field as null.
   */
  readonly engineRecord?: EngineRecord | null;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** Milliseconds since the epoch; moves when the content is replaced. */
  readonly updatedAt: number;
}

/** A branch: a name and the node at its head. */
export interface BranchRecord {
  /** The chat it belongs to. */
  readonly chatId: string;
  /** `main`, `main-v2`, … */
  readonly name: string;
  /** The newest node of the branch, or null while it is empty. */
  readonly headMessageId: string | null;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** Milliseconds since the epoch; moves when the head moves. */
  readonly updatedAt: number;
}

/** A checkpoint: a name for a node, to come back to later. */
export interface CheckpointRecord {
  /** The chat it belongs to. */
  readonly chatId: string;
  /** The name. */
  readonly name: string;
  /** The node it points at. */
  readonly messageId: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
}

/** One page of a listing. */
export interface Page<T> {
  /** The items of this page. */
  readonly items: readonly T[];
  /** Pass it as `cursor` to get the next page; null on the last page. */
  readonly nextCursor: string | null;
}

/** The whole graph of a chat, for inspection and visualization. */
export interface ChatGraph {
  /** The chat. */
  readonly chat: ChatRecord;
  /** Every node, in sequence order. */
  readonly nodes: readonly MessageNodeRecord[];
  /** Every branch, oldest first. */
  readonly branches: readonly BranchRecord[];
  /** Every checkpoint, oldest first. */
  readonly checkpoints: readonly CheckpointRecord[];
}
