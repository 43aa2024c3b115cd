import type { InferUIMessageChunk, UIMessage, UIMessageStreamOptions } from 'ai';
import { CallUsage, type UsagePart } from './call-usage';

/** What the cycle needs of a `streamText` result (both AI SDK majors have it). */
export interface StreamTextResultLike<UI_MESSAGE extends UIMessage = UIMessage> {
  toUIMessageStream(
    options?: UIMessageStreamOptions<UI_MESSAGE>,
  ): ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
  readonly fullStream: AsyncIterable<unknown>;
}

/** How the reply streams to the client: the options of `ChatTurn.respond` and `ChatTurn.stream`. */
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

/** The reply as the AI SDK built it from the stream, known once the stream ended. */
export interface EndedReply<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly responseMessage: UI_MESSAGE;
  readonly isAborted: boolean;
}

/** A model call's reply as UI message chunks, with what the cycle learns beside them. */
export interface ReplySource<UI_MESSAGE extends UIMessage = UIMessage> {
  /**
   * The reply's chunks, `start` first with the reply id. A stream that fails mid-way ends with an
   * `error` chunk (worded by `onError`) instead of failing: whatever reads it always gets its end.
   */
  readonly chunks: ReadableStream<InferUIMessageChunk<UI_MESSAGE>>;
  /** The reply as built from the chunks (the AI SDK's `onFinish`); undefined before the end. */
  ended(): EndedReply<UI_MESSAGE> | undefined;
  /** The whole call's usage, read from `fullStream` beside the chunks; settles when it ends. */
  readonly usage: Promise<CallUsage>;
}

/**
 * Opens a `streamText` result as the reply the cycle streams and saves: the AI SDK's
 * `toUIMessageStream` with the conversation as stored (`originalMessages`), the server-side reply
 * id, and the app's stream options; the call's usage is read from its `fullStream` at the same
 * time (both majors tee the call for each reader). `observeError` is told each error of the call
 * as it comes (before its `error` chunk).
 */
export function openReplySource<UI_MESSAGE extends UIMessage>(
  result: StreamTextResultLike<UI_MESSAGE>,
  reply: {
    readonly originalMessages: UI_MESSAGE[];
    readonly replyId: string;
    readonly options: RespondOptions<UI_MESSAGE>;
  },
  observeError?: (error: unknown) => void,
): ReplySource<UI_MESSAGE> {
  type Chunk = InferUIMessageChunk<UI_MESSAGE>;
  const { options } = reply;
  const usage = new CallUsage();
  const usageRead = (async () => {
    for await (const part of result.fullStream) usage.observe(part as UsagePart);
  })()
    // A failed call still has the usage of the steps that finished.
    .catch(() => undefined)
    .then(() => usage);
  let ended: EndedReply<UI_MESSAGE> | undefined;
  const source = result.toUIMessageStream({
    originalMessages: reply.originalMessages,
    generateMessageId: () => reply.replyId,
    onFinish: ({ responseMessage, isAborted }) => {
      ended = { responseMessage, isAborted };
    },
    ...(options.messageMetadata ? { messageMetadata: options.messageMetadata } : {}),
    ...(options.sendReasoning === undefined ? {} : { sendReasoning: options.sendReasoning }),
    ...(options.sendSources === undefined ? {} : { sendSources: options.sendSources }),
    // The error itself is told to `observeError` (the cycle's overflow retry reads it); the
    // client gets the app's words for it, or the AI SDK's default.
    ...(options.onError || observeError
      ? {
          onError: (error: unknown) => {
            observeError?.(error);
            return options.onError?.(error) ?? 'An error occurred.';
          },
        }
      : {}),
  });
  const reader = source.getReader();
  const chunks = new ReadableStream<Chunk>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.enqueue({
          type: 'error',
          errorText: options.onError?.(error) ?? 'An error occurred.',
        } as Chunk);
        controller.close();
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { chunks, ended: () => ended, usage: usageRead };
}
