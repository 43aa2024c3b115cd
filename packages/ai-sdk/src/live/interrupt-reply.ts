import { message as messageFragment } from '@ctxgraph/codecs';
import { type ContextEngine, withUsage } from '@ctxgraph/engine';
import type { LiveReplyRead } from '@ctxgraph/fragments-core';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { STOPPED_REASON, settleReply } from '../stream/settle-reply';
import type { LiveStore } from './live-settings';

/**
 * The reply its chunks built, with the AI SDK's own reader (`readUIMessageStream`), onto
 * `message` for a reply that continues a stored one; undefined when the chunks built nothing.
 * A run of chunks cut off anywhere builds what it had.
 */
async function rebuildReply<UI_MESSAGE extends UIMessage>(
  chunks: readonly unknown[],
  message: UI_MESSAGE | undefined,
): Promise<UI_MESSAGE | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk as UIMessageChunk);
      controller.close();
    },
  });
  let built: UI_MESSAGE | undefined;
  try {
    for await (const state of readUIMessageStream<UI_MESSAGE>({
      stream,
      ...(message === undefined ? {} : { message }),
      terminateOnError: false,
    }))
      built = state;
  } catch {
    // What was built before a chunk the reader refused is what the reply had.
  }
  return built;
}

/**
 * Ends a live reply taken over from a writer whose lease ran out (`takeOverReply`, by `owner`):
 * its chunks are rebuilt into the reply, settled like a stopped reply, and saved where it was
 * going (in place of the reply it continued, `data.continues`) with outcome `interrupted`, in the
 * same write that ends its live record. A reply that had nothing yet is ended without a save.
 */
export async function interruptReply<UI_MESSAGE extends UIMessage>(
  live: LiveStore,
  taken: LiveReplyRead,
  owner: string,
  engine: ContextEngine,
): Promise<void> {
  const { record, chunks } = taken;
  const continues = record.data.continues === true;
  await engine.continueFrom(record.afterNodeId, { activate: false });
  const stored = continues
    ? ((await engine.resolve()).messages.at(-1) as UI_MESSAGE | undefined)
    : undefined;
  const built = await rebuildReply<UI_MESSAGE>(chunks, stored);
  const settled = built === undefined ? undefined : settleReply(built, STOPPED_REASON);
  const endReply = { replyId: record.replyId, owner };
  if (settled === undefined) {
    await live.endReply({ chatId: record.chatId, ...endReply });
    return;
  }
  const modelId = typeof record.data.modelId === 'string' ? record.data.modelId : 'unknown';
  engine.set(
    withUsage(messageFragment({ ...settled, id: record.replyId }), {
      usage: {},
      modelId,
      add: continues,
      outcome: 'interrupted',
    }),
  );
  await engine.save({ endReply });
}
