// The placement: where a request attaches on the graph, what is written before the model is
// called, and how the reply is saved. Every write the request cycle makes goes through this
// module; the reads by message id are in chat-reads.ts.
import { message as messageFragment } from '@ctxgraph/codecs';
import {
  type AutoCompaction,
  type BudgetOptions,
  type CachePrediction,
  ContextEngine,
  type ContextEngineOptions,
  type LocateResult,
  type OverflowRetry,
  type ReplyOutcome,
  usageOf,
  withUsage,
} from '@ctxgraph/engine';
import {
  type ContextStore,
  type JsonObject,
  LiveReplyConflictError,
  withoutEngineMetadata,
} from '@ctxgraph/fragments-core';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import { ChatRequestError } from '../errors';
import type { ChatRequest } from '../request/read-chat-request';
import type { ReplyUsage } from '../stream/call-usage';
import { type ContextOverflow, retryBudget } from '../stream/context-overflow';
import { newestNode } from './chat-reads';
import { canonical, isSettledCopy, sameMessage } from './client-copies';
import { ContinuationRefusedError } from './continuation-refused-error';
import { acceptToolResults, waitingCalls } from './tool-results';

/**
 * An edit keeps its message's role: a client's message with the id of a stored message of another
 * role (a reply sent back as the user's, a question sent back as the model's) is refused.
 */
function refuseRoleChange(stored: { role: string }, sent: UIMessage, path: string): void {
  if (stored.role === sent.role) return;
  throw new ChatRequestError(
    `Chat request refused: ${path} has the id '${sent.id}' of a stored ${stored.role} message but the role '${sent.role}': an edit keeps its message's role (nothing a client sends changes a stored message's role).`,
    { issues: [{ path: `${path}.role`, message: `expected '${stored.role}'` }] },
  );
}

function refuseContinuation(message: string, path: string, problem: string): never {
  throw new ContinuationRefusedError(`Chat request refused: ${message}`, {
    issues: [{ path, message: problem }],
  });
}

/**
 * The live record a request starts for its reply (store capability `liveReplies`): with the
 * client's new messages in one write, or alone when there are none (a regenerate) or the reply
 * continues a stored one (there, it is also the claim of the reply: of two requests answering
 * it at once, the second is refused).
 */
export interface ReplyStart {
  /** The new reply's id (a continuation keeps the id of the reply it continues). */
  readonly replyId: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly data?: JsonObject;
  /**
   * True: the record stays until the reply's final save ends it (live replies on). False: it is
   * only the claim of a continuation, ended once the answer is saved; nothing else is started.
   */
  readonly keep: boolean;
}

/** The engine settings the cycle opens each request's engine with. */
export type CycleEngineOptions = Omit<ContextEngineOptions, 'store' | 'chatId' | 'userId'>;

/** What a request's engine is positioned at, and what it gives the model. */
export interface PlacedRequest<UI_MESSAGE extends UIMessage> {
  /** The conversation the reply continues, as stored (the client's ids), for `originalMessages`. */
  readonly path: UI_MESSAGE[];
  /** The assistant message the reply continues in place (client-side tool result), if any. */
  readonly continues: UI_MESSAGE | undefined;
  /** The id the reply is streamed and stored under. */
  readonly replyId: string;
}

