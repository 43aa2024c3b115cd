import type { ReplyOutcome } from '@ctxgraph/engine';
import type { InferUIMessageChunk, UIMessage } from 'ai';
import { ReplyNotSavedError } from '../errors';
import type { EndedReply } from './reply-source';
import { FAILED_REASON, STOPPED_REASON, settleReply } from './settle-reply';

/** Options of {@link createReplySaver}. */
export interface ReplySaverOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The reply as the AI SDK built it from the chunks (read once they ended). */
  readonly ended: () => EndedReply<UI_MESSAGE> | undefined;
  /**
   * Stores the reply as it ended, settled (`reply` undefined: there is nothing to store, a reply
   * stopped before its first word). A rejection is a failed save.
   */
  readonly keep: (reply: UI_MESSAGE | undefined, outcome: ReplyOutcome) => Promise<void>;
  /**
   * True when the reply was stopped though its chunks end with a `finish` (a stop asked for
   * through the store: the turn turns the model call's `abort` chunk into the reply's end). Read
   * once the chunks ended. @default () => false
   */
  readonly stopped?: (() => boolean) | undefined;
  /**
   * Sees each chunk first and gives the one to pass on (the same, or one in its place): the
   * turn's live reply appends it to the store here, in this stream's own step (one web stream
   * stage less per chunk than a transform of its own). @default none
   */
  readonly each?:
    | ((chunk: InferUIMessageChunk<UI_MESSAGE>) => InferUIMessageChunk<UI_MESSAGE>)
    | undefined;
  /** Told when the reply could not be saved (the stream ends with an `error` chunk too). */
  readonly onSaveError?: ((error: ReplyNotSavedError) => void) | undefined;
}

/**
 * The reply saver: a transform over the reply's UI message chunks that passes them on as they
 * come and, when they end, settles the reply and saves it before the stream ends. It holds the
 * `finish` chunk back until the reply is saved, so a client that saw `finish` can read the reply
 * back as stored; a reply that could not be saved ends with an `error` chunk instead (never a
 * silent loss).
 *
 * How it ended is read from the chunks (an `abort` chunk: `aborted`; an `error` chunk: `error`;
 * else `complete`). A stopped or failed reply is saved with every part settled
 * ({@link settleReply}); a complete one as it ended (a client-side tool call waiting for its
 * result is how such a reply ends, not an unfinished part).
 *
 * Every chunk of the reply passes here in order, and its end is one write: the place to keep a
 * live reply in the store (chunks appended as they pass, the final save ending the live record).
 *
 * @example
 * ```ts
 * const saved = source.chunks.pipeThrough(createReplySaver({ ended: source.ended, keep }));
 * ```
 */
export function createReplySaver<UI_MESSAGE extends UIMessage>(
  options: ReplySaverOptions<UI_MESSAGE>,
): TransformStream<InferUIMessageChunk<UI_MESSAGE>, InferUIMessageChunk<UI_MESSAGE>> {
  type Chunk = InferUIMessageChunk<UI_MESSAGE>;
  let held: Chunk | undefined;
  let failed = false;
  let aborted = false;
  const each = options.each;
  return new TransformStream<Chunk, Chunk>({
    transform(given, controller) {
      const chunk = each === undefined ? given : each(given);
      const type = (chunk as { type: string }).type;
      if (type === 'finish') {
        held = chunk;
        return;
      }
      if (type === 'error') failed = true;
      if (type === 'abort') aborted = true;
      controller.enqueue(chunk);
    },
    async flush(controller) {
      const ended = options.ended();
      const outcome: ReplyOutcome =
        aborted || ended?.isAborted === true || options.stopped?.() === true
          ? 'aborted'
          : failed
            ? 'error'
            : 'complete';
      const reply = ended?.responseMessage;
      try {
        await options.keep(
          reply === undefined || outcome === 'complete'
            ? reply
            : settleReply(reply, outcome === 'aborted' ? STOPPED_REASON : FAILED_REASON),
          outcome,
        );
        if (held) controller.enqueue(held);
      } catch (error) {
        const saveError = new ReplyNotSavedError(
          `The reply could not be saved: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
        controller.enqueue({ type: 'error', errorText: saveError.message } as Chunk);
        options.onSaveError?.(saveError);
      }
    },
  });
}
