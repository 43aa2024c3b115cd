import {
  type BranchRecord,
  type CommitResult,
  type ContextStore,
  EngineError,
  type HeadState,
  type MessageNodeRecord,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { ChainCache, type ChainEntry } from './chain-cache';
import {
  type ChainPageRead,
  holdsConversation,
  readConversationChain,
  readWholeChain,
} from './chain-reads';
import type { MessageValidator } from './message-validator';

/**
 * The engine's view of its active branch: which branch, its head, and the cached chain with the
 * state that says whether the cache still matches the store. It moves in three ways only:
 * `sync()` (read what changed), `applyWrite()` (our own write), `moveTo()` (another branch).
 */
export class BranchView {
  readonly #store: ContextStore;
  readonly #chatId: string;
  readonly #validator: MessageValidator;
  readonly #cache = new ChainCache();
  /** The branch this view follows. */
  branch = 'main';
  /** The branch head as last seen (read or written). */
  headMessageId: string | null = null;
  /** The chat version and `rewrittenAt` as last seen. */
  version = 0;
  rewrittenAt = 0;
  /** Whether the cache holds a chain at all, which head it ends at, and the version it matches. */
  #loaded = false;
  #cachedHead: string | null = null;
  #cachedVersion = -1;

  constructor(store: ContextStore, chatId: string, validator: MessageValidator) {
    this.#store = store;
    this.#chatId = chatId;
    this.#validator = validator;
  }

  /** The cached chain (valid after `sync()`): entries, valid messages, lookups. */
  get chain(): ChainCache {
    return this.#cache;
  }

  /** Whether the cache holds a chain the caller has seen (it may be behind the store). */
  get loaded(): boolean {
    return this.#loaded;
  }

  /** Starts at the branch and head the store opened the chat with. */
  open(branch: BranchRecord, head: { version: number; rewrittenAt: number }): void {
    this.branch = branch.name;
    this.headMessageId = branch.headMessageId;
    this.version = head.version;
    this.rewrittenAt = head.rewrittenAt;
  }

  /**
   * Brings the cache up to date: one small read when nothing changed, only the new nodes when the
   * head moved forward and nothing cached was rewritten, the whole chain otherwise. `known` is a
   * head state the caller has just read in the same operation (what `openChat` returned), which
   * saves the `getHead` round trip; without it the head is read.
   */
  async sync(known?: HeadState): Promise<void> {
    const state =
      known ?? (await this.#store.getHead({ chatId: this.#chatId, branch: this.branch }));
    this.#see(state);
    const head = state.headMessageId;
    if (this.#loaded && state.version === this.#cachedVersion && head === this.#cachedHead) return;
    const nothingRewritten = this.#loaded && state.rewrittenAt <= this.#cachedVersion;
    if (head === null) {
      this.#cache.reset([]);
    } else if (nothingRewritten && head === this.#cachedHead) {
      // Only other branches changed: the cached chain is still exact.
    } else if (nothingRewritten && this.#cachedHead !== null) {
      const page = await this.#store.getChain({
        chatId: this.#chatId,
        headMessageId: head,
        until: this.#cachedHead,
      });
      const nodes = page.reachedUntil ? page.nodes : await this.#wholeChain(head, page);
      if (page.reachedUntil) this.#cache.append(await this.#validator.entries(nodes));
      else this.#cache.reset(await this.#validator.entries(nodes));
      // A cache that starts at a boundary needs the compaction that named it.
      if (!holdsConversation(this.#cache)) await this.#readCold(head);
    } else {
      await this.#readCold(head);
    }
    this.#loaded = true;
    this.#cachedHead = head;
    this.#cachedVersion = state.version;
  }

  /**
   * Takes in our own write: `attachedTo` is the head the messages were attached to, `messages`
   * the validated messages in the order they were written (what was stored). When the write
   * built on the cached head, the cache is extended in place; otherwise other writers' nodes lie
   * in between and the next `sync()` reads them.
   */
  applyWrite(
    attachedTo: string | null,
    result: CommitResult,
    messages: readonly UIMessage[],
  ): void {
    const onlyWriter = result.version === this.#cachedVersion + 1;
    this.headMessageId = result.headMessageId;
    this.version = Math.max(this.version, result.version);
    this.rewrittenAt = Math.max(this.rewrittenAt, result.rewrittenAt);
    if (!this.#loaded) return;
    // `result.nodes` are in input order, so node i carries messages[i] (found by id otherwise).
    const entry = (node: MessageNodeRecord, index: number): ChainEntry => {
      const candidate = messages[index];
      const message =
        candidate?.id === node.id ? candidate : messages.find((each) => each.id === node.id);
      if (message === undefined) return { node, message: null, error: null };
      // The node carries the message we stored (what a later read parses back from its JSON),
      // so keeping it costs no parse of what the store just serialized.
      return { node: withMessage(node, message), message, error: null };
    };
    // Nodes replaced in place are on this branch (the store refuses others): update them.
    result.nodes.forEach((node, index) => {
      if (this.#cache.has(node.id)) this.#cache.replace(entry(node, index));
    });
    if (attachedTo !== this.#cachedHead) return;
    const added: ChainEntry[] = [];
    let lastId = this.#cache.lastId;
    result.nodes.forEach((node, index) => {
      if (!this.#cache.has(node.id) && node.parentId === lastId) {
        added.push(entry(node, index));
        lastId = node.id;
      }
    });
    this.#cache.append(added);
    this.#cachedHead = result.headMessageId;
    // With other writes in between (elsewhere in the chat), the version stays behind so the next
    // read checks whether they rewrote anything cached.
    if (onlyWriter) this.#cachedVersion = result.version;
  }

  /** Points the view at another branch, keeping whatever part of the cached chain still holds. */
  moveTo(branch: BranchRecord): void {
    this.branch = branch.name;
    this.headMessageId = branch.headMessageId;
    if (branch.headMessageId === null) {
      this.#cache.reset([]);
      this.#cachedHead = null;
    } else if (
      this.#loaded &&
      this.#cache.truncateAfter(branch.headMessageId) &&
      holdsConversation(this.#cache)
    ) {
      // Rewinding within the cached chain: its prefix is the new branch's chain; no read needed
      // (unless the cache started at a compaction's boundary and the rewind cut that node off).
      this.#cachedHead = branch.headMessageId;
    } else {
      this.#loaded = false;
    }
  }

  /** The chain back to the newest compaction's boundary, or to the root. */
  async #readCold(head: string): Promise<void> {
    const nodes = await readConversationChain(this.#store, this.#chatId, head);
    this.#cache.reset(await this.#validator.entries(nodes));
  }

  #see(state: HeadState): void {
    this.headMessageId = state.headMessageId;
    this.version = Math.max(this.version, state.version);
    this.rewrittenAt = Math.max(this.rewrittenAt, state.rewrittenAt);
  }

  /** A store may page long chains even without a limit; follow its cursor to the root. */
  async #wholeChain(head: string, first: ChainPageRead): Promise<MessageNodeRecord[]> {
    const nodes = await readWholeChain(this.#store, this.#chatId, head, first);
    if (nodes.length > 0 && nodes.at(-1)?.id !== head) {
      throw new EngineError(
        `The store returned a chain that does not end at head "${head}" of chat "${this.#chatId}".`,
      );
    }
    return nodes;
  }
}

/** `node` with `message` in place of the store's copy (equal content, already at hand). */
function withMessage(node: MessageNodeRecord, message: UIMessage): MessageNodeRecord {
  return {
    chatId: node.chatId,
    id: node.id,
    parentId: node.parentId,
    sequence: node.sequence,
    message,
    ...(node.engineRecord === undefined ? {} : { engineRecord: node.engineRecord }),
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
  };
}
