import {
  type MessageNodeRecord,
  readCompaction,
  type ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';

/**
 * A persisted message the engine holds: the node and its validated message (or why not). A
 * tombstone (a dropped message: its engine record has `dropped`) has neither message nor error.
 */
export interface ChainEntry {
  readonly node: MessageNodeRecord;
  readonly message: UIMessage | null;
  readonly error: ValidationError | null;
}

/**
 * The active branch's chain as the engine last read it, oldest first, with an id index and the
 * list of valid messages kept up to date incrementally, so that appending a turn or resolving
 * again costs the same whatever the length of the history.
 *
 * The index by node id (and by message id, for the nodes of message versions) is built the first
 * time a lookup needs it, from where it stopped: a cold read that only shows the conversation
 * pays for no index, and once built it follows each append, replacement and cut.
 */
export class ChainCache {
  #entries: ChainEntry[] = [];
  #messages: UIMessage[] = [];
  /** Per entry, its position among the valid messages, or -1 (beside `#entries`). */
  #messageIndex: number[] = [];
  /** Node id → position, for the first `#indexed` entries. */
  readonly #positions = new Map<string, number>();
  /**
   * Message id → node id, for the indexed nodes whose message id is not their node id (message
   * versions); a node under its message's own id is found through `#positions`. A message id
   * appears at most once along a path (the engine keeps it so), so this is what "the message M
   * of this path" means.
   */
  readonly #versions = new Map<string, string>();
  /** How many entries, from the oldest, the two maps hold. */
  #indexed = 0;
  #invalid = 0;
  /** Positions of the compaction nodes among the entries, oldest first. */
  #compactions: number[] = [];

  /** The entries, oldest first. Read-only for callers. */
  get entries(): readonly ChainEntry[] {
    return this.#entries;
  }

  /** The valid messages, oldest first. Read-only for callers. */
  get messages(): readonly UIMessage[] {
    return this.#messages;
  }

  /** How many entries failed validation. */
  get invalidCount(): number {
    return this.#invalid;
  }

  /** The id of the newest entry, or null when empty. */
  get lastId(): string | null {
    const entries = this.#entries;
    const last = entries[entries.length - 1];
    return last === undefined ? null : last.node.id;
  }

  /** Replaces everything. */
  reset(entries: readonly ChainEntry[]): void {
    this.#entries = [];
    this.#messages = [];
    this.#messageIndex = [];
    this.#positions.clear();
    this.#versions.clear();
    this.#indexed = 0;
    this.#invalid = 0;
    this.#compactions = [];
    this.append(entries);
  }

  /** Adds entries after the newest one. */
  append(entries: readonly ChainEntry[]): void {
    const all = this.#entries;
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as ChainEntry;
      if (readCompaction(entry.node) !== null) this.#compactions.push(all.length);
      all.push(entry);
      if (entry.message) {
        this.#messageIndex.push(this.#messages.length);
        this.#messages.push(entry.message);
      } else {
        this.#messageIndex.push(-1);
        // Without message and error: a dropped message's tombstone, never shown.
        if (entry.error !== null) this.#invalid += 1;
      }
    }
  }

  /** True when a node with this id is in the chain. */
  has(id: string): boolean {
    return this.#position(id) !== undefined;
  }

  /** The id of the node of this chain that holds message `messageId`, or undefined. */
  nodeIdOf(messageId: string): string | undefined {
    if (this.#indexed !== this.#entries.length) this.#index();
    const version = this.#versions.get(messageId);
    const own = this.#positions.get(messageId);
    const ownHolds =
      own !== undefined && messageIdOf(this.#entries[own] as ChainEntry) === messageId;
    if (version === undefined) return ownHolds ? messageId : undefined;
    // Should both hold it, the newer one, as a path's later write of a message id wins.
    if (ownHolds && (this.#positions.get(version) ?? -1) < (own as number)) return messageId;
    return version;
  }

  /** The node with this id, when it is in the chain. */
  node(id: string): MessageNodeRecord | undefined {
    const position = this.#position(id);
    return position === undefined ? undefined : this.#entries[position]?.node;
  }

  /** Replaces the entry with the same id in place; false when there is none. */
  replace(entry: ChainEntry): boolean {
    const id = entry.node.id;
    const position = this.#position(id);
    if (position === undefined) return false;
    const previous = this.#entries[position] as ChainEntry;
    this.#entries[position] = entry;
    const previousMessageId = messageIdOf(previous);
    const messageId = messageIdOf(entry);
    if (previousMessageId !== messageId) {
      if (this.#versions.get(previousMessageId) === id) this.#versions.delete(previousMessageId);
      if (messageId !== id) this.#versions.set(messageId, id);
    }
    const messagePosition = this.#messageIndex[position] as number;
    const compactionBefore = readCompaction(previous.node) !== null;
    const compactionNow = readCompaction(entry.node) !== null;
    if (
      previous.message &&
      entry.message &&
      messagePosition >= 0 &&
      compactionBefore === compactionNow
    ) {
      this.#messages[messagePosition] = entry.message;
    } else {
      // Validity (or being a compaction node) changed: rare, so rebuild the lists.
      this.reset(this.#entries.slice());
    }
    return true;
  }

  /**
   * Keeps the chain up to and including `id`; false (and unchanged) when `id` is not in it. Costs
   * as much as the number of entries dropped.
   */
  truncateAfter(id: string): boolean {
    const position = this.#position(id);
    if (position === undefined) return false;
    let droppedMessages = 0;
    for (let index = position + 1; index < this.#entries.length; index += 1) {
      const entry = this.#entries[index] as ChainEntry;
      const nodeId = entry.node.id;
      this.#positions.delete(nodeId);
      const messageId = messageIdOf(entry);
      if (messageId !== nodeId && this.#versions.get(messageId) === nodeId)
        this.#versions.delete(messageId);
      if (entry.message) droppedMessages += 1;
      else if (entry.error !== null) this.#invalid -= 1;
    }
    this.#entries.length = position + 1;
    this.#messageIndex.length = position + 1;
    this.#indexed = position + 1;
    this.#messages.length -= droppedMessages;
    while ((this.#compactions.at(-1) ?? -1) > position) this.#compactions.pop();
    return true;
  }

  /** Position of an entry, by node id. */
  position(id: string): number | undefined {
    return this.#position(id);
  }

  /** True when the cache holds the chain from its root (a cold read may stop at a compaction's boundary). */
  get startsAtRoot(): boolean {
    return this.#entries.length === 0 || this.#entries[0]?.node.parentId === null;
  }

  /** Positions of the compaction nodes among the entries, oldest first. Read-only for callers. */
  get compactionPositions(): readonly number[] {
    return this.#compactions;
  }

  /** Position of a message among the valid messages, by its node id. */
  messagePosition(id: string): number | undefined {
    const position = this.#position(id);
    if (position === undefined) return undefined;
    const messagePosition = this.#messageIndex[position] as number;
    return messagePosition >= 0 ? messagePosition : undefined;
  }

  /** The newest entry whose message role is `role`, searching from the end. */
  lastIdWithRole(role: string): string | undefined {
    for (let index = this.#entries.length - 1; index >= 0; index -= 1) {
      const node = this.#entries[index]?.node;
      if (node?.message.role === role) return node.id;
    }
    return undefined;
  }

  #position(id: string): number | undefined {
    if (this.#indexed !== this.#entries.length) this.#index();
    return this.#positions.get(id);
  }

  /** Brings the index up to the newest entry. */
  #index(): void {
    const entries = this.#entries;
    for (let index = this.#indexed; index < entries.length; index += 1) {
      const entry = entries[index] as ChainEntry;
      const nodeId = entry.node.id;
      this.#positions.set(nodeId, index);
      const messageId = messageIdOf(entry);
      if (messageId !== nodeId) this.#versions.set(messageId, nodeId);
    }
    this.#indexed = entries.length;
  }
}

/** The message id an entry's node holds (its node id when the stored message has none). */
function messageIdOf(entry: ChainEntry): string {
  const id = entry.node.message.id;
  return typeof id === 'string' ? id : entry.node.id;
}
