/** The headers of the AI SDK's UI message stream protocol (server-sent events, version 1). */
export const uiMessageStreamHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/**
 * A chunk stream as the UI message stream protocol's server-sent events: one `data:` event per
 * chunk (its JSON), then `data: [DONE]`. Cancelling the text stream cancels the chunk stream.
 */
export function toServerSentEvents(chunks: ReadableStream<unknown>): ReadableStream<string> {
  return chunks.pipeThrough(
    new TransformStream<unknown, string>({
      transform(chunk, controller) {
        controller.enqueue(`data: ${JSON.stringify(chunk)}\n\n`);
      },
      flush(controller) {
        controller.enqueue('data: [DONE]\n\n');
      },
    }),
  );
}
