import type { BudgetOptions, ContextEngine, ReplyOutcome } from '@ctxgraph/engine';
import {
  assertIdentifier,
  type ChatRecord,
  type ContextStore,
  CtxGraphError,
  MessageNotFoundError,
  NotFoundError,
  OwnershipError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import {
  generateId as defaultGenerateId,
  type InferUIMessageChunk,
  type ModelMessage,
  type SystemModelMessage,
  type UIMessage,
  type UIMessageStreamOptions,
} from 'ai';
import { ChatNotFoundForUserError, ChatRequestError, ReplyNotSavedError } from '../errors';
import {
  type ChatMessageSchemas,
  type ChatRequest,
  type ChatTrigger,
  readChatRequest,
  validateChatMessages,
} from '../request/read-chat-request';
import { CallUsage, type UsagePart } from '../stream/call-usage';
import type { ResumableStreams } from '../stream/resumable-streams';
import { toServerSentEvents, uiMessageStreamHeaders } from '../stream/server-sent-events';
import { FAILED_REASON, STOPPED_REASON, settleReply } from '../stream/settle-reply';
import {
  AttachedChat,
  type CycleEngineOptions,
  chatBelongsTo,
  type MessageVersion,
  ownedChat,
} from './attach';
import { settleClientMessages } from './client-copies';
import { ContinuationRefusedError } from './continuation-refused-error';
import { WarmEngines } from './warm-engines';

/** Options of {@link createChatCycle}. */
export interface ChatCycleOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** Where the chats live. */
  store: ContextStore;
  /**
   * The engine settings each request's engine opens with: `renderer` (required), tokenizer,
   * prices, `messageSchemas`, …
   */
  engine: CycleEngineOptions;
  /**
   * The AI SDK schemas the client's messages are validated with (`metadataSchema`,
   * `dataSchemas`, `tools`: the same `tools` you give `streamText`). Without them, metadata, data
   * parts and tool payloads are only checked for shape.
   */
  schemas?: ChatMessageSchemas<UI_MESSAGE>;
  /** Fit the model input to a token budget (`resolve({ budget })`, cache plan included). */
  budget?: BudgetOptions;
  /** Makes the ids of replies (server-side ids). @default the AI SDK's `generateId` */
  generateId?: () => string;
  /** Keep each chat's active reply stream so a reconnecting client can resume it. */
  streams?: ResumableStreams;
  /**
   * Stop the model call when the client disconnects (its `stop()`, a closed tab). The reply so
   * far is saved, marked `aborted`, with every part settled. With resumable streams, set it to
   * false so that a reload does not stop the reply (then stopping needs an endpoint of its own).
   * @default true
   */
  stopOnDisconnect?: boolean;
  /**
   * How many chats keep a warm engine between requests (least recently used dropped first; 0: a
   * fresh engine for every request). A warm engine has its chat's path cached and validated, so
   * a turn reads only what changed since (whichever process wrote it), not the whole history; it
   * shows and sends exactly what a fresh engine would. A request never shares its engine: while
   * one is under way, another request on the chat gets an engine of its own.
   * @default 100
   */
  warmEngines?: number;
  /** Called when a streamed reply could not be saved (the client gets an `error` chunk too). */
  onSaveError?: (error: unknown) => void;
  /**
   * Called once a reply is saved (not for a reply dropped because it had no content): which one,
   * how it ended, and how long the save took in milliseconds.
   */
  onReplySaved?: (event: ReplySavedEvent) => void;
}

/** What {@link ChatCycleOptions.onReplySaved} is told. */
export interface ReplySavedEvent {
  readonly chatId: string;
  readonly replyId: string;
  readonly outcome: ReplyOutcome;
  /** Milliseconds the save took. */
  readonly saveMs: number;
}

/** Options of {@link ChatCycle.begin}. */
export interface BeginTurnOptions {
  /** The signed-in user; a chat of another user is refused as unknown. */
  userId: string;
  /** The request's signal: the model call stops when it aborts. */
  signal?: AbortSignal;
  /** Sets the turn's system context on the engine (`engine.set(role(…))`, `loadContext()`). */
  context?: (engine: ContextEngine) => unknown;
  /**
   * This turn's token budget, in place of the cycle's `budget` (an app whose user picks the
   * budget per request). The reply is saved with the budget's cache prediction, so `usage()` and
   * `inspect()` report it predicted and, from the reply's usage, confirmed.
   * @default the cycle's `budget`
   */
  budget?: BudgetOptions;
  /**
   * The node a body with only the last message (`{ message }`) continues from when the chat does
   * not hold that message yet (a new question), in place of the chat's most recently written
   * message: for a client that shows one branch of the graph and knows its head. Null: a new
   * root. A node that is not in the chat is refused before anything is written. Ignored for a
   * body with all the messages (they say where they continue).
   * @default the most recently written message
   */
  after?: string | null;
}

