import type { ContextEngine, MessageVersion } from '@ctxgraph/engine';
import {
  ChatNotFoundError,
  OwnershipError,
  UnsupportedCapabilityError,
} from '@ctxgraph/fragments-core';
import { generateId as defaultGenerateId, type UIMessage } from 'ai';
import { ChatNotFoundForUserError } from '../errors';
import {
  chatEvents,
  endExpiredBeforeRead,
  followReply,
  type LiveCycle,
  replyFollows,
  stopReplies,
} from '../live/live-replies';
import { liveSettingsOf, liveStoreOf } from '../live/live-settings';
import type { ChatMessageSchemas } from '../request/read-chat-request';
import { resumeResponse } from '../stream/reply-response';
import { beginTurn } from './begin-turn';
import { ChatEngines } from './chat-engines';
import {
  conversationTo,
  conversationToNode,
  outcomesOf,
  type StoredConversation,
  versionsAlong,
  versionsOf,
} from './chat-reads';
import { type ChatTurn, createChatTurn } from './chat-turn';
import { type ContextGauge, type ContextGaugeOptions, contextGaugeOf } from './context-gauge';
import {
  type BeginTurnOptions,
  type ChatCycleOptions,
  checkCycleOptions,
  type FollowOptions,
  type ReadOptions,
} from './cycle-options';

// The names the cycle's tests and users reach through this module.
export { chatErrorResponse } from './chat-error-response';
export type { ConversationVersions, StoredConversation } from './chat-reads';
export type { ChatTurn } from './chat-turn';
export type { ContextGauge, ContextGaugeOptions } from './context-gauge';

/** The AI SDK request cycle on a ctxgraph store. */
export interface ChatCycle<UI_MESSAGE extends UIMessage = UIMessage> {
  /**
   * Reads the transport's body, validates it (a {@link ChatRequestError} before anything is
   * written), places it on the graph and saves the client's new messages, then resolves the model
   * input. Hand the turn's `system`, `messages` and `abortSignal` to `streamText`, then return
   * `turn.respond(result)`.
   */
  begin(body: unknown, options: BeginTurnOptions): Promise<ChatTurn<UI_MESSAGE>>;
  /**
   * Runs `task` on the chat's engine: its warm engine when the cycle keeps one (`warmEngines`),
   * else a new one; no other request uses that engine meanwhile, and it is kept warm for the
   * chat's next request once the task went well (dropped, with anything left pending, when it
   * failed). The chat is checked first (one read of it): `ChatNotFoundError` for a chat that does
   * not exist, which is not created, and `OwnershipError` for another user's, before the task
   * runs (`chatErrorResponse` answers both 404). The engine is where the chat's last request left
   * it (a new engine: the chat's active branch) and holds the context that request set: a task
   * that depends on either sets it (`continueFrom`, `loadContext`). `messages`, `versions` and
   * `openVersion` are reads through it.
   *
   * @example
   * ```ts
   * const usage = await cycle.read(chatId, { userId }, (engine) => engine.usage({ scope: 'chat' }));
   * ```
   */
  read<T>(
    chatId: string,
    options: ReadOptions,
    task: (engine: ContextEngine) => T | Promise<T>,
  ): Promise<T>;
  /**
   * The conversation from the root to `leaf` (a message id; on several branches, the most
   * recently written), or to the chat's most recently written message. Unknown chat or leaf:
   * {@link ChatNotFoundForUserError}.
   */
  messages(chatId: string, options: ReadOptions & { leaf?: string }): Promise<UI_MESSAGE[]>;
  /** The versions of a message (the ChatGPT-style "2 / 3"), oldest first. */
  versions(
    chatId: string,
    messageId: string,
    options: ReadOptions,
  ): Promise<MessageVersion<UI_MESSAGE>[]>;
  /** The conversation a version shows: from the root to its `leafNodeId`. */
  openVersion(chatId: string, leafNodeId: string, options: ReadOptions): Promise<UI_MESSAGE[]>;
  /**
   * The answer to the AI SDK's resume request (`GET …/:id/stream`): the chat's active reply
   * stream, or 204 when none is streaming (always without `streams`, and for a chat this user
   * does not have). A live reply's answer names the message it answers in the
   * `x-ctxgraph-reply-follows` header (`REPLY_FOLLOWS_HEADER`).
   */
  resume(chatId: string, options: FollowOptions): Promise<Response>;
  /**
   * Stops the chat's live replies (or the one named by `messageId`) wherever they are generated,
   * and resolves once they are saved (outcome `aborted`; a reply whose process died is saved as
   * `interrupted`): the most recently started one's id, or null when none was live. Unknown
   * chat: {@link ChatNotFoundForUserError}. Needs live replies (else an
   * `UnsupportedCapabilityError`).
   */
  stop(
    chatId: string,
    options: ReadOptions & { messageId?: string },
  ): Promise<{ messageId: string } | null>;
  /**
   * The chat's changes as server-sent events (`text/event-stream`): one event with its state at
   * once, then one after each change made by any process (changes close together share one):
   * `data: {"version":n,"live":id|null,"follows":id|null}`, `version` the chat's change revision (a number that only grows),
   * `live` the most recently started live reply (null only once the ended reply is saved),
   * `follows` the id of the message that reply answers (the question it follows, so another tab
   * places it; null without a live reply, and for a continuation, whose `live` is the stored
   * reply it continues); comments as heartbeats. Ends with `signal`. Unknown chat: {@link ChatNotFoundForUserError}. Needs live
   * replies (else an `UnsupportedCapabilityError`).
   */
  events(chatId: string, options: FollowOptions): Promise<Response>;
  /**
   * `messages` with, by message id, the outcome of each reply on the path that was stopped
   * (`aborted`) or whose process died (`interrupted`), the overflow retry of each reply whose
   * first call was refused as too long (`retries`), the node of each message (`nodeIds`), and
   * the versions of each message that has more than one (`versions`: the position of the one on
   * this path and every version's node with its newest leaf), so a client shows "2 / 3" beside
   * each message and opens another version without a request per message. With `node` (a
   * version's `leafNodeId`), the conversation `openVersion` gives instead. The versions cost one
   * read of the chat's graph, however many messages have them.
   */
  conversation(
    chatId: string,
    options: ReadOptions & { leaf?: string; node?: string },
  ): Promise<StoredConversation<UI_MESSAGE>>;
  /**
   * The chat's context use and cost, for a small gauge beside it: the tokens the next call would
   * send from the newest path (or from `node`), the budget's window, the recorded usage and cost
   * of the chat so far, and, with a budget, the next call's cache prediction (from the engine's
   * `inspect()`). Pass the turns' `context` and `budget` so the gauge counts what they send.
   * Unknown chat: {@link ChatNotFoundForUserError}.
   *
   * @example
   * ```ts
   * const { tokens, maxInputTokens, usage } = await cycle.contextGauge(chatId, { userId });
   * ```
   */
  contextGauge(chatId: string, options: ContextGaugeOptions): Promise<ContextGauge>;
}

