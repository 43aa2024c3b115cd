// Every use of the graph API by the request cycle is in this module: where a request attaches,
// what is written before streaming, how a reply is saved, and the reads by message id. The
// request cycle itself (chat-cycle.ts) never calls the engine or the store directly.
import { message as messageFragment } from '@ctxgraph/codecs';
import {
  type BudgetOptions,
  ContextEngine,
  type ContextEngineOptions,
  type ReplyOutcome,
  withUsage,
} from '@ctxgraph/engine';
import type { ChatRecord, ContextStore } from '@ctxgraph/fragments-core';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import { ChatNotFoundForUserError } from '../errors';
import type { ChatRequest } from '../request/read-chat-request';
import { acceptToolResults } from './tool-results';

/** One version of a message: a node holding its id, on its own branch. */
export interface MessageVersion<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The graph node (unique in the chat; several nodes may hold one message id). */
  readonly nodeId: string;
  /** The message id, as the client knows it. */
  readonly messageId: string;
  /** The message as stored. */
  readonly message: UI_MESSAGE;
  /** The newest node of the conversation continuing from this version (open it to show it). */
  readonly leafNodeId: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
}

/** What the usage of a reply is recorded as. */
export interface ReplyUsage {
  readonly usage: {
    readonly inputTokens?: number | undefined;
    readonly outputTokens?: number | undefined;
    readonly inputTokenDetails?: {
      readonly cacheReadTokens?: number | undefined;
      readonly cacheWriteTokens?: number | undefined;
    };
    readonly cachedInputTokens?: number | undefined;
  };
  readonly modelId: string;
  /**
   * The call's finished steps (one provider call each), when any finished: the engine records
   * their sum and reconciles the cache prediction step by step (`withUsage(…, { steps })`).
   */
  readonly steps?: readonly {
    readonly usage: ReplyUsage['usage'];
    readonly providerMetadata?: unknown;
  }[];
  /** The budgeted resolve's cache prediction (`result.budget.cache`), reconciled on save. */
  readonly cache?: unknown;
}

/** The engine settings the cycle opens each request's engine with. */
export type CycleEngineOptions = Omit<ContextEngineOptions, 'store' | 'chatId' | 'userId'>;

/** What a request's engine is positioned at, and what it gives the model. */
export interface PlacedRequest<UI_MESSAGE extends UIMessage> {
  /** The conversation the reply continues, as stored (the client's ids), for `originalMessages`. */
  readonly path: UI_MESSAGE[];
  /** The assistant message the reply continues in place (client-side tool result), if any. */
  readonly continues: UI_MESSAGE | undefined;
}

/**
 * A request's engine: one request at a time holds it (warm engines are taken out of their pool
 * for the request and given back after it), so concurrent requests never share a position.
 */
