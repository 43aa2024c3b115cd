// The chat route handler of @ctxgraph/ai-sdk as a Worker's `fetch`, over the memory store and a
// deterministic model: the edge test bundles it and drives it inside workerd, and drives the same
// module on Node, and the answers must match. Ids are counted, not random, so they do.
import { createChatCycle, createChatHandler } from '@ctxgraph/ai-sdk';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { simulateReadableStream, streamText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** The text of the last user message of a model prompt. */
function lastUserText(prompt: readonly { role: string; content: unknown }[]): string {
  const last = [...prompt].reverse().find((message) => message.role === 'user');
  const parts = Array.isArray(last?.content)
    ? (last.content as { type: string; text?: string }[])
    : [];
  return parts.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

/** Answers `You said: <the question>`, word by word, with a fixed usage. */
const model = new MockLanguageModelV3({
  modelId: 'gpt-4o-mini',
  doStream: async ({ prompt }) => {
    const words = `You said: ${lastUserText(prompt)}`.split(/(?<= )/);
    return {
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-start' as const, id: 't' },
          ...words.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
          { type: 'text-end' as const, id: 't' },
          {
            type: 'finish' as const,
            finishReason: { unified: 'stop' as const, raw: undefined },
            usage: {
              inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: words.length, text: words.length, reasoning: undefined },
            },
          },
        ],
      }),
    };
  },
});

let counter = 0;
const cycle = createChatCycle({
  store: new InMemoryContextStore(),
  engine: { renderer: new XmlRenderer() },
  generateId: () => {
    counter += 1;
    return `id-${counter}`;
  },
});

const handler = createChatHandler({
  cycle,
  // The app's sign-in: here a header.
  userId: (request) => request.headers.get('x-user'),
  turn: () => ({ context: (engine) => engine.set(role('You are an edge test.')) }),
  reply: (turn) =>
    streamText({
      model,
      system: turn.system,
      messages: turn.messages,
      abortSignal: turn.abortSignal,
    }),
});

const worker: { fetch(request: Request): Promise<Response> } = { fetch: handler };

export default worker;