/** What the model is given for a placed request, and the cache prediction its usage confirms. */
export interface ModelInput {
  /** For `streamText({ system })`: the rendered context (with its cache mark under a budget). */
  readonly system: string | SystemModelMessage;
  /** For `streamText({ messages })`: the conversation the reply answers. */
  readonly messages: ModelMessage[];
  /** The budgeted resolve's cache prediction (`result.budget.cache`); none without a budget. */
  readonly cache?: CachePrediction;
  /** What the engine's `autoCompact` did or decided before the call, if anything. */
  readonly compaction?: AutoCompaction;
  /** The input's tokens as the budget counted them (`result.budget.totalTokens`); none without a budget. */
  readonly tokens?: number;
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
   * id. A client's copy of a reply the cycle settled (a stopped reply) is that reply, not an edit
   * of it. A continuation (the request ends with an assistant message) is {@link #continueReply}.
   */
  async place(
    request: ChatRequest<UI_MESSAGE>,
    validateFrom: (from: number) => Promise<UI_MESSAGE[]>,
    after: string | null | undefined,
    start: ReplyStart,
  ): Promise<PlacedRequest<UI_MESSAGE>> {
    const engine = this.#engine;
    const messages = request.messages;
    const last = messages.at(-1) as UI_MESSAGE;
    if (request.trigger === 'submit-message' && last.role === 'assistant')
      return this.#continueReply(request, validateFrom, start);
    let fresh: readonly UI_MESSAGE[];
    if (request.lastOnly) {
      const stored = await engine.findMessage(last.id);
      // The version the client shows, when the message has several: the one whose stored
      // message equals the client's (and that follows `after` when the client names it), else
      // the newest. Otherwise a regenerate on an older version would take that version for an
      // edit of the newest and write a copy of it as a new version.
      const newest =
        stored.length < 2 ? stored[0] : ((await this.#shownVersion(last, after)) ?? stored[0]);
      if (newest === undefined) {
        // A compaction the cycle ran after the reply the client continues from is continued
        // after: the client never sees that node.
        await engine.continueFrom(
          after === undefined ? await newestNode(this.#store, this.#chatId) : after,
          { activate: false, pastCompaction: true },
        );
        fresh = [last];
      } else {
        // The stored message is the last of the path to its node (read from a warm engine's
        // cache when it holds it), not a read of the whole graph.
        await engine.continueFrom(newest, { activate: false });
        const { messages: path } = await engine.resolve();
        const stored = path.at(-1);
        if (stored !== undefined && stored.id === last.id && sameMessage(stored, last)) {
          fresh = [];
        } else {
          if (stored !== undefined) refuseRoleChange(stored, last, 'message');
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
      const { located } = await this.#locate(messages);
      const matched = located.matched;
      if (located.changed !== null) {
        const node = await this.#store.getMessage({
          chatId: this.#chatId,
          messageId: located.changed.nodeId,
        });
        const sent = messages[located.changed.index] as UI_MESSAGE;
        if (node !== null)
          refuseRoleChange(node.message, sent, `messages[${located.changed.index}]`);
      }
      // What the graph already holds was validated when it was written: only the rest is.
      fresh = await validateFrom(matched);
      await engine.continueFrom(matched === 0 ? null : (located.nodeIds[matched - 1] ?? null), {
        activate: false,
        pastCompaction: true,
      });
    }
    const live = this.#store.startReply;
    // The message the reply answers (the request's last), in its record: another tab places
    // the live reply after it.
    const startReply = {
      replyId: start.replyId,
      owner: start.owner,
      leaseMs: start.leaseMs,
      data: { ...start.data, follows: last.id },
    };
    if (fresh.length > 0) {
      engine.set(...fresh.map((candidate) => messageFragment(candidate)));
      await engine.save(start.keep ? { startReply } : {});
    } else if (start.keep && live !== undefined) {
      await live.call(this.#store, {
        chatId: this.#chatId,
        ...startReply,
        branch: null,
        afterNodeId:
          engine.headMessageId === undefined
            ? null
            : (engine.nodeIdOf(engine.headMessageId) ?? engine.headMessageId),
      });
    }
    const { messages: path } = await engine.resolve();
    return { path: path as UI_MESSAGE[], continues: undefined, replyId: start.replyId };
  }

  /**
   * The newest node holding the client's message as the client has it (after `after` when
   * given: a message's versions share their parent), if any.
   */
  async #shownVersion(
    message: UI_MESSAGE,
    after: string | null | undefined,
  ): Promise<string | undefined> {
    const nodes = await this.#store.findMessageNodes({
      chatId: this.#chatId,
      messageId: message.id,
      limit: 100,
    });
    return nodes.find(
      (node) =>
        (after === undefined || node.parentId === after) &&
        sameMessage(node.message as unknown as UIMessage, message),
    )?.id;
  }