export class AttachedChat<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly #engine: ContextEngine;
  readonly #store: ContextStore;
  readonly #chatId: string;

  constructor(store: ContextStore, chatId: string, userId: string, options: CycleEngineOptions) {
    this.#store = store;
    this.#chatId = chatId;
    this.#engine = new ContextEngine({ ...options, store, chatId, userId });
  }

  /** The engine, for the app's context (`set(role(...))`, `loadContext()`). */
  get engine(): ContextEngine {
    return this.#engine;
  }

  /**
   * Positions the engine where the request continues and saves, before anything streams, the
   * messages the client has that the graph does not: attached after the last message both agree
   * on, in one store write (extending that branch when it is its head, forking a branch there
   * when it is not). An edited message becomes a new version on a branch at its parent, with its
   * id; a tool result replaces its assistant message in place.
   */
  async place(
    request: ChatRequest<UI_MESSAGE>,
    validateFrom: (from: number) => Promise<UI_MESSAGE[]>,
    after?: string | null,
  ): Promise<PlacedRequest<UI_MESSAGE>> {
    const engine = this.#engine;
    const messages = request.messages;
    const last = messages.at(-1) as UI_MESSAGE;
    const continuesReply = request.trigger === 'submit-message' && last.role === 'assistant';
    let fresh: readonly UI_MESSAGE[];
    if (request.lastOnly) {
      const stored = await engine.findMessage(last.id);
      const newest = stored[0];
      if (newest === undefined) {
        await engine.continueFrom(after === undefined ? await this.#newestNode() : after, {
          activate: false,
        });
        fresh = [last];
      } else if (continuesReply) {
        await engine.continueFrom(newest, { activate: false });
        fresh = [await this.#withToolResults(last)];
      } else {
        // The stored message is the last of the path to its node (read from a warm engine's
        // cache when it holds it), not a read of the whole graph.
        await engine.continueFrom(newest, { activate: false });
        const { messages: path } = await engine.resolve();
        const stored = path.at(-1);
        if (stored !== undefined && stored.id === last.id && sameMessage(stored, last)) {
          fresh = [];
        } else {
          // An edit of the stored message: a new version at its parent.
          const parent = path.at(-2);
          await engine.continueFrom(
            parent === undefined ? null : (engine.nodeIdOf(parent.id) ?? null),
            { activate: false },
          );
          fresh = [last];
        }
      }
    } else {
      const located = await engine.locate(messages);
      const continued =
        located.changed?.index === messages.length - 1
          ? located.changed.nodeId
          : located.nodeIds[messages.length - 1];
      if (continuesReply && located.matched >= messages.length - 1 && continued !== undefined) {
        const sent = (await validateFrom(messages.length - 1))[0] as UI_MESSAGE;
        await engine.continueFrom(continued, { activate: false });
        fresh = [await this.#withToolResults(sent)];
      } else {
        const matched = located.matched;
        // What the graph already holds was validated when it was written: only the rest is.
        fresh = await validateFrom(matched);
        await engine.continueFrom(matched === 0 ? null : (located.nodeIds[matched - 1] ?? null), {
          activate: false,
        });
      }
    }
    if (fresh.length > 0) {
      engine.set(...fresh.map((candidate) => messageFragment(candidate)));
      await engine.save();
    }
    const { messages: path } = await engine.resolve();
    return {
      path: path as UI_MESSAGE[],
      continues: continuesReply ? (path.at(-1) as UI_MESSAGE | undefined) : undefined,
    };
  }

  /** The model input for the position: the budgeted `resolve({ format: 'model' })`. */
  async modelInput(budget: BudgetOptions | undefined): Promise<{
    system: string | SystemModelMessage;
    messages: ModelMessage[];
    cache?: unknown;
  }> {
    const resolved = await this.#engine.resolve({ format: 'model', ...(budget ? { budget } : {}) });
    return {
      system: resolved.system ?? resolved.systemPrompt,
      messages: resolved.messages,
      // The prediction the reply's usage confirms (saveReply passes it to withUsage).
      ...(resolved.budget === undefined ? {} : { cache: resolved.budget.cache }),
    };
  }

  /**
   * Saves the reply after the position (or in place of the assistant message it continues), with
   * the usage of the whole call; `add` sums it with what the replaced message recorded.
   */
  async saveReply(
    reply: UI_MESSAGE,
    usage: ReplyUsage,
    options: { outcome: ReplyOutcome; add: boolean },
  ): Promise<void> {
    const fragment = withUsage(messageFragment(reply), {
      ...usage,
      add: options.add,
      outcome: options.outcome,
    });
    this.#engine.set(fragment);
    await this.#engine.save();
  }

  /**
   * The conversation from the root to `leaf` (a message id; the newest node holding it), or to
   * the most recently written message; [] for a chat without messages.
   */
  async path(leaf: string | undefined): Promise<UI_MESSAGE[]> {
    const engine = this.#engine;
    if (leaf === undefined) {
      const newest = await this.#newestNode();
      if (newest === null) return [];
      await engine.continueFrom(newest, { activate: false });
    } else {
      const nodes = await engine.findMessage(leaf);
      const node = nodes[0];
      if (node === undefined) {
        throw new ChatNotFoundForUserError(
          `Chat '${this.#chatId}' has no message '${leaf}': ask for a message id the chat holds.`,
        );
      }
      await engine.continueFrom(node, { activate: false });
    }
    return (await engine.resolve()).messages as UI_MESSAGE[];
  }

  /** The conversation from the root to a node (a version's `leafNodeId`). */
  async pathToNode(nodeId: string): Promise<UI_MESSAGE[]> {
    await this.#engine.continueFrom(nodeId, { activate: false });
    return (await this.#engine.resolve()).messages as UI_MESSAGE[];
  }

  /** The versions of a message (siblings holding its position), oldest first. */
  async versions(messageId: string): Promise<MessageVersion<UI_MESSAGE>[]> {
    const nodes = await this.#engine.findMessage(messageId);
    const node = nodes[0];
    if (node === undefined) {
      throw new ChatNotFoundForUserError(
        `Chat '${this.#chatId}' has no message '${messageId}': ask for a message id the chat holds.`,
      );
    }
    return (await this.#engine.versions(node)) as MessageVersion<UI_MESSAGE>[];
  }

  /**
   * The assistant message the engine is positioned at, with what the client may add to it (its
   * client-side tool results and approval answers) and nothing else of the client's copy.
   */
  async #withToolResults(sent: UI_MESSAGE): Promise<UI_MESSAGE> {
    const stored = (await this.#engine.resolve()).messages.at(-1) as UI_MESSAGE | undefined;
    return stored === undefined || stored.id !== sent.id ? sent : acceptToolResults(stored, sent);
  }

  /**
   * The node written last in the chat (highest sequence), or null when it has none. A commit
   * moves a head to its last new node, a child comes after its parent, and a node outlives its
   * branch only when a checkpoint (or another branch) still reaches it: so the newest node is a
   * branch head or a checkpoint, and those are read (a few point reads), not the whole graph.
   */
  async #newestNode(): Promise<string | null> {
    const store = this.#store;
    const chatId = this.#chatId;
    const heads = new Set<string>();
    for (const branch of await store.listBranches(chatId))
      if (branch.headMessageId !== null) heads.add(branch.headMessageId);
    for (const checkpoint of await store.listCheckpoints(chatId)) heads.add(checkpoint.messageId);
    let newest: { id: string; sequence: number } | null = null;
    for (const id of heads) {
      const node = await store.getMessage({ chatId, messageId: id });
      if (node !== null && (newest === null || node.sequence > newest.sequence)) newest = node;
    }
    return newest?.id ?? null;
  }
}

/**
 * Whether the chat exists and belongs to `userId` (a read only: an unknown chat is not created).
 */
export async function chatBelongsTo(
  store: ContextStore,
  chatId: string,
  userId: string,
): Promise<boolean> {
  return (await ownedChat(store, chatId, userId)) !== null;
}

/** The chat when it exists and belongs to `userId`, else null (a read only). */
export async function ownedChat(
  store: ContextStore,
  chatId: string,
  userId: string,
): Promise<ChatRecord | null> {
  const chat = await store.getChat(chatId);
  return chat !== null && chat.userId === userId ? chat : null;
}

function sameMessage(left: UIMessage, right: UIMessage): boolean {
  return (
    left.role === right.role &&
    canonical(left.parts) === canonical(right.parts) &&
    canonical(left.metadata ?? null) === canonical(right.metadata ?? null)
  );
}

/** JSON with object keys sorted (a client may send the same message with its keys reordered). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, entry: unknown) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(entry).sort())
      sorted[key] = (entry as Record<string, unknown>)[key];
    return sorted;
  });
}