/**
 * The AI SDK request cycle on a ctxgraph store: `useChat` / `AbstractChat` bodies mapped onto
 * the graph (submit continues the client's path; regenerate and edit are branches; a client-side
 * tool result continues its reply in place), the reply streamed with server-side ids and saved
 * with the whole call's usage, versions of a message, resumable streams.
 *
 * It is put together from parts with one job each: `beginTurn` (read, validate, place:
 * `AttachedChat` in attach.ts), `createChatTurn` (the turn and its reply: the reply saver and the
 * response), `ChatEngines` (warm engines and the general read) and the reads of chat-reads.ts.
 *
 * @example
 * ```ts
 * const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
 * app.post('/api/chat', async (c) => {
 *   const turn = await cycle.begin(await c.req.json(), { userId, signal: c.req.raw.signal });
 *   const result = streamText({ model, system: turn.system, messages: turn.messages, abortSignal: turn.abortSignal });
 *   return turn.respond(result);
 * });
 * ```
 */
export function createChatCycle<UI_MESSAGE extends UIMessage = UIMessage>(
  options: ChatCycleOptions<UI_MESSAGE>,
): ChatCycle<UI_MESSAGE> {
  const { warmEngines } = checkCycleOptions(options as ChatCycleOptions<UIMessage>);
  const { store } = options;
  const engines = new ChatEngines<UI_MESSAGE>(store, options.engine, warmEngines);
  const generateId = options.generateId ?? defaultGenerateId;
  const liveSettings = liveSettingsOf(store, options.live);
  // The store's live replies serve continuation claims and end replies whose writer died even
  // when the cycle does not stream into them (`live: false`).
  const liveStore = liveSettings?.store ?? liveStoreOf(store);
  const liveCycle: LiveCycle | undefined =
    liveStore === undefined
      ? undefined
      : {
          settings: liveSettings ?? { store: liveStore, leaseMs: 10_000, flushMs: 100 },
          generateId,
          onEngine: (chatId, userId, task) => engines.read(chatId, userId, task),
        };
  const settings = {
    engines,
    generateId,
    streams: options.streams,
    stopOnDisconnect: options.stopOnDisconnect ?? liveSettings === undefined,
    onReplySaved: options.onReplySaved,
    onSaveError: options.onSaveError,
    live: liveSettings,
    store,
    tokenizer: options.engine.tokenizer,
    compacting: new Set<string>(),
    onCompaction: options.onCompaction,
    waitUntil: options.waitUntil,
  };
  /** The chat when it is this user's, else a ChatNotFoundForUserError. */
  const ownedOrRefused = async (chatId: string, userId: string): Promise<void> => {
    if ((await engines.owned(chatId, userId)) === null)
      throw new ChatNotFoundForUserError(`No chat '${chatId}' for this user.`);
  };
  const requireLive = (method: string): LiveCycle => {
    if (liveSettings === undefined || liveCycle === undefined) {
      // A cycle with `live: false` is refused the same way as a store without live replies.
      throw new UnsupportedCapabilityError(`cycle.${method}()`, 'liveReplies');
    }
    return liveCycle;
  };
  /**
   * A read of the cycle's own: an unknown chat and another user's read alike, as unknown. A read
   * looks at the chat: replies whose process died are ended (saved `interrupted`) before it, so
   * it shows them as stored.
   */
  const readAsUnknown = async <T>(
    chatId: string,
    readOptions: ReadOptions,
    task: (engine: ContextEngine) => Promise<T>,
  ): Promise<T> => {
    try {
      return await engines.read(chatId, readOptions.userId, async (engine) => {
        if (liveCycle !== undefined) await endExpiredBeforeRead<UI_MESSAGE>(liveCycle, engine);
        return task(engine);
      });
    } catch (error) {
      if (ChatNotFoundError.isInstance(error) || OwnershipError.isInstance(error)) {
        throw new ChatNotFoundForUserError(`No chat '${chatId}' for this user.`, { cause: error });
      }
      throw error;
    }
  };
  return {
    async begin(body, beginOptions) {
      const begun = await beginTurn(body, beginOptions, {
        store,
        engines,
        schemas: options.schemas ?? ({} as ChatMessageSchemas<UI_MESSAGE>),
        budget: options.budget,
        generateId,
        live:
          liveCycle === undefined
            ? undefined
            : { cycle: liveCycle, on: liveSettings !== undefined },
      });
      return createChatTurn(
        begun,
        beginOptions.signal,
        beginOptions.waitUntil === undefined
          ? settings
          : { ...settings, waitUntil: beginOptions.waitUntil },
      );
    },
    read(chatId, readOptions, task) {
      return engines.read(chatId, readOptions.userId, task);
    },
    messages(chatId, readOptions) {
      return readAsUnknown(chatId, readOptions, (engine) =>
        conversationTo<UI_MESSAGE>(engine, store, readOptions.leaf),
      );
    },
    versions(chatId, messageId, readOptions) {
      return readAsUnknown(chatId, readOptions, (engine) =>
        versionsOf<UI_MESSAGE>(engine, messageId),
      );
    },
    openVersion(chatId, leafNodeId, readOptions) {
      return readAsUnknown(chatId, readOptions, (engine) =>
        conversationToNode<UI_MESSAGE>(engine, leafNodeId),
      );
    },
    async resume(chatId, readOptions) {
      // A chat that does not exist (yet) has nothing to resume: 204, as for one at rest, so a
      // client that resumes on mount can start a new chat.
      if ((await engines.owned(chatId, readOptions.userId)) === null) return resumeResponse(null);
      if (liveSettings !== undefined && liveCycle !== undefined) {
        const state = await liveSettings.store.getLiveState(chatId);
        const newest = state.replies.at(-1);
        if (newest === undefined) return resumeResponse(null);
        return resumeResponse(
          followReply<UI_MESSAGE>(liveCycle, newest, readOptions.userId, readOptions.signal),
          replyFollows(newest),
        );
      }
      return resumeResponse((await options.streams?.resume(chatId)) ?? null);
    },
    async stop(chatId, stopOptions) {
      const live = requireLive('stop');
      await ownedOrRefused(chatId, stopOptions.userId);
      return stopReplies<UI_MESSAGE>(live, chatId, stopOptions.userId, stopOptions.messageId);
    },
    async events(chatId, eventOptions) {
      const live = requireLive('events');
      await ownedOrRefused(chatId, eventOptions.userId);
      return new Response(
        chatEvents<UI_MESSAGE>(live, chatId, eventOptions.userId, eventOptions.signal),
        {
          headers: {
            'content-type': 'text/event-stream',
            'cache-control': 'no-cache',
            connection: 'keep-alive',
            'x-accel-buffering': 'no',
          },
        },
      );
    },
    conversation(chatId, readOptions) {
      return readAsUnknown(chatId, readOptions, async (engine) => {
        const messages =
          readOptions.node === undefined
            ? await conversationTo<UI_MESSAGE>(engine, store, readOptions.leaf)
            : await conversationToNode<UI_MESSAGE>(engine, readOptions.node);
        // Two reads at once (the path's records, the chat's graph): one round trip of waiting.
        const [records, along] = await Promise.all([
          outcomesOf(engine, store, messages),
          versionsAlong(engine, messages),
        ]);
        return { messages, ...records, ...along };
      });
    },
    contextGauge(chatId, gaugeOptions) {
      return readAsUnknown(chatId, gaugeOptions, (engine) =>
        contextGaugeOf(engine, store, gaugeOptions, gaugeOptions.budget ?? options.budget),
      );
    },
  };
}