/** Options of {@link ChatTurn.respond} and {@link ChatTurn.stream}. */
export interface RespondOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The model id recorded with the usage when the provider reports none. */
  modelId?: string;
  /** Metadata for the reply, on `start` and `finish` (the AI SDK's `messageMetadata`). */
  messageMetadata?: UIMessageStreamOptions<UI_MESSAGE>['messageMetadata'];
  /** Send reasoning parts. @default true */
  sendReasoning?: boolean;
  /** Send source parts. @default false */
  sendSources?: boolean;
  /** Words an error of the model call for the client. @default the AI SDK's 'An error occurred.' */
  onError?: (error: unknown) => string;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/** What the cycle needs of a `streamText` result (both AI SDK majors have it). */
export interface StreamTextResultLike<UI_MESSAGE extends UIMessage = UIMessage> {
  toUIMessageStream(
    options?: UIMessageStreamOptions<UI_MESSAGE>,
  ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
  readonly fullStream: AsyncIterable<unknown>;
}

/** One request of the cycle, after its messages were written and before the model is called. */
export interface ChatTurn<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat. */
  readonly chatId: string;
  /** What the client asked for. */
  readonly trigger: ChatTrigger;
  /** The request as read. */
  readonly request: ChatRequest<UI_MESSAGE>;
  /**
   * The request's engine, positioned where the reply goes. It is the turn's until the reply is
   * saved; after that the cycle may give it to the chat's next request (`warmEngines`), so use it
   * no longer (open an engine of your own, or read through the cycle).
   */
  readonly engine: ContextEngine;
  /** For `streamText({ system })`: the rendered context (a system message with its cache mark under a budget). */
  readonly system: string | SystemModelMessage;
  /** For `streamText({ messages })`: the conversation the reply answers, as model messages. */
  readonly messages: ModelMessage[];
  /** The conversation as stored, with the client's ids (the AI SDK's `originalMessages`). */
  readonly originalMessages: UI_MESSAGE[];
  /** The id the reply is streamed and stored under (the stream's `start` chunk carries it). */
  readonly replyId: string;
  /** For `streamText({ abortSignal })`: aborts when the request does or the client disconnects. */
  readonly abortSignal: AbortSignal;
  /**
   * Streams the reply to the client as the AI SDK's UI message stream response and saves it when
   * it ends, with the whole call's usage; a reply that cannot be saved ends the stream with an
   * `error` chunk.
   */
  respond(result: StreamTextResultLike<UI_MESSAGE>, options?: RespondOptions<UI_MESSAGE>): Response;
  /** The same as `respond`, as a chunk stream (for `createUIMessageStream`'s `writer.merge`). */
  stream(
    result: StreamTextResultLike<UI_MESSAGE>,
    options?: RespondOptions<UI_MESSAGE>,
  ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
}

/** Options of the cycle's reads. */
export interface ReadOptions {
  /** The signed-in user; a chat of another user reads as unknown. */
  userId: string;
}

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
   * does not have).
   */
  resume(chatId: string, options: ReadOptions): Promise<Response>;
}

