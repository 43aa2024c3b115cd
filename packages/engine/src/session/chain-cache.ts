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
 */
export class ChainCache {
  #entries: ChainEntry[] = [];
  #positions = new Map<string, number>();
  #messages: UIMessage[] = [];
  #messagePositions = new Map<string, number>();
  /**
   * Message id → node id, for the nodes of this chain. A message id appears at most once along a
   * path (the engine keeps it so), so this is what "the message M of this path" means; with
   * message versions a node id may differ from its message id.
   */
  #nodeByMessage = new Map<string, string>();
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
    return this.#entries.at(-1)?.node.id ?? null;
  }

  /** Replaces everything. */
  reset(entries: readonly ChainEntry[]): void {
    this.#entries = [];
    this.#positions.clear();
    this.#messages = [];
    this.#messagePositions.clear();
    this.#nodeByMessage.clear();
    this.#invalid = 0;
    this.#compactions = [];
    this.append(entries);
  }

  /** Adds entries after the newest one. */
  append(entries: readonly ChainEntry[]): void {
    for (const entry of entries) {
      if (readCompaction(entry.node) !== null) this.#compactions.push(this.#entries.length);
      this.#positions.set(entry.node.id, this.#entries.length);
      this.#nodeByMessage.set(messageIdOf(entry), entry.node.id);
      this.#entries.push(entry);
      if (entry.message) {
        this.#messagePositions.set(entry.node.id, this.#messages.length);
        this.#messages.push(entry.message);
      } else if (entry.error !== null) {
        // Without message and error: a dropped message's tombstone, never shown.
        this.#invalid += 1;
      }
    }
  }

  /** True when a node with this id is in the chain. */
  has(id: string): boolean {
    return this.#positions.has(id);
  }

  /** The id of the node of this chain that holds message `messageId`, or undefined. */
  nodeIdOf(messageId: string): string | undefined {
    return this.#nodeByMessage.get(messageId);
  }

  /** The node with this id, when it is in the chain. */
  node(id: string): MessageNodeRecord | undefined {
    const position = this.#positions.get(id);
    return position === undefined ? undefined : this.#entries[position]?.node;
  }

  /** Replaces the entry with the same id in place; false when there is none. */
  replace(entry: ChainEntry): boolean {
    const position = this.#positions.get(entry.node.id);
    if (position === undefined) return false;
    const previous = this.#entries[position];
    this.#entries[position] = entry;
    if (previous !== undefined && messageIdOf(previous) !== messageIdOf(entry)) {
      if (this.#nodeByMessage.get(messageIdOf(previous)) === entry.node.id)
        this.#nodeByMessage.delete(messageIdOf(previous));
      this.#nodeByMessage.set(messageIdOf(entry), entry.node.id);
    }
    const messagePosition = this.#messagePositions.get(entry.node.id);
    const compactionBefore = previous ? readCompaction(previous.node) !== null : false;
    const compactionNow = readCompaction(entry.node) !== null;
    if (
      previous?.message &&
      entry.message &&
      messagePosition !== undefined &&
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
    const position = this.#positions.get(id);
    if (position === undefined) return false;
    let droppedMessages = 0;
    for (let index = position + 1; index < this.#entries.length; index += 1) {
      const entry = this.#entries[index] as ChainEntry;
      this.#positions.delete(entry.node.id);
      if (this.#nodeByMessage.get(messageIdOf(entry)) === entry.node.id)
        this.#nodeByMessage.delete(messageIdOf(entry));
      if (entry.message) {
        this.#messagePositions.delete(entry.node.id);
        droppedMessages += 1;
      } else if (entry.error !== null) {
        this.#invalid -= 1;
      }
    }
    this.#entries.length = position + 1;
    this.#messages.length -= droppedMessages;
    while ((this.#compactions.at(-1) ?? -1) > position) this.#compactions.pop();
    return true;
  }

  /** Position of an entry, by node id. */
  position(id: string): number | undefined {
    return this.#positions.get(id);
  }

  /** True when the cache holds the chain from its root (a cold read may stop at a compaction's boundary). */
  get startsAtRoot(): boolean {
    return this.#entries.length === 0 || this.#entries[0]?.node.parentId === null;
  }

  /** Positions of the compaction nodes among the entries, oldest first. Read-only for callers. */
  get compactionPositions(): readonly number[] {
    return this.#compactions;
  }

  /** Position of a message among the valid messages. */
  messagePosition(id: string): number | undefined {
    return this.#messagePositions.get(id);
  }

  /** The newest entry whose message role is `role`, searching from the end. */
  lastIdWithRole(role: string): string | undefined {
    for (let index = this.#entries.length - 1; index >= 0; index -= 1) {
      const node = this.#entries[index]?.node;
      if (node?.message.role === role) return node.id;
    }
    return undefined;
  }
}

/** The message id an entry's node holds (its node id when the stored message has none). */
function messageIdOf(entry: ChainEntry): string {
  const id = entry.node.message.id;
  return typeof id === 'string' ? id : entry.node.id;
}