  /**
   * A continuation: the request's last message is the client's copy of a stored reply that waits
   * for a client-side tool result or an approval, and the copy answers it. Only a stored
   * assistant reply on the client's path that waits for a call the copy answers is continued;
   * anything else is refused before anything is written ({@link ContinuationRefusedError}), so
   * nothing a client sends changes a stored message's role or continues a reply twice. The
   * answer is taken onto the reply as stored (nothing else of the client's copy) and saved in
   * place under a claim on the reply ({@link #claim}): of two requests answering it at once, in
   * one process or in two, one continues it and the other is refused before its model call.
   */
  async #continueReply(
    request: ChatRequest<UI_MESSAGE>,
    validateFrom: (from: number) => Promise<UI_MESSAGE[]>,
    start: ReplyStart,
  ): Promise<PlacedRequest<UI_MESSAGE>> {
    const engine = this.#engine;
    const messages = request.messages;
    const index = messages.length - 1;
    const sent = messages[index] as UI_MESSAGE;
    const at = request.lastOnly ? 'message' : `messages[${index}]`;
    let nodeId: string | undefined;
    if (request.lastOnly) {
      nodeId = (await engine.findMessage(sent.id))[0];
    } else {
      const { located } = await this.#locate(messages);
      if (located.matched >= index)
        nodeId = located.changed?.index === index ? located.changed.nodeId : located.nodeIds[index];
    }
    if (nodeId === undefined) {
      refuseContinuation(
        `the chat holds no reply '${sent.id}'${request.lastOnly ? '' : ' on the path the client sent'}, so there is nothing to continue (a submit-message that ends with an assistant message continues a stored reply that waits for a client-side tool result or an approval).`,
        at,
        'no such stored reply',
      );
    }
    const answer = (await validateFrom(index))[0] as UI_MESSAGE;
    // Checked before anything is written, then again under the claim: another request may have
    // answered the reply in between.
    await this.#answered(nodeId, answer, at);
    const release = await this.#claim(nodeId, sent.id, at, start);
    let saved = false;
    try {
      engine.set(messageFragment(await this.#answered(nodeId, answer, at)));
      await engine.save();
      saved = true;
    } finally {
      // A live reply's record stays until its final save; a bare claim ends here.
      if (!saved || !start.keep) await release();
    }
    const { messages: path } = await engine.resolve();
    return {
      path: path as UI_MESSAGE[],
      continues: path.at(-1) as UI_MESSAGE | undefined,
      replyId: sent.id,
    };
  }

  /**
   * The stored reply at `nodeId` with the client's answers taken onto it, the engine positioned
   * at it (read as the chat is now). Refuses a message that is not an assistant reply, a reply
   * that waits for nothing, and a copy that answers none of the calls it waits for.
   */
  async #answered(nodeId: string, answer: UI_MESSAGE, at: string): Promise<UI_MESSAGE> {
    const engine = this.#engine;
    await engine.continueFrom(nodeId, { activate: false });
    const stored = (await engine.resolve()).messages.at(-1) as UI_MESSAGE | undefined;
    if (stored === undefined || stored.role !== 'assistant') {
      refuseContinuation(
        `'${answer.id}' is a ${stored?.role ?? 'missing'} message in the chat, not a reply: a continuation continues an assistant reply that waits for a client-side tool result or an approval, and never changes a stored message's role.`,
        at,
        'not an assistant reply',
      );
    }
    const waiting = waitingCalls(stored);
    if (waiting.length === 0) {
      refuseContinuation(
        `reply '${stored.id}' waits for no tool result or approval: it was answered already (by another tab, or an earlier request) or never asked for one. Reload the chat to see it as stored.`,
        at,
        'the reply waits for nothing',
      );
    }
    const merged = acceptToolResults(stored, answer);
    if (canonical(merged.parts) === canonical(stored.parts)) {
      refuseContinuation(
        `reply '${stored.id}' waits for the tool call${waiting.length === 1 ? '' : 's'} ${waiting.map((id) => `'${id}'`).join(', ')}, and the message answers none of them (an output, an error or an approval answer for the same call id and tool).`,
        at,
        'answers no waiting call',
      );
    }
    return merged;
  }

  /**
   * Claims the reply at `nodeId` for this request: its live record (`startReply`), which every
   * store makes atomic across processes (the record's key is the chat and the reply). A second
   * request is refused while the record stands; a record left by a process that died is ended
   * as interrupted once its lease ran out, by whoever looks next. Returns the function that ends
   * the record. A store without live replies has no claim: two requests answering one reply at
   * once may then both continue it.
   */
  async #claim(
    nodeId: string,
    messageId: string,
    at: string,
    start: ReplyStart,
  ): Promise<() => Promise<void>> {
    const store = this.#store;
    const chatId = this.#chatId;
    if (store.startReply === undefined || store.endReply === undefined) return async () => {};
    try {
      await store.startReply({
        chatId,
        replyId: messageId,
        branch: null,
        afterNodeId: nodeId,
        owner: start.owner,
        leaseMs: start.leaseMs,
        data: { ...start.data, continues: true },
      });
    } catch (error) {
      if (!LiveReplyConflictError.isInstance(error)) throw error;
      refuseContinuation(
        `another request is answering reply '${messageId}' right now (two tabs answered the same tool call): its answer continues the reply. Reload the chat to see it.`,
        at,
        'the reply is being answered',
      );
    }
    return async () => {
      await store
        .endReply?.({ chatId, replyId: messageId, owner: start.owner })
        .catch(() => undefined);
    };
  }

  /**
   * The client's messages located on the graph (`engine.locate`), where a client's copy of a reply
   * the cycle settled stands for that reply: a copy that differs from the stored one only by what
   * settling made ({@link isSettledCopy}) is replaced by it and the list located again. Each pass
   * takes one more message, so it ends within as many passes as the client sent replies.
   */
  async #locate(
    messages: readonly UI_MESSAGE[],
  ): Promise<{ located: LocateResult; messages: UI_MESSAGE[] }> {
    const list = messages.slice();
    for (;;) {
      const located = await this.#engine.locate(list);
      const changed = located.changed;
      const sent = changed === null ? undefined : list[changed.index];
      if (changed === null || sent === undefined || sent.role !== 'assistant')
        return { located, messages: list };
      const node = await this.#store.getMessage({
        chatId: this.#chatId,
        messageId: changed.nodeId,
      });
      const stored = node === null ? undefined : (withoutEngineMetadata(node.message) as UIMessage);
      if (stored === undefined) return { located, messages: list };
      // A reply whose process died was saved with the chunks it had written, and a tab may have
      // seen words after them: its copy is of the same reply, never an edit.
      const interrupted =
        node !== null &&
        usageOf(node)?.outcome === 'interrupted' &&
        sent.id === stored.id &&
        stored.role === 'assistant';
      if (!interrupted && !isSettledCopy(sent, stored)) return { located, messages: list };
      list[changed.index] = stored as UI_MESSAGE;
    }
  }

  /** The model input for the position: the budgeted `resolve({ format: 'model' })`. */
  async modelInput(budget: BudgetOptions | undefined): Promise<ModelInput> {
    const resolved = await this.#engine.resolve({ format: 'model', ...(budget ? { budget } : {}) });
    return {
      system: resolved.system ?? resolved.systemPrompt,
      messages: resolved.messages,
      // The prediction the reply's usage confirms (saveReply passes it to withUsage).
      ...(resolved.budget === undefined
        ? {}
        : { cache: resolved.budget.cache, tokens: resolved.budget.totalTokens }),
      ...(resolved.compaction === undefined ? {} : { compaction: resolved.compaction }),
    };
  }

  /**
   * The model input of a call retried after the provider refused `sent` as too long for the
   * model's context: resolved again with the budget {@link retryBudget} makes of the error's
   * figures (the turn's `budget` options kept, its `maxInputTokens` tightened), so older history
   * is left out, or, with the engine's `autoCompact`, summarized (the budget would have to cut, so
   * it compacts). Nothing is written but that compaction; the question was saved before. A budget
   * the required parts alone exceed throws (`BudgetExceededError`): no retry.
   */
  async retryInput(
    overflow: ContextOverflow,
    budget: BudgetOptions | undefined,
    sent: ModelInput,
  ): Promise<{ input: ModelInput; record: OverflowRetry }> {
    const counted = sent.tokens ?? (await this.#engine.inspect()).estimate.tokens;
    const maxInputTokens = retryBudget(counted, overflow, budget?.maxInputTokens);
    // A turn without a budget gets one for the retry only: its messages stay unmarked and no
    // cache prediction is recorded for it, as for its first call.
    const resolved = await this.#engine.resolve({
      format: 'model',
      budget:
        budget === undefined
          ? { maxInputTokens, cacheMarkers: 'none' }
          : { ...budget, maxInputTokens },
    });
    return {
      input: {
        system: resolved.system,
        messages: resolved.messages,
        ...(resolved.budget === undefined || budget === undefined
          ? {}
          : { cache: resolved.budget.cache, tokens: resolved.budget.totalTokens }),
      },
      record: {
        limit: overflow.limit ?? null,
        sent: overflow.sent ?? null,
        maxInputTokens,
        strategy: resolved.compaction?.status === 'compacted' ? 'compacted' : 'cut',
      },
    };
  }

  /**
   * Saves the reply after the position (or in place of the assistant message it continues), with
   * the usage of the whole call; `add` sums it with what the replaced message recorded.
   */
  async saveReply(
    reply: UI_MESSAGE,
    usage: ReplyUsage,
    options: { outcome: ReplyOutcome; add: boolean; endReply?: { replyId: string; owner: string } },
  ): Promise<void> {
    const fragment = withUsage(messageFragment(reply), {
      ...usage,
      add: options.add,
      outcome: options.outcome,
    });
    this.#engine.set(fragment);
    await this.#engine.save(options.endReply === undefined ? {} : { endReply: options.endReply });
  }
}
