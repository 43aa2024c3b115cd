import type { OverflowRetry } from '@ctxgraph/engine';
import type { InferUIMessageChunk, ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import { CallUsage } from './call-usage';
import { type ContextOverflow, contextOverflowOf } from './context-overflow';
import {
  openReplySource,
  type ReplySource,
  type RespondOptions,
  type StreamTextResultLike,
} from './reply-source';

/** What a model call of a turn is given: hand it to `streamText`. */
export interface TurnModelInput {
  /** For `streamText({ system })`. */
  readonly system: string | SystemModelMessage;
  /** For `streamText({ messages })`. */
  readonly messages: ModelMessage[];
  /** For `streamText({ abortSignal })`. */
  readonly abortSignal: AbortSignal;
}

/**
 * The model call of a turn: a `streamText` result made with the turn's input, or a function that
 * makes one from the input it is given. Only a function can be called again: with it, a call the
 * provider refuses as too long for the model's context is retried once with less history.
 */
export type TurnModelCall<UI_MESSAGE extends UIMessage = UIMessage> =
  | StreamTextResultLike<UI_MESSAGE>
  | ((
      input: TurnModelInput,
    ) => StreamTextResultLike<UI_MESSAGE> | PromiseLike<StreamTextResultLike<UI_MESSAGE>>);

/** The retry a turn makes of an overflow: its input and how it is recorded; undefined: none. */
export type OverflowRetryPlan = (
  overflow: ContextOverflow,
) => Promise<{ readonly input: TurnModelInput; readonly record: OverflowRetry } | undefined>;

/** A reply source that may have retried its call after an overflow. */
export interface RetryingReplySource<UI_MESSAGE extends UIMessage = UIMessage>
  extends ReplySource<UI_MESSAGE> {
  /** The retry made, once the reply's first words (or its end) came; undefined without one. */
  overflowRetry(): OverflowRetry | undefined;
}

/** Chunks a reply sends before anything of the model's: held until the call is known to answer. */
const PREAMBLE = new Set(['start', 'start-step']);

/**
 * The reply's chunks from the model call, retried once when the provider refuses the first call
 * as too long for the model's context (an overflow error before any output): the first call's
 * chunks up to its error are held back and dropped (nothing of it reaches the client, the store's
 * live reply or the saver), `plan` gives the input of a second call, and the reply is that call's
 * (same reply id, same `start` chunk). A second overflow, an error that is not an overflow, a call
 * that cannot be made again (a result, not a function) or a plan that gives no input: the chunks
 * pass as they came (the usual error path).
 */
export function openRetryingSource<UI_MESSAGE extends UIMessage>(
  call: TurnModelCall<UI_MESSAGE>,
  input: TurnModelInput,
  reply: {
    readonly originalMessages: UI_MESSAGE[];
    readonly replyId: string;
    readonly options: RespondOptions<UI_MESSAGE>;
  },
  plan: OverflowRetryPlan,
): RetryingReplySource<UI_MESSAGE> {
  type Chunk = InferUIMessageChunk<UI_MESSAGE>;
  const again = typeof call === 'function' ? call : undefined;
  // The errors of the current call, as `onError` is told them (the AI SDK also tells it the
  // error chunk's own text as an Error, when it builds the message from the chunks).
  let observed: unknown[] = [];
  let current: ReplySource<UI_MESSAGE> | undefined;
  let reader: ReadableStreamDefaultReader<Chunk> | undefined;
  let retried: OverflowRetry | undefined;
  let cancelled = false;
  const held: Chunk[] = [];
  let ended = false;
  const attach = (result: StreamTextResultLike<UI_MESSAGE>): void => {
    observed = [];
    current = openReplySource(result, reply, (error) => {
      if (observed.length < 8) observed.push(error);
    });
    reader = current.chunks.getReader();
  };
  // The first call is made now (a function that throws, throws here, as `streamText` would).
  const first = again === undefined ? call : again(input);
  let opening: Promise<void> | undefined;
  if ('toUIMessageStream' in (first as object)) attach(first as StreamTextResultLike<UI_MESSAGE>);
  else {
    opening = Promise.resolve(first as PromiseLike<StreamTextResultLike<UI_MESSAGE>>).then(attach);
    // Read (and answered as an error chunk) by the first pull; a reply cancelled before it is not.
    opening.catch(() => undefined);
  }
  /** Reads up to the model's first chunk; on an overflow there, retries once. */
  const decide = async (): Promise<void> => {
    for (;;) {
      const next = await (reader as ReadableStreamDefaultReader<Chunk>).read();
      if (next.done) {
        ended = true;
        return;
      }
      held.push(next.value);
      const type = (next.value as { type: string }).type;
      if (PREAMBLE.has(type)) continue;
      if (type !== 'error' || retried !== undefined || again === undefined || cancelled) return;
      const overflow = observed.map(contextOverflowOf).find((found) => found !== undefined);
      if (overflow === undefined) return;
      // A retry that cannot be planned (the history cannot shrink: a budget the required parts
      // alone exceed) leaves the overflow as it was.
      const planned = await plan(overflow).catch(() => undefined);
      if (planned === undefined || cancelled) return;
      await (reader as ReadableStreamDefaultReader<Chunk>).cancel().catch(() => undefined);
      held.length = 0;
      retried = planned.record;
      attach(await again(planned.input));
    }
  };
  let deciding = true;
  const chunks = new ReadableStream<Chunk>({
    async pull(controller) {
      try {
        if (deciding) {
          await opening;
          await decide();
          deciding = false;
        }
        const chunk = held.shift();
        if (chunk !== undefined) controller.enqueue(chunk);
        else if (ended) controller.close();
        else {
          const next = await (reader as ReadableStreamDefaultReader<Chunk>).read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        }
      } catch (error) {
        // The app's call failed (a rejected promise): the reply ends as a failed one does.
        held.length = 0;
        controller.enqueue({
          type: 'error',
          errorText: reply.options.onError?.(error) ?? 'An error occurred.',
        } as Chunk);
        controller.close();
      }
    },
    cancel(reason) {
      cancelled = true;
      return reader?.cancel(reason);
    },
  });
  return {
    chunks,
    ended: () => current?.ended(),
    get usage() {
      return current?.usage ?? Promise.resolve(new CallUsage());
    },
    overflowRetry: () => retried,
  };
}
