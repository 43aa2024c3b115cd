import type { LanguageModel } from 'ai';

/** Options of {@link createMockModel}. */
export interface MockModelOptions {
  /** Milliseconds between two streamed chunks. @default 20 */
  chunkDelayMs?: number;
}

/**
 * The provider model shape (`LanguageModelV3`) that both AI SDK majors the app runs on take: 6
 * accepts v2 and v3 models, 7 accepts v3 and v4.
 */
export type MockLanguageModel = Extract<LanguageModel, { specificationVersion: 'v3' }>;

type CallOptions = Parameters<MockLanguageModel['doStream']>[0];
type Prompt = CallOptions['prompt'];
type StreamResult = Awaited<ReturnType<MockLanguageModel['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;
type GenerateResult = Awaited<ReturnType<MockLanguageModel['doGenerate']>>;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { type: 'text'; text: string } => part?.type === 'text')
    .map((part) => part.text)
    .join('');
}

/** The last user message's text, and whether a tool result came after it. */
function readPrompt(prompt: Prompt): { userText: string; toolResult: unknown } {
  let userText = '';
  let toolResult: unknown;
  for (const message of prompt) {
    if (message.role === 'user') {
      userText = textOf(message.content);
      toolResult = undefined;
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type === 'tool-result') toolResult = part.output;
      }
    }
  }
  return { userText, toolResult };
}

/**
 * What the mock says about a tool's output, in words a page shows (never the output's JSON):
 * the weather it was given, or whether the user confirmed.
 */
function afterTool(output: unknown): string {
  const value =
    typeof output === 'object' && output !== null && 'value' in output
      ? (output as { value: unknown }).value
      : output;
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  if (typeof record.temperatureC === 'number') {
    return `It is ${record.temperatureC} °C and ${String(record.sky)} in ${String(record.city)}.`;
  }
  if (typeof record.confirmed === 'boolean') {
    return record.confirmed ? 'You confirmed: going ahead.' : 'You declined: nothing was done.';
  }
  return 'The tool answered.';
}

/** What the mock answers to a prompt: a tool call, or words of text; and its usage. */
interface Answer {
  readonly toolCall: { toolCallId: string; toolName: string; input: string } | undefined;
  readonly words: readonly string[];
  readonly finishReason: GenerateResult['finishReason'];
  readonly usage: GenerateResult['usage'];
}

function answer(prompt: Prompt): Answer {
  const { userText, toolResult } = readPrompt(prompt);
  const inputTokens = Math.max(1, Math.ceil(JSON.stringify(prompt).length / 4));
  // `weather` calls the server-side getWeather; `confirm` the client-side askForConfirmation.
  const toolName = /\bweather\b/i.test(userText)
    ? 'getWeather'
    : /\bconfirm\b/i.test(userText)
      ? 'askForConfirmation'
      : undefined;
  const toolCall =
    toolName !== undefined && toolResult === undefined
      ? {
          toolCallId: `call-${inputTokens}`,
          toolName,
          input: JSON.stringify(
            toolName === 'getWeather' ? { city: 'Paris' } : { question: userText },
          ),
        }
      : undefined;
  const words =
    toolCall !== undefined
      ? []
      : `You said: ${userText}${toolResult === undefined ? '' : ` ${afterTool(toolResult)}`}`.split(
          /(?<= )/,
        );
  const outputTokens = toolCall !== undefined ? 8 : words.length;
  return {
    toolCall,
    words,
    finishReason: { unified: toolCall !== undefined ? 'tool-calls' : 'stop', raw: undefined },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
  };
}

/**
 * Waits `ms`, or less when `signal` aborts first. The abort listener lives exactly as long as the
 * wait: it is removed when the timer fires (one listener per word, never one per word kept on the
 * signal until the reply ends, which Node reports as a leak past 10).
 */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The app's built-in model (`CHAT_MODEL=mock`): deterministic and offline. It streams
 * `You said: <the last user message's text>`, one text chunk per word, `chunkDelayMs` apart.
 * When that text contains the word `weather`, it first calls the `getWeather` tool (a step of its
 * own), then answers with the tool's result appended: two steps, each reporting usage (input: the
 * prompt's length / 4; output: 8 for a tool call, else the words streamed). The word `confirm`
 * does the same with the client-side tool `askForConfirmation` (no `execute`: the client answers
 * it, and its next request continues the reply).
 *
 * A plain provider model (`LanguageModelV3`, which AI SDK 6 and 7 both take), not the AI SDK's
 * `MockLanguageModelV3`: that test double records every call's options, prompt included
 * (`doStreamCalls`), so a server answering with it holds every prompt it was ever sent. This one
 * holds nothing per call.
 */
export function createMockModel(options: MockModelOptions = {}): MockLanguageModel {
  const delay = options.chunkDelayMs ?? 20;
  return {
    specificationVersion: 'v3',
    provider: 'ctxgraph-chat',
    modelId: 'mock-echo',
    supportedUrls: {},
    async doGenerate({ prompt }) {
      const planned = answer(prompt);
      return {
        content: planned.toolCall
          ? [{ type: 'tool-call', ...planned.toolCall }]
          : [{ type: 'text', text: planned.words.join('') }],
        finishReason: planned.finishReason,
        usage: planned.usage,
        warnings: [],
      };
    },
    async doStream({ prompt, abortSignal }) {
      const planned = answer(prompt);
      const stream = new ReadableStream<StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({
            type: 'response-metadata',
            id: `response-${Date.now()}`,
            modelId: 'mock-echo',
            timestamp: new Date(0),
          });
          if (planned.toolCall) {
            await pause(delay, abortSignal);
            controller.enqueue({ type: 'tool-call', ...planned.toolCall });
          } else {
            controller.enqueue({ type: 'text-start', id: 'text-1' });
            for (const word of planned.words) {
              await pause(delay, abortSignal);
              if (abortSignal?.aborted) break;
              controller.enqueue({ type: 'text-delta', id: 'text-1', delta: word });
            }
            controller.enqueue({ type: 'text-end', id: 'text-1' });
          }
          controller.enqueue({
            type: 'finish',
            finishReason: planned.finishReason,
            usage: planned.usage,
          });
          controller.close();
        },
      });
      return { stream };
    },
  };
}
