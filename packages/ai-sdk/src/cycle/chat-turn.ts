import type {
  AutoCompaction,
  CachePrediction,
  ContextEngine,
  ReplyOutcome,
} from '@ctxgraph/engine';
import {
  type ContextStore,
  CtxGraphError,
  type JsonValue,
  type Tokenizer,
} from '@ctxgraph/fragments-core';
import type { InferUIMessageChunk, ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import {
  type HistoryTools,
  type HistoryToolsOptions,
  historyTools,
} from '../history/history-tools';
import { ChunkBatcher } from '../live/chunk-batcher';
import type { LiveSettings } from '../live/live-settings';
import type { ChatRequest, ChatTrigger } from '../request/read-chat-request';
import type { CallUsage, ReplyUsage } from '../stream/call-usage';
import {
  openRetryingSource,
  type TurnModelCall,
  type TurnModelInput,
} from '../stream/overflow-retry-source';
import { deliverReply, replyResponse } from '../stream/reply-response';
import { createReplySaver } from '../stream/reply-saver';
import type { RespondOptions } from '../stream/reply-source';
import type { ResumableStreams } from '../stream/resumable-streams';
import type { ModelInput } from './attach';
import { type BackgroundSettings, compactInBackground } from './background-compaction';
import type { BegunTurn } from './begin-turn';
import type { ChatEngines } from './chat-engines';
import type { ReplySavedEvent } from './cycle-options';

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
  /**
   * For `streamText({ system })`: the rendered context (a system message with its cache mark
   * under a budget). After an overflow retry, the retried call's.
   */
  readonly system: string | SystemModelMessage;
  /**
   * For `streamText({ messages })`: the conversation the reply answers, as model messages. After
   * an overflow retry, the retried call's (less history).
   */
  readonly messages: ModelMessage[];
  /** The conversation as stored, with the client's ids (the AI SDK's `originalMessages`). */
  readonly originalMessages: UI_MESSAGE[];
  /** The id the reply is streamed and stored under (the stream's `start` chunk carries it). */
  readonly replyId: string;
  /**
   * For `streamText({ abortSignal })`: aborts on a stop (`cycle.stop()` from any process, with
   * live replies) and, with `stopOnDisconnect`, when the client disconnects (the request's
   * signal, or the response's body cancelled).
   */
  readonly abortSignal: AbortSignal;
  /**
   * Streams the reply to the client as the AI SDK's UI message stream response and saves it when
   * it ends, with the whole call's usage; a reply that cannot be saved ends the stream with an
   * `error` chunk.
   *
   * `call` is the `streamText` result, or a function that makes it from the input it is given
   * (`(input) => streamText({ model, ...input })`: `system`, `messages`, `abortSignal`). With a
   * function, a call the provider refuses as too long for the model's context (before any
   * output) is retried once, before anything reaches the client or the store, with a tighter
   * budget: older history left out, or summarized with the engine's `autoCompact`. The reply is
   * saved once, with the retry in its usage record (`usageOf(node).overflowRetry`). A second
   * overflow ends the reply with its error, as any failed call does.
   */
  respond(call: TurnModelCall<UI_MESSAGE>, options?: RespondOptions<UI_MESSAGE>): Response;
  /**
   * The history tools for this turn's model call (`streamText({ tools: turn.historyTools() })`):
   * `searchHistory`, `listBranches` and `readBranch` (see `historyTools`), acting for the turn's
   * user only, on this chat and the turn's branch by default, their results counted with the
   * cycle's tokenizer (`engine.tokenizer`). Their calls are saved with the reply, as any
   * server-side tool's.
   *
   * @example
   * ```ts
   * const result = streamText({ model, system: turn.system, messages: turn.messages,
   *   tools: turn.historyTools(), stopWhen: stepCountIs(5), abortSignal: turn.abortSignal });
   * ```
   */
  historyTools(options?: TurnHistoryToolsOptions): HistoryTools;
  /**
   * With the engine's `autoCompact: { policy: 'cost' }`: the compaction this turn's resolve
   * deferred (it pays over the next calls), run after the reply is saved, in the background;
   * resolves to what it did (`'compacted'`, `'superseded'`, `'failed'` with `error`), or to
   * undefined when none was due or the reply was not saved. Never rejects. The cycle hands it to
   * `waitUntil` when it has one; elsewhere await it, or leave it (the process runs it anyway).
   */
  readonly compaction: Promise<AutoCompaction | undefined>;
  /** The same as `respond`, as a chunk stream (for `createUIMessageStream`'s `writer.merge`). */
  stream(
    call: TurnModelCall<UI_MESSAGE>,
    options?: RespondOptions<UI_MESSAGE>,
  ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
}

/** Options of {@link ChatTurn.historyTools}. */
export type TurnHistoryToolsOptions = Pick<HistoryToolsOptions, 'maxResultTokens'>;

/** What a turn's reply needs of the cycle. */
export interface TurnSettings<UI_MESSAGE extends UIMessage = UIMessage>
  extends BackgroundSettings<UI_MESSAGE> {
  readonly engines: ChatEngines<UI_MESSAGE>;
  readonly generateId: () => string;
  readonly streams: ResumableStreams | undefined;
  readonly stopOnDisconnect: boolean;
  readonly onReplySaved: ((event: ReplySavedEvent) => void) | undefined;
  readonly onSaveError: ((error: unknown) => void) | undefined;
  /** The store's live replies, when the cycle streams replies into them. */
  readonly live: LiveSettings | undefined;
  /** The cycle's store (the history tools read it). */
  readonly store: ContextStore;
  /** The engines' tokenizer (`engine.tokenizer`), when the cycle sets one. */
  readonly tokenizer: Tokenizer | undefined;
}

/**
 * The turn of a begun request. Its reply runs through three parts: the model call's chunks
 * (`openReplySource`), the reply saver (`createReplySaver`: settles and saves the reply when the
 * chunks end, with the call's usage, then gives the engine back), and the response
 * (`deliverReply`: the client's stream and the resumable copy; `replyResponse` over HTTP).
 *
 * The model call stops on the turn's `abortSignal`: a stop asked for through the store (live
 * replies), or the client's disconnect (the request's signal or the response's cancel) when the
 * cycle has `stopOnDisconnect`.
 */
export function createChatTurn<UI_MESSAGE extends UIMessage>(
  begun: BegunTurn<UI_MESSAGE>,
  signal: AbortSignal | undefined,
  settings: TurnSettings<UI_MESSAGE>,
): ChatTurn<UI_MESSAGE> {
  const { request, attached, placed, owner } = begun;
  // The input of the turn's model call: the begun one, or the overflow retry's.
  let input: ModelInput = begun.input;
  const disconnect = new AbortController();
  // The request's signal aborts when its client goes away: a disconnect, which stops the reply
  // only when the app asks for that (`stopOnDisconnect`). Otherwise the reply runs to its end
  // and is saved whole (live replies keep it resumable meanwhile).
  const abortSignal =
    signal !== undefined && settings.stopOnDisconnect
      ? AbortSignal.any([signal, disconnect.signal])
      : disconnect.signal;
  const replyId = placed.replyId;
  const live = settings.live !== undefined && owner !== undefined ? settings.live : undefined;
  let settleCompaction: (value: Promise<AutoCompaction | undefined> | undefined) => void = () => {};
  const compaction = new Promise<AutoCompaction | undefined>((resolve) => {
    settleCompaction = resolve;
  });
  let used = false;
  const modelInput = (): TurnModelInput => ({
    system: input.system,
    messages: input.messages,
    abortSignal,
  });
  const stream = (
    call: TurnModelCall<UI_MESSAGE>,
    options: RespondOptions<UI_MESSAGE> = {},
  ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>> => {
    if (used) {
      throw new CtxGraphError(
        'A chat turn streams one reply: respond() or stream() was already called.',
      );
    }
    used = true;
    const streamId = settings.generateId();
    const source = openRetryingSource(
      call,
      modelInput(),
      { originalMessages: placed.path, replyId, options },
      async (overflow) => {
        const retry = await attached.retryInput(overflow, begun.budget, input);
        input = retry.input;
        return { input: modelInput(), record: retry.record };
      },
    );
    // Live replies: every chunk goes to the store too, in batches; a stop asked for anywhere
    // (seen by an append) stops the model call.
    let stopRequested = false;
    let stoppedByRequest = false;
    const batcher =
      live === undefined || owner === undefined
        ? undefined
        : new ChunkBatcher(live, { chatId: request.chatId, replyId, owner }, 0, (why) => {
            if (why === 'requested') stopRequested = true;
            disconnect.abort();
          });
    const endReply = batcher === undefined ? undefined : { replyId, owner: owner as string };
    const keep = async (reply: UI_MESSAGE | undefined, outcome: ReplyOutcome): Promise<void> => {
      try {
        await keepReply(reply, outcome);
      } finally {
        // Whatever happened, the turn's compaction promise settles (undefined when none ran).
        settleCompaction(undefined);
      }
    };
    const keepReply = async (
      reply: UI_MESSAGE | undefined,
      outcome: ReplyOutcome,
    ): Promise<void> => {
      const usage = await source.usage;
      try {
        // Every chunk a reader got is in the store before the save that ends the record.
        await batcher?.flush();
      } finally {
        batcher?.close();
      }
      if (reply === undefined && live !== undefined && endReply !== undefined)
        await live.store.endReply({ chatId: request.chatId, ...endReply });
      if (reply !== undefined) {
        const started = performance.now();
        await attached.saveReply(reply, replyUsage(usage, options.modelId, input.cache, source), {
          outcome,
          add: placed.continues !== undefined,
          ...(endReply === undefined ? {} : { endReply }),
        });
        settings.onReplySaved?.({
          chatId: request.chatId,
          replyId: reply.id,
          outcome,
          saveMs: performance.now() - started,
        });
      }
      // The turn ended well: its engine serves the chat's next request warm, once the
      // compaction its resolve deferred ran (in the background: the stream ends now).
      if (reply !== undefined && input.compaction?.status === 'deferred')
        settleCompaction(compactInBackground(attached, request.chatId, settings));
      else settings.engines.give(attached);
    };
    // A requested stop ends the reply as a reply ends, for every reader alike: the model call's
    // `abort` chunk becomes the `finish` chunk (held by the saver until the reply is saved
    // `aborted`), and the store gets it with the other chunks.
    const each =
      batcher === undefined
        ? undefined
        : (chunk: InferUIMessageChunk<UI_MESSAGE>): InferUIMessageChunk<UI_MESSAGE> => {
            const passed =
              stopRequested && (chunk as { type: string }).type === 'abort'
                ? ({ type: 'finish' } as typeof chunk)
                : chunk;
            if (passed !== chunk) stoppedByRequest = true;
            batcher.push(passed as JsonValue);
            return passed;
          };
    const saved = source.chunks.pipeThrough(
      createReplySaver({
        ended: source.ended,
        keep,
        each,
        stopped: () => stoppedByRequest,
        onSaveError: settings.onSaveError,
      }),
    );
    return deliverReply(saved, {
      chatId: request.chatId,
      streamId,
      streams: settings.streams,
      onDisconnect: () => {
        if (settings.stopOnDisconnect) disconnect.abort();
      },
    });
  };
  return {
    chatId: request.chatId,
    trigger: request.trigger,
    request,
    engine: attached.engine,
    get system() {
      return input.system;
    },
    get messages() {
      return input.messages;
    },
    originalMessages: placed.path,
    replyId,
    abortSignal,
    historyTools: (options = {}) =>
      historyTools({
        store: settings.store,
        userId: begun.userId,
        chatId: request.chatId,
        branch: attached.engine.branch,
        ...(settings.tokenizer === undefined ? {} : { tokenizer: settings.tokenizer }),
        // Only the bound: the user, chat and store are the turn's, whatever else is passed.
        ...(options.maxResultTokens === undefined
          ? {}
          : { maxResultTokens: options.maxResultTokens }),
      }),
    compaction,
    stream,
    respond: (call, options = {}) => replyResponse(stream(call, options), options.headers),
  };
}

/** What the reply's usage is recorded as: the whole call's, with the budget's cache prediction. */
function replyUsage(
  usage: CallUsage,
  modelId: string | undefined,
  cache: CachePrediction | undefined,
  source: { overflowRetry(): ReplyUsage['overflowRetry'] },
): ReplyUsage {
  const steps = usage.steps();
  const overflowRetry = source.overflowRetry();
  return {
    usage: usage.usage(),
    ...(steps === undefined ? {} : { steps }),
    modelId: usage.modelId ?? modelId ?? 'unknown',
    ...(cache === undefined ? {} : { cache }),
    ...(overflowRetry === undefined ? {} : { overflowRetry }),
  };
}
