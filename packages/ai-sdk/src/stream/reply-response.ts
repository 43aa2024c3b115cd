import {
  createUIMessageStreamResponse,
  JsonToSseTransformStream,
  UI_MESSAGE_STREAM_HEADERS,
  type UIMessageChunk,
} from 'ai';
import { ReplyRelay } from './reply-relay';
import type { ResumableStreams } from './resumable-streams';

/** Where a reply goes besides its client, and what the client's going away means. */
export interface ReplyDelivery {
  readonly chatId: string;
  /** The id the reply's resumable copy is kept under. */
  readonly streamId: string;
  /** The chat's resumable stream slot, when the cycle keeps one. */
  readonly streams: ResumableStreams | undefined;
  /** The client cancelled its stream (a `stop()`, a closed tab). */
  readonly onDisconnect: () => void;
}

/**
 * The response: what the client of a turn receives. The saved reply's chunks are read to their
 * end whatever the client does (a {@link ReplyRelay}), so a client that goes away never cuts a
 * reply short of its save; with resumable streams, a copy from the first chunk, framed by the AI
 * SDK's own `JsonToSseTransformStream`, is published as the chat's active stream and its slot is
 * cleared once the reply ended. Returns the client's chunk stream (`ChatTurn.stream`), which
 * {@link replyResponse} answers over HTTP.
 *
 * The copy is taken from the chunks rather than from the response's text (the AI SDK's
 * `consumeSseStream` tees the finished response): a tee keeps its source open while the copy is
 * read, so a client's cancel would no longer reach the turn, and a turn merged into the app's own
 * `createUIMessageStream` would have no copy at all.
 */
export function deliverReply<T>(
  saved: ReadableStream<T>,
  delivery: ReplyDelivery,
): ReadableStream<T> {
  const { chatId, streamId, streams } = delivery;
  const relay = new ReplyRelay(saved);
  const client = relay.follow({ onCancel: delivery.onDisconnect });
  if (streams) {
    const copy = relay.follow().pipeThrough(new JsonToSseTransformStream());
    void streams.publish({ chatId, streamId, stream: copy }).catch(() => undefined);
  }
  void relay
    .run()
    .then(() => streams?.finish({ chatId, streamId }))
    .catch(() => undefined);
  return client;
}

/**
 * The HTTP answer of a turn: the AI SDK's UI message stream response (server-sent events with its
 * protocol headers, `headers` added) over the client's chunk stream.
 */
export function replyResponse(
  chunks: ReadableStream<UIMessageChunk>,
  headers: Record<string, string> | undefined,
): Response {
  return createUIMessageStreamResponse({ stream: chunks, ...(headers ? { headers } : {}) });
}

/** The header of a resume's answer that names the message the live reply answers. */
export const REPLY_FOLLOWS_HEADER = 'x-ctxgraph-reply-follows';

/**
 * The answer to a resume request: the active reply's copy (server-sent events from its first
 * event) with the UI message stream protocol's headers, or 204 when no reply is streaming. With
 * `follows`, the id of the message the reply answers, in the {@link REPLY_FOLLOWS_HEADER} header
 * (so a client that did not send the question, another tab, places the reply after it).
 */
export function resumeResponse(
  stream: ReadableStream<string> | null,
  follows?: string | null,
): Response {
  if (stream === null) return new Response(null, { status: 204 });
  return new Response(stream.pipeThrough(new TextEncoderStream()), {
    headers:
      follows === undefined || follows === null
        ? UI_MESSAGE_STREAM_HEADERS
        : { ...UI_MESSAGE_STREAM_HEADERS, [REPLY_FOLLOWS_HEADER]: follows },
  });
}
