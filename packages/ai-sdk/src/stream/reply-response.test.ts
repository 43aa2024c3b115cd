// The response: the client's stream, the resumable copy and the HTTP answer of a turn. The reply
// is read to its end whatever the client does; the copy is what the client got, from its first
// event; a client that goes away stops the model call (stopOnDisconnect), copy or not.
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import {
  createUIMessageStream,
  createUIMessageStreamResponse,
  stepCountIs,
  streamText,
  type UIMessage,
} from 'ai';
import type { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { scriptedModel, scriptedTools } from '../cycle/__fixtures__/cycle-test-kit';
import { type ChatTurn, createChatCycle } from '../cycle/chat-cycle';
import { deliverReply } from './reply-response';
import type { ResumableStreams } from './resumable-streams';

const engine = { renderer: new XmlRenderer() };
const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** Resumable streams that keep every published copy whole, and say when a slot was cleared. */
function recordingStreams(): ResumableStreams & {
  copies: Map<string, Promise<string>>;
  finished: Promise<string>;
} {
  const copies = new Map<string, Promise<string>>();
  let finish!: (streamId: string) => void;
  const finished = new Promise<string>((resolve) => {
    finish = resolve;
  });
  return {
    copies,
    finished,
    async publish({ streamId, stream }) {
      copies.set(
        streamId,
        (async () => {
          let text = '';
          const reader = stream.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return text;
            text += value;
          }
        })(),
      );
    },
    async resume() {
      return null;
    },
    async finish({ streamId }) {
      finish(streamId);
    },
  };
}

function run(turn: ChatTurn, model: MockLanguageModelV3) {
  return streamText({
    model,
    system: turn.system,
    messages: turn.messages,
    tools: scriptedTools,
    stopWhen: stepCountIs(3),
    abortSignal: turn.abortSignal,
  });
}

describe('the response', () => {
  it('respond(): the resumable copy is the text the client got, from the first event', async () => {
    const streams = recordingStreams();
    const cycle = createChatCycle({ store: new InMemoryContextStore(), engine, streams });
    const turn = await cycle.begin({ id: 'copy', messages: [ask('q1', 'hello')] }, { userId: 'u' });
    const response = turn.respond(run(turn, scriptedModel()), { headers: { 'x-app': 'yes' } });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('x-app')).toBe('yes');
    const text = await response.text();
    const streamId = await streams.finished;
    expect(await streams.copies.get(streamId)).toBe(text);
    expect(text).toContain('"delta":"hello"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('stream(): merged into the app’s own UI stream, the reply still has its resumable copy', async () => {
    const streams = recordingStreams();
    const cycle = createChatCycle({ store: new InMemoryContextStore(), engine, streams });
    const turn = await cycle.begin({ id: 'merged', messages: [ask('q1', 'hi')] }, { userId: 'u' });
    const response = createUIMessageStreamResponse({
      stream: createUIMessageStream({
        execute: ({ writer }) => writer.merge(turn.stream(run(turn, scriptedModel()))),
      }),
    });
    await response.text();
    const copy = await streams.copies.get(await streams.finished);
    expect(copy).toContain(`"messageId":"${turn.replyId}"`);
    expect(copy).toContain('"delta":"hi"');
  });

  it('a client that goes away stops the model call, with a resumable copy kept too', async () => {
    const streams = recordingStreams();
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine, streams, live: false });
    const turn = await cycle.begin(
      { id: 'gone', messages: [ask('q1', 'hang after a word')] },
      { userId: 'u' },
    );
    const response = turn.respond(run(turn, scriptedModel()));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!seen.includes('Partial')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    await reader.cancel();
    // The model hangs until its call is aborted: the reply ends (and its slot is cleared) only
    // because the client's cancel reached the turn.
    const streamId = await streams.finished;
    expect(turn.abortSignal.aborted).toBe(true);
    expect(await streams.copies.get(streamId)).toContain('"type":"abort"');
    const stored = await cycle.messages('gone', { userId: 'u' });
    expect(stored.map((message) => message.id)).toEqual(['q1', turn.replyId]);
  });

  it('deliverReply reads the reply to its end after its client went away, then clears the slot', async () => {
    const streams = recordingStreams();
    let disconnected = 0;
    let push!: ReadableStreamDefaultController<string>;
    const saved = new ReadableStream<string>({
      start(controller) {
        push = controller;
      },
    });
    const client = deliverReply(saved, {
      chatId: 'c',
      streamId: 's1',
      streams,
      onDisconnect: () => {
        disconnected += 1;
      },
    });
    push.enqueue('a');
    await client.cancel();
    expect(disconnected).toBe(1);
    push.enqueue('b');
    push.close();
    expect(await streams.finished).toBe('s1');
    expect(await streams.copies.get('s1')).toBe('data: "a"\n\ndata: "b"\n\ndata: [DONE]\n\n');
  });
});
