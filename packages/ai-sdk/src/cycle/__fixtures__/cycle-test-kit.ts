// Test helpers for the request cycle: a scripted model, the AI SDK's own chat client (AbstractChat
// with DefaultChatTransport) posting straight to a route handler in this process, and a way to
// wait until a reply's save is over (saved or dropped) without waiting for any amount of time.
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  jsonSchema,
  stepCountIs,
  streamText,
  type ToolSet,
  tool,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { ChatCycle } from '../chat-cycle';

/** A promise with its resolve function outside. */
interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part>
    ? Part
    : never;

function lastUserText(prompt: Prompt): { text: string; answered: boolean } {
  let text = '';
  let answered = false;
  for (const message of prompt) {
    if (message.role === 'user') {
      text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      answered = false;
    } else if (message.role === 'tool') {
      answered = true;
    }
  }
  return { text, answered };
}

const finish = (output: number, reason: 'stop' | 'tool-calls' = 'stop'): StreamPart => ({
  type: 'finish',
  finishReason: { unified: reason, raw: undefined },
  usage: {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  },
});

/**
 * A model scripted by the last user message's text:
 * - `hang after a word`: streams `Partial ` and then nothing until the call is aborted;
 * - `hang before a word`: opens a text part and then nothing until the call is aborted;
 * - a text with `confirm`: calls the client-side tool `confirm` (no `execute`), and after its
 *   result answers `Confirmed.`;
 * - `hang in a tool`: calls the server-side tool `lookup`, which runs until the call is aborted;
 * - anything else: `You said: <text>`.
 * Every call is kept in `doStreamCalls` (the tests count calls).
 */
export function scriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ prompt, abortSignal }) => {
      const { text, answered } = lastUserText(prompt);
      const hang = text === 'hang after a word' || text === 'hang before a word';
      const parts: StreamPart[] = [];
      const toolName = text.includes('confirm')
        ? 'confirm'
        : text === 'hang in a tool'
          ? 'lookup'
          : undefined;
      if (toolName !== undefined && !answered) {
        parts.push(
          {
            type: 'tool-call',
            toolCallId: `call-${prompt.length}`,
            toolName,
            input: JSON.stringify({ question: text }),
          },
          finish(5, 'tool-calls'),
        );
      } else if (hang) {
        parts.push({ type: 'text-start', id: 't' });
        if (text === 'hang after a word')
          parts.push({ type: 'text-delta', id: 't', delta: 'Partial ' });
      } else {
        const words = (answered ? 'Confirmed.' : `You said: ${text}`).split(/(?<= )/);
        parts.push(
          { type: 'text-start', id: 't' },
          ...words.map((delta): StreamPart => ({ type: 'text-delta', id: 't', delta })),
          { type: 'text-end', id: 't' },
          finish(words.length),
        );
      }
      const stream = new ReadableStream<StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          if (!hang) {
            controller.close();
            return;
          }
          // Nothing more until the call is aborted (the client's stop).
          const stop = (): void => controller.error(abortSignal?.reason ?? new Error('aborted'));
          if (abortSignal?.aborted) stop();
          else abortSignal?.addEventListener('abort', stop, { once: true });
        },
      });
      return { stream };
    },
  });
}

/**
 * The tools of {@link scriptedModel}: `confirm` is client-side (no `execute`: the client answers
 * it); `lookup` runs on the server and never ends until the call is aborted.
 */
export const scriptedTools: ToolSet = {
  confirm: tool({
    description: 'Asks the user to confirm.',
    inputSchema: jsonSchema<{ question: string }>({
      type: 'object',
      properties: { question: { type: 'string' } },
    }),
  }),
  lookup: tool({
    description: 'Looks something up (never ends until stopped).',
    inputSchema: jsonSchema<{ question: string }>({
      type: 'object',
      properties: { question: { type: 'string' } },
    }),
    execute: (_input, { abortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        const stop = (): void => reject(abortSignal?.reason ?? new Error('aborted'));
        if (abortSignal?.aborted) stop();
        else abortSignal?.addEventListener('abort', stop, { once: true });
      }),
  }),
};

/**
 * A route handler over the cycle (what an app's `POST /api/chat` does), and a promise per reply
 * that settles once the cycle is done with it (saved, dropped, or failed): the cycle calls
 * `streams.finish` after its save.
 */
export function chatRoute(
  makeCycle: (streams: {
    publish(input: { stream: ReadableStream<string> }): Promise<void>;
    resume(): Promise<null>;
    finish(): Promise<void>;
  }) => ChatCycle,
  model: MockLanguageModelV3,
  userId = 'u',
): {
  cycle: ChatCycle;
  fetch: typeof fetch;
  /** Resolves when the next reply the cycle streams is done with. */
  nextReplyDone(): Promise<void>;
} {
  const waiting: Deferred<void>[] = [];
  const cycle = makeCycle({
    async publish({ stream }) {
      // The recording is not kept: read it to its end, as the contract asks.
      const reader = stream.getReader();
      while (!(await reader.read()).done);
    },
    async resume() {
      return null;
    },
    async finish() {
      waiting.shift()?.resolve();
    },
  });
  const handle = async (request: Request): Promise<Response> => {
    const turn = await cycle.begin(await request.json(), { userId, signal: request.signal });
    const result = streamText({
      model,
      system: turn.system,
      messages: turn.messages,
      tools: scriptedTools,
      stopWhen: stepCountIs(3),
      abortSignal: turn.abortSignal,
    });
    return turn.respond(result);
  };
  return {
    cycle,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
      handle(new Request(input, init))) as typeof fetch,
    nextReplyDone() {
      const done = deferred();
      waiting.push(done);
      return done.promise;
    },
  };
}

class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[];
  readonly #onChange: () => void;
  constructor(messages: UIMessage[], onChange: () => void) {
    this.messages = messages;
    this.#onChange = onChange;
  }
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
    this.#onChange();
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
    this.#onChange();
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
    this.#onChange();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's AbstractChat (what `useChat` runs) with an array state, posting to `route`. */
export class TestChat extends AbstractChat<UIMessage> {
  readonly #watchers = new Set<() => void>();

  constructor(chatId: string, route: { fetch: typeof fetch }, messages: UIMessage[] = []) {
    let notify = (): void => {};
    const state = new ArrayState(messages, () => notify());
    super({
      id: chatId,
      transport: new DefaultChatTransport<UIMessage>({
        api: 'http://cycle.test/api/chat',
        fetch: route.fetch,
      }),
      state,
    });
    notify = () => {
      for (const watcher of this.#watchers) watcher();
    };
  }

  get currentError(): Error | undefined {
    return this.state.error;
  }

  /** Resolves once `condition` holds for the chat's messages (checked on every change). */
  until(condition: (messages: readonly UIMessage[]) => boolean): Promise<void> {
    if (condition(this.messages)) return Promise.resolve();
    return new Promise((resolve) => {
      const watcher = (): void => {
        if (!condition(this.messages)) return;
        this.#watchers.delete(watcher);
        resolve();
      };
      this.#watchers.add(watcher);
    });
  }
}

/** The text of a message's text parts. */
export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}
