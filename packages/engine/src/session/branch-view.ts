import {
  type BranchRecord,
  ChatNotFoundError,
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
import { writtenEntry } from './written-entry';

/**
 * The engine's view of its active branch: which branch, its head, and the cached chain with the
 * state that says whether the cache still matches the store. It moves in four ways only:
 * `sync()` (read what changed), `applyWrite()` (our own write), `moveTo()` (another branch),
 * `pinAt()` (a node, after `continueFrom()`).
 *
 * **Pinned** (after `continueFrom()`): the view shows the chain to its own position, whatever
 * other writers add to the branch, and the engine's writes are addressed to that position (they
 * extend `branch` while its head is still the position, else start a branch there). `detached`:
 * no branch has the position as its head, so the next write starts one (named after `branch`).
 */
export class BranchView {
  readonly #store: ContextStore;
  readonly #chatId: string;
  readonly #validator: MessageValidator;
  /** Replaced whole only by `adopt()` (a chain `locate()` read); read it through `chain`. */
  #cache = new ChainCache();
  /** The branch this view follows. */
  branch = 'main';
  /** The branch head as last seen (read or written). */
  headMessageId: string | null = null;
  /** True after `continueFrom()`: the head is the engine's position, not the branch's head. */
  pinned = false;
  /** Pinned, and no branch has the position as its head: the next write forks there. */
  detached = false;
  /** With `detached`: make the branch the next write starts the chat's active one. */
  activateOnFork = false;
  /** The chat revision and `rewrittenAt` as last seen. */
  revision = 0;
  rewrittenAt = 0;
  /** Whether the cache holds a chain at all, which head it ends at, and the revision it matches. */
  #loaded = false;
  #cachedHead: string | null = null;
  #cachedRevision = -1;
  /**
   * Set by `useSnapshot()`: a pinned view takes `revision` and `rewrittenAt` (the snapshot the
   * caller read, raised by every write and read of ours since) as the chat's state, instead of
   * reading the chat row in each `sync()`.
   */
  #snapshot = false;
  /**
   * The chat's newest node (the highest sequence) and the revision it was the newest at: the last
   * new node of our own write. While the chat is still at that revision, nothing was written after.
   */
  #newest: { readonly id: string; readonly revision: number } | undefined;
  /**
   * The revision at which `branch` was known to have `headMessageId` as its head (our own write),
   * or -1. Heads move only with writes that raise the revision, so at that revision it still has.
   */
  #headKnownAt = -1;

  constructor(store: ContextStore, chatId: string, validator: MessageValidator) {
    this.#store = store;
    this.#chatId = chatId;
    this.#validator = validator;
  }

  /** The cached chain (valid after `sync()`): entries, valid messages, lookups. */
  get chain(): ChainCache {
    const cache = this.#cache;
    if (this.#loaded && this.#cachedHead !== null && cache.lastId !== this.#cachedHead)
      cache.truncateAfter(this.#cachedHead);
    return cache;
  }

  /**
   * True when node `id` is on the cached chain up to the head, without cutting the chain back
   * first: a rewind asks this, and a rewind followed by a switch back costs nothing.
   */
  pathHas(id: string): boolean {
    const position = this.#cache.position(id);
    return position !== undefined && position <= this.#headPosition();
  }

  /** The node of the cached chain up to the head that holds message `messageId`, if any. */
  pathNodeIdOf(messageId: string): string | undefined {
    const nodeId = this.#cache.nodeIdOf(messageId);
    return nodeId !== undefined && this.pathHas(nodeId) ? nodeId : undefined;
  }

  /** Whether the cache holds a chain the caller has seen (it may be behind the store). */
  get loaded(): boolean {
    return this.#loaded;
  }

  /**
   * The chain from the cache's start to `nodeId`, when the cache holds that node and enough of
   * the chain to show its conversation (the cache itself when `nodeId` is its newest node, else a
   * copy of its prefix; no read, no validation); undefined otherwise. Exact only after `sync()`.
   */
  chainThrough(nodeId: string): ChainCache | undefined {
    if (!this.#loaded) return undefined;
    this.#settle();
    const position = this.#cache.position(nodeId);
    if (position === undefined) return undefined;
    if (position === this.#cache.entries.length - 1) return this.#cache;
    const prefix = new ChainCache();
    prefix.reset(this.#cache.entries.slice(0, position + 1));
    return holdsConversation(prefix) ? prefix : undefined;
  }

  /**
   * Takes a chain read elsewhere in this session (`locate()` read the path to the node the engine
   * is now pinned at) as the cache, when it holds the view's head and enough to show its
   * conversation: `continueFrom()` after `locate()` reads and validates the path once. The
   * chain's revision is the chat revision known before it was read, so the next `sync()` still
   * sees any rewrite made since. False (cache unchanged) when it does not fit.
   */
  adopt(read: ChainRead): boolean {
    const head = this.headMessageId;
    if (this.#loaded || head === null) return false;
    const chain = read.chain;
    if (!chain.truncateAfter(head) || !holdsConversation(chain)) return false;
    this.#cache = chain;
    this.#loaded = true;
    this.#cachedHead = head;
    this.#cachedRevision = read.revision;
    return true;
  }

  /**
   * Takes a chat record the caller has just read as the chat's state for the syncs of a pinned
   * view, raised by our own writes and reads since (each keeps the higher revision), in place of a
   * read of the chat row; undefined goes back to reading it.
   */
  useSnapshot(chat: { readonly revision: number; readonly rewrittenAt: number } | undefined): void {
    this.#snapshot = chat !== undefined;
    if (chat === undefined) return;
    this.revision = Math.max(this.revision, chat.revision);
    this.rewrittenAt = Math.max(this.rewrittenAt, chat.rewrittenAt);
  }

  /**
   * True when, by the snapshot, the view is pinned at the chat's newest node: its own last write
   * put it there and the chat's revision has not moved since, so no node of the chat comes after it.
   */
  get atNewestNode(): boolean {
    const newest = this.#newest;
    return (
      this.#snapshot &&
      this.pinned &&
      newest !== undefined &&
      newest.id === this.headMessageId &&
      newest.revision === this.revision
    );
  }

  /**
   * True when, by the snapshot, `nodeId` is the view's position and still the head of its branch
   * (our own write made it so, and the chat's revision has not moved since).
   */
  knowsHeadAt(nodeId: string): boolean {
    return (
      this.#snapshot &&
      this.pinned &&
      !this.detached &&
      this.headMessageId === nodeId &&
      this.#headKnownAt === this.revision
    );
  }

  /** Starts at the branch and head the store opened the chat with. */
  open(branch: BranchRecord, head: { revision: number; rewrittenAt: number }): void {
    this.branch = branch.name;
    this.headMessageId = branch.headMessageId;
    this.revision = head.revision;
    this.rewrittenAt = head.rewrittenAt;
  }

  /**
   * Brings the cache up to date: one small read when nothing changed, only the new nodes when the
   * head moved forward and nothing cached was rewritten, the whole chain otherwise. `known` is a
   * head state the caller has just read in the same operation (what `openChat` returned), which
   * saves the `getHead` round trip; without it the head is read.
   */
  async sync(known?: HeadState): Promise<void> {
    const state = this.pinned
      ? await this.#pinnedState()
      : (known ?? (await this.#store.getHead({ chatId: this.#chatId, branch: this.branch })));
    this.#see(state);
    this.#settle();
    const head = state.headMessageId;
    if (this.#loaded && state.revision === this.#cachedRevision && head === this.#cachedHead)
      return;
    const nothingRewritten = this.#loaded && state.rewrittenAt <= this.#cachedRevision;
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
    this.#cachedRevision = state.revision;
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
    const onlyWriter = result.revision === this.#cachedRevision + 1;
    this.headMessageId = result.headMessageId;
    this.revision = Math.max(this.revision, result.revision);
    this.rewrittenAt = Math.max(this.rewrittenAt, result.rewrittenAt);
    this.#headKnownAt = result.revision;
    // A head that moved moved to the write's last new node, the chat's newest (sequences grow).
    const head = result.headMessageId;
    this.#newest =
      head !== null && head !== attachedTo ? { id: head, revision: result.revision } : undefined;
    if (!this.#loaded) return;
    this.#settle();
    const cache = this.#cache;
    const nodes = result.nodes;
    // Nodes replaced in place are on this branch (the store refuses others): update them. The
    // others are new nodes, appended when the write built on the cached head; otherwise other
    // writers' nodes lie in between and the next `sync()` reads them.
    const onCachedHead = attachedTo === this.#cachedHead;
    let added: ChainEntry[] | undefined;
    let lastId = cache.lastId;
    for (let index = 0; index < nodes.length; index += 1) {
      const node = nodes[index] as MessageNodeRecord;
      if (cache.has(node.id)) {
        cache.replace(writtenEntry(node, index, messages));
      } else if (onCachedHead && node.parentId === lastId) {
        added ??= [];
        added.push(writtenEntry(node, index, messages));
        lastId = node.id;
      }
    }
    if (!onCachedHead) return;
    if (added !== undefined) cache.append(added);
    this.#cachedHead = result.headMessageId;
    // With other writes in between (elsewhere in the chat), the revision stays behind so the next
    // read checks whether they rewrote anything cached.
    if (onlyWriter) this.#cachedRevision = result.revision;
  }

  /** Points the view at another branch, keeping whatever part of the cached chain still holds. */
  moveTo(branch: BranchRecord): void {
    this.#headKnownAt = -1;
    this.pinned = false;
    this.detached = false;
    this.activateOnFork = false;
    this.branch = branch.name;
    this.#moveHead(branch.headMessageId);
  }

  /**
   * Pins the view at node `nodeId` (null: before the first message): on `branch` when that branch
   * has it as its head, else detached (the next write starts a branch named after `forkFrom`).
   */
  pinAt(
    nodeId: string | null,
    branch: string | null,
    forkFrom: string,
    activateOnFork: boolean,
  ): void {
    // The head is known at a revision only when it stays where our own write left it.
    if (nodeId !== this.headMessageId || branch !== this.branch) this.#headKnownAt = -1;
    this.pinned = true;
    this.detached = branch === null;
    this.activateOnFork = branch === null && activateOnFork;
    this.branch = branch ?? forkFrom;
    this.#moveHead(nodeId);
  }

  /** After our own fork-commit: the view is on the new branch, still pinned at its position. */
  attachTo(branch: string): void {
    this.branch = branch;
    this.detached = false;
    this.activateOnFork = false;
  }

  #moveHead(headMessageId: string | null): void {
    this.headMessageId = headMessageId;
    if (headMessageId === null) {
      this.#cache.reset([]);
      this.#cachedHead = null;
    } else if (this.#loaded && this.#cache.has(headMessageId) && this.#cache.startsAtRoot) {
      // Within the cached chain (which starts at the root, so any prefix shows its conversation):
      // the prefix up to the new head is the new branch's chain. The chain beyond it is kept, and
      // cut off only when it is read or extended, so that a rewind and a switch back cost no read
      // and no work proportional to the history.
      this.#cachedHead = headMessageId;
    } else if (
      this.#loaded &&
      this.#cache.truncateAfter(headMessageId) &&
      holdsConversation(this.#cache)
    ) {
      // Within a cache that starts at a compaction's boundary: its prefix still shows the
      // conversation unless the rewind cut that compaction off.
      this.#cachedHead = headMessageId;
    } else {
      this.#loaded = false;
    }
  }

  /** The position of the cached head in the cache (the chain may extend beyond it). */
  #headPosition(): number {
    if (!this.#loaded || this.#cachedHead === null) return -1;
    return this.#cache.position(this.#cachedHead) ?? -1;
  }

  /** Cuts the cached chain back to the cached head, when a move left it longer. */
  #settle(): void {
    const head = this.#cachedHead;
    if (this.#loaded && head !== null && this.#cache.lastId !== head)
      this.#cache.truncateAfter(head);
  }

  /**
   * A pinned view's state: the chat's revision and `rewrittenAt` (one read of the chat row, or the
   * snapshot the caller gave), and its own position as the head. The chain to a node never
   * changes but by a rewrite.
   */
  async #pinnedState(): Promise<HeadState> {
    if (this.#snapshot) {
      return {
        revision: this.revision,
        rewrittenAt: this.rewrittenAt,
        headMessageId: this.headMessageId,
      };
    }
    const chat = await this.#store.getChat(this.#chatId);
    if (chat === null) throw new ChatNotFoundError(this.#chatId);
    return {
      revision: chat.revision,
      rewrittenAt: chat.rewrittenAt,
      headMessageId: this.headMessageId,
    };
  }

  /** The chain back to the newest compaction's boundary, or to the root. */
  async #readCold(head: string): Promise<void> {
    const nodes = await readConversationChain(this.#store, this.#chatId, head);
    this.#cache.reset(await this.#validator.entries(nodes));
  }

  #see(state: HeadState): void {
    this.headMessageId = state.headMessageId;
    this.revision = Math.max(this.revision, state.revision);
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

/** A chain read and validated outside the view, with the chat revision known before the read. */
export interface ChainRead {
  /** The chain, oldest first, as a cold read of its newest node would cache it. */
  readonly chain: ChainCache;
  /** The chat's revision as seen before the chain was read (a lower bound of what it reflects). */
  readonly revision: number;
}