/**
 * The AI SDK request cycle on a ctxgraph store: `useChat` / `AbstractChat` bodies mapped onto
 * the graph (submit continues the client's path; regenerate and edit are branches; a client-side
 * tool result continues its reply in place), the reply streamed with server-side ids and saved
 * with the whole call's usage, versions of a message, resumable streams.
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
  const { store } = options;
  const engineOptions = options.engine ?? {};
  if (engineOptions.renderer === undefined) {
    throw new ValidationError(
      'createChatCycle(options): engine.renderer is required (the system prompt is rendered on every turn), for example { engine: { renderer: new XmlRenderer() } } from @ctxgraph/renderer-xml.',
      { issues: [{ path: 'engine.renderer', message: 'expected a ContextRenderer' }] },
    );
  }
  const warmEngines = options.warmEngines ?? 100;
  if (!Number.isInteger(warmEngines) || warmEngines < 0) {
    throw new ValidationError(
      `createChatCycle(options): warmEngines must be a whole number of chats (0 for none), received ${String(warmEngines)}.`,
      { issues: [{ path: 'warmEngines', message: 'expected an integer >= 0' }] },
    );
  }
  const generateId = options.generateId ?? defaultGenerateId;
  const warm = new WarmEngines<UI_MESSAGE>(warmEngines);
  /**
   * The chat's warm engine (its context cleared: each request sets its own) when the pool has
   * one for this user and this chat (`owned`: the chat as just read), else a new engine.
   */
  const open = (
    chatId: string,
    userId: string,
    owned: ChatRecord | null,
  ): AttachedChat<UI_MESSAGE> => {
    const kept = owned === null ? undefined : warm.take(chatId, userId, owned.createdAt);
    if (kept === undefined)
      return new AttachedChat<UI_MESSAGE>(store, chatId, userId, engineOptions);
    kept.engine.replaceContext([]);
    return kept;
  };
  /** Runs a read on the chat's engine; the engine goes back to the pool when the read went well. */
  const read = async <T>(
    chatId: string,
    userId: string,
    task: (attached: AttachedChat<UI_MESSAGE>) => Promise<T>,
  ): Promise<T> => {
    const owned = await ownedChat(store, chatId, userId);
    if (owned === null) throw new ChatNotFoundForUserError(`No chat '${chatId}' for this user.`);
    const attached = open(chatId, userId, owned);
    const result = await task(attached);
    warm.give(attached);
    return result;
  };

  /**
   * What a request cannot ask of a chat that does not exist, refused before anything is written
   * (opening the chat would create it): to continue a reply (there is none), or to continue after
   * a node (`after`: there is none). A chat of another user is left to the ownership check.
   */
  const refuseOnNewChat = async (
    request: ChatRequest<UI_MESSAGE>,
    after: string | null | undefined,
  ): Promise<void> => {
    const last = request.messages.at(-1) as UI_MESSAGE;
    const continues = request.trigger === 'submit-message' && last.role === 'assistant';
    const placedAfter = request.lastOnly && typeof after === 'string';
    if (!continues && !placedAfter) return;
    if (placedAfter) assertIdentifier('begin(body, options)', 'options.after', after);
    if ((await store.getChat(request.chatId)) !== null) return;
    if (continues) {
      throw new ContinuationRefusedError(
        `Chat request refused: chat '${request.chatId}' does not exist yet, so it holds no reply '${last.id}' to continue.`,
        {
          issues: [
            {
              path: request.lastOnly ? 'message' : `messages[${request.messages.length - 1}]`,
              message: 'no such stored reply',
            },
          ],
        },
      );
    }
    throw new MessageNotFoundError(request.chatId, after as string);
  };

  return {
    async begin(body, beginOptions) {
      const schemas = options.schemas ?? ({} as ChatMessageSchemas<UI_MESSAGE>);
      const sent = await readChatRequest<UI_MESSAGE>(body, schemas, 'shape');
      // The client's copies of replies cut off mid-stream, as the cycle stores them (settled).
      const shaped = { ...sent, messages: settleClientMessages(sent.messages) };
      // A chat that exists has its messages validated on write: only the messages it does not
      // hold yet are validated (after locating them). A new chat is validated whole, up front, so
      // a bad body never creates it.
      const owned = await ownedChat(store, shaped.chatId, beginOptions.userId);
      if (owned === null) await refuseOnNewChat(shaped, beginOptions.after);
      const fresh = shaped.lastOnly || owned === null;
      const request = fresh
        ? { ...shaped, messages: await validateChatMessages(shaped, 0, schemas) }
        : shaped;
      const validateFrom = (from: number): Promise<UI_MESSAGE[]> =>
        fresh
          ? Promise.resolve(request.messages.slice(from))
          : validateChatMessages(request, from, schemas);
      if (request.trigger === 'regenerate-message' && request.messages.at(-1)?.role !== 'user') {
        throw new ChatRequestError(
          'Chat request refused: a regenerate-message body ends with the user message whose reply is regenerated.',
          { issues: [{ path: 'messages', message: 'expected a user message last' }] },
        );
      }
      let attached: AttachedChat<UI_MESSAGE>;
      try {
        attached = open(request.chatId, beginOptions.userId, owned);
        await beginOptions.context?.(attached.engine);
        const placed = await attached.place(request, validateFrom, beginOptions.after);
        const input = await attached.modelInput(beginOptions.budget ?? options.budget);
        return makeTurn(
          request,
          attached,
          placed.path,
          placed.continues,
          input,
          beginOptions.signal,
        );
      } catch (error) {
        if (OwnershipError.isInstance(error)) {
          throw new ChatNotFoundForUserError(`No chat '${request.chatId}' for this user.`, {
            cause: error,
          });
        }
        throw error;
      }
    },
    messages(chatId, readOptions) {
      return read(chatId, readOptions.userId, (attached) => attached.path(readOptions.leaf));
    },
    versions(chatId, messageId, readOptions) {
      return read(chatId, readOptions.userId, (attached) => attached.versions(messageId));
    },
    openVersion(chatId, leafNodeId, readOptions) {
      return read(chatId, readOptions.userId, (attached) => attached.pathToNode(leafNodeId));
    },
    async resume(chatId, readOptions) {
      // A chat that does not exist (yet) has nothing to resume: 204, as for one at rest, so a
      // client that resumes on mount can start a new chat.
      if (!(await chatBelongsTo(store, chatId, readOptions.userId))) {
        return new Response(null, { status: 204 });
      }
      const stream = await options.streams?.resume(chatId);
      if (!stream) return new Response(null, { status: 204 });
      return new Response(stream.pipeThrough(new TextEncoderStream()), {
        headers: uiMessageStreamHeaders,
      });
    },
  };

  function makeTurn(
    request: ChatRequest<UI_MESSAGE>,
    attached: AttachedChat<UI_MESSAGE>,
    path: UI_MESSAGE[],
    continues: UI_MESSAGE | undefined,
    input: { system: string | SystemModelMessage; messages: ModelMessage[]; cache?: unknown },
    signal: AbortSignal | undefined,
  ): ChatTurn<UI_MESSAGE> {
    const disconnect = new AbortController();
    const abortSignal = signal ? AbortSignal.any([signal, disconnect.signal]) : disconnect.signal;
    const replyId = continues?.id ?? generateId();
    let used = false;
    const stream = (
      result: StreamTextResultLike<UI_MESSAGE>,
      respondOptions: RespondOptions<UI_MESSAGE> = {},
    ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>> => {
      if (used) {
        throw new CtxGraphError(
          'A chat turn streams one reply: respond() or stream() was already called.',
        );
      }
      used = true;
      return runReply({
        request,
        attached,
        path,
        continues,
        replyId,
        result,
        respondOptions,
        disconnect,
        cache: input.cache,
      });
    };
    return {
      chatId: request.chatId,
      trigger: request.trigger,
      request,
      engine: attached.engine,
      system: input.system,
      messages: input.messages,
      originalMessages: path,
      replyId,
      abortSignal,
      stream,
      respond(result, respondOptions = {}) {
        const chunks = stream(result, respondOptions);
        return new Response(toServerSentEvents(chunks).pipeThrough(new TextEncoderStream()), {
          headers: { ...uiMessageStreamHeaders, ...respondOptions.headers },
        });
      },
    };
  }

  function runReply(run: {
    request: ChatRequest<UI_MESSAGE>;
    attached: AttachedChat<UI_MESSAGE>;
    path: UI_MESSAGE[];
    continues: UI_MESSAGE | undefined;
    replyId: string;
    result: StreamTextResultLike<UI_MESSAGE>;
    respondOptions: RespondOptions<UI_MESSAGE>;
    disconnect: AbortController;
    /** The budgeted resolve's cache prediction, confirmed by the reply's usage when saved. */
    cache: unknown;
  }): ReadableStream<InferUIMessageChunk<UI_MESSAGE>> {
    type Chunk = InferUIMessageChunk<UI_MESSAGE>;
    const { result, respondOptions } = run;
    const stopOnDisconnect = options.stopOnDisconnect ?? true;
    const subscribers = new Set<ReadableStreamDefaultController<Chunk>>();
    const broadcast = (chunk: Chunk): void => {
      for (const controller of subscribers) {
        try {
          controller.enqueue(chunk);
        } catch {
          subscribers.delete(controller);
        }
      }
    };
    const closeAll = (): void => {
      for (const controller of subscribers) {
        try {
          controller.close();
        } catch {
          // already closed or cancelled
        }
      }
      subscribers.clear();
    };
    let client!: ReadableStreamDefaultController<Chunk>;
    const clientStream = new ReadableStream<Chunk>({
      start(controller) {
        client = controller;
        subscribers.add(controller);
      },
      cancel() {
        subscribers.delete(client);
        if (stopOnDisconnect) run.disconnect.abort();
      },
    });
    const streamId = generateId();
    const streams = options.streams;
    if (streams) {
      const recorded = new ReadableStream<Chunk>({
        start(controller) {
          subscribers.add(controller);
        },
      });
      void streams
        .publish({ chatId: run.request.chatId, streamId, stream: toServerSentEvents(recorded) })
        .catch(() => undefined);
    }

    const usage = new CallUsage();
    const usageRead = (async () => {
      for await (const part of result.fullStream) usage.observe(part as UsagePart);
    })().catch(() => undefined);
    let finished: { responseMessage: UI_MESSAGE; isAborted: boolean } | undefined;
    const source = result.toUIMessageStream({
      originalMessages: run.path,
      generateMessageId: () => run.replyId,
      onFinish: ({ responseMessage, isAborted }) => {
        finished = { responseMessage, isAborted };
      },
      ...(respondOptions.messageMetadata
        ? { messageMetadata: respondOptions.messageMetadata }
        : {}),
      ...(respondOptions.sendReasoning === undefined
        ? {}
        : { sendReasoning: respondOptions.sendReasoning }),
      ...(respondOptions.sendSources === undefined
        ? {}
        : { sendSources: respondOptions.sendSources }),
      ...(respondOptions.onError ? { onError: respondOptions.onError } : {}),
    });

    void (async () => {
      let held: Chunk | undefined;
      let failed = false;
      let aborted = false;
      const reader = source.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const chunk = value as Chunk & { type: string };
          if (chunk.type === 'finish') {
            held = chunk;
            continue;
          }
          if (chunk.type === 'error') failed = true;
          if (chunk.type === 'abort') aborted = true;
          broadcast(chunk);
        }
      } catch (error) {
        failed = true;
        broadcast({
          type: 'error',
          errorText: respondOptions.onError?.(error) ?? 'An error occurred.',
        } as Chunk);
      }
      await usageRead;
      try {
        const reply = finished?.responseMessage;
        const outcome: ReplyOutcome =
          aborted || finished?.isAborted === true ? 'aborted' : failed ? 'error' : 'complete';
        // A complete reply is stored as it ended: a client-side tool call waiting for its result
        // (`input-available`) is how such a reply ends, not an unfinished part.
        const toSave =
          reply === undefined || outcome === 'complete'
            ? reply
            : settleReply(reply, outcome === 'aborted' ? STOPPED_REASON : FAILED_REASON);
        if (toSave !== undefined) {
          const started = performance.now();
          await run.attached.saveReply(
            toSave,
            {
              usage: usage.usage(),
              ...(usage.steps() === undefined ? {} : { steps: usage.steps() }),
              modelId: usage.modelId ?? respondOptions.modelId ?? 'unknown',
              ...(run.cache === undefined ? {} : { cache: run.cache }),
            },
            { outcome, add: run.continues !== undefined },
          );
          options.onReplySaved?.({
            chatId: run.request.chatId,
            replyId: toSave.id,
            outcome,
            saveMs: performance.now() - started,
          });
        }
        // The turn ended well: its engine serves the chat's next request warm.
        warm.give(run.attached);
        if (held) broadcast(held);
      } catch (error) {
        const saveError = new ReplyNotSavedError(
          `The reply could not be saved: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
        broadcast({ type: 'error', errorText: saveError.message } as Chunk);
        options.onSaveError?.(saveError);
      } finally {
        closeAll();
        if (streams)
          await streams.finish({ chatId: run.request.chatId, streamId }).catch(() => undefined);
      }
    })();
    return clientStream;
  }
}

/**
 * The HTTP answer for an error of the cycle, as JSON `{ error }`: 400 for input refused before
 * anything was done with it (a `ChatRequestError`, with its `issues`; any `ValidationError`, such
 * as a chat, leaf, node or message id a read route got that the store refuses: too long, NUL, a
 * lone surrogate), 404 for something unknown (`ChatNotFoundForUserError`, any `NotFoundError` such
 * as the unknown node of `openVersion`, and a chat of another user, answered as unknown so that
 * its existence is not revealed); undefined for anything else (let it be a 500).
 */
export function chatErrorResponse(error: unknown): Response | undefined {
  if (ValidationError.isInstance(error)) {
    return Response.json({ error: error.message, issues: error.issues }, { status: 400 });
  }
  if (OwnershipError.isInstance(error)) {
    return Response.json({ error: `No chat '${error.chatId}' for this user.` }, { status: 404 });
  }
  if (NotFoundError.isInstance(error)) {
    return Response.json({ error: error.message }, { status: 404 });
  }
  return undefined;
}
