// The real server of the tests: `createChatHandler` over the memory store, with a deterministic
// model, called in this process as a `fetch`. "You said: <text>" for every question, except a
// question starting with "hold": its reply says "Holding " and then waits until the test
// releases it (`release(text)`) or the reply is stopped.
import { createChatCycle, createChatHandler } from '@ctxgraph/ai-sdk';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part>
    ? Part
    : never;

/** The test user every request acts for. */
const USER = 'alice';

function lastUserText(prompt: Prompt): string {
  let text = '';
  for (const message of prompt) {
    if (message.role === 'user') {
      text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    }
  }
  return text;
}

const finish = (output: number): StreamPart => ({
  type: 'finish',
  finishReason: { unified: 'stop', raw: undefined },
  usage: {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  },
});

/** A server of the chat contract in this process. */
export interface TestChatServer {
  /** The handler as a `fetch` (the user is added to every request). */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The questions the model was asked, in order. */
  readonly asked: string[];
  /** Ends the held reply to `text` ("Holding done."). */
  release(text: string): void;
  /** Resolves once a held reply to `text` has started (its first word is out). */
  holding(text: string): Promise<void>;
}

/** The chat contract over a fresh memory store and the test model. */
export function createTestChatServer(): TestChatServer {
  const store = new InMemoryContextStore();
  const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
  const asked: string[] = [];
  const releases = new Map<string, () => void>();
  const started = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const startedFor = (text: string) => {
    let entry = started.get(text);
    if (entry === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      entry = { promise, resolve };
      started.set(text, entry);
    }
    return entry;
  };
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt, abortSignal }) => {
      const text = lastUserText(prompt);
      asked.push(text);
      const hold = text.startsWith('hold');
      const stream = new ReadableStream<StreamPart>({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't' });
          if (!hold) {
            for (const delta of `You said: ${text}`.split(/(?<= )/)) {
              controller.enqueue({ type: 'text-delta', id: 't', delta });
            }
            controller.enqueue({ type: 'text-end', id: 't' });
            controller.enqueue(finish(3));
            controller.close();
            return;
          }
          controller.enqueue({ type: 'text-delta', id: 't', delta: 'Holding ' });
          const end = (): void => {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'done.' });
            controller.enqueue({ type: 'text-end', id: 't' });
            controller.enqueue(finish(2));
            controller.close();
          };
          releases.set(text, end);
          abortSignal?.addEventListener(
            'abort',
            () => controller.error(abortSignal.reason ?? new Error('aborted')),
            { once: true },
          );
          startedFor(text).resolve();
        },
      });
      return { stream };
    },
  });
  const handler = createChatHandler<UIMessage>({
    cycle,
    userId: (request) => request.headers.get('x-user'),
    turn: () => ({ context: (engine) => engine.set(role('You are a test.')) }),
    reply: (turn) =>
      streamText({
        model,
        system: turn.system,
        messages: turn.messages,
        abortSignal: turn.abortSignal,
      }),
    onError: (error) => console.error(error),
  });
  return {
    asked,
    fetch: (input, init) => {
      const request = new Request(
        typeof input === 'string' && input.startsWith('/') ? `http://app.test${input}` : input,
        init,
      );
      request.headers.set('x-user', USER);
      return handler(request);
    },
    release(text) {
      const end = releases.get(text);
      if (end === undefined) throw new Error(`No held reply to ${JSON.stringify(text)}.`);
      releases.delete(text);
      end();
    },
    holding: (text) => startedFor(text).promise,
  };
}
