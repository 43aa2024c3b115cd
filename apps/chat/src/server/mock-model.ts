import type { LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** Options of {@link createMockModel}. */
export interface MockModelOptions {
  /** Milliseconds between two streamed chunks. @default 20 */
  chunkDelayMs?: number;
}

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];

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

function promptSize(prompt: Prompt): number {
  return Math.max(1, Math.ceil(JSON.stringify(prompt).length / 4));
}

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * The app's built-in model (`CHAT_MODEL=mock`): deterministic and offline. It streams
 * `You said: <the last user message's text>`, one text chunk per word, `chunkDelayMs` apart.
 * When that text contains the word `weather`, it first calls the `getWeather` tool (a step of its
 * own), then answers with the tool's result appended: two steps, each reporting usage (input: the
 * prompt's length / 4; output: 8 for a tool call, else the words streamed). The word `confirm`
 * does the same with the client-side tool `askForConfirmation` (no `execute`: the client answers
 * it, and its next request continues the reply).
 */
export function createMockModel(options: MockModelOptions = {}): LanguageModel {
  const delay = options.chunkDelayMs ?? 20;
  return new MockLanguageModelV3({
    provider: 'ctxgraph-chat',
    modelId: 'mock-echo',
    doStream: async ({ prompt, abortSignal }) => {
      const { userText, toolResult } = readPrompt(prompt);
      const inputTokens = promptSize(prompt);
      // `weather` calls the server-side getWeather; `confirm` the client-side askForConfirmation.
      const toolName = /\bweather\b/i.test(userText)
        ? 'getWeather'
        : /\bconfirm\b/i.test(userText)
          ? 'askForConfirmation'
          : undefined;
      const callsTool = toolName !== undefined && toolResult === undefined;
      const words = callsTool
        ? []
        : `You said: ${userText}${
            toolResult === undefined ? '' : ` (${toolName}: ${JSON.stringify(toolResult)})`
          }`.split(/(?<= )/);
      const stream = new ReadableStream({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({
            type: 'response-metadata',
            id: `response-${Date.now()}`,
            modelId: 'mock-echo',
            timestamp: new Date(0),
          });
          if (callsTool) {
            await sleep(delay, abortSignal);
            controller.enqueue({
              type: 'tool-call',
              toolCallId: `call-${inputTokens}`,
              toolName: toolName as string,
              input: JSON.stringify(
                toolName === 'getWeather' ? { city: 'Paris' } : { question: userText },
              ),
            });
          } else {
            controller.enqueue({ type: 'text-start', id: 'text-1' });
            for (const word of words) {
              await sleep(delay, abortSignal);
              if (abortSignal?.aborted) break;
              controller.enqueue({ type: 'text-delta', id: 'text-1', delta: word });
            }
            controller.enqueue({ type: 'text-end', id: 'text-1' });
          }
          controller.enqueue({
            type: 'finish',
            finishReason: { unified: callsTool ? 'tool-calls' : 'stop', raw: undefined },
            usage: {
              inputTokens: {
                total: inputTokens,
                noCache: inputTokens,
                cacheRead: 0,
                cacheWrite: 0,
              },
              outputTokens: {
                total: callsTool ? 8 : words.length,
                text: callsTool ? 8 : words.length,
                reasoning: 0,
              },
            },
          });
          controller.close();
        },
      });
      return { stream };
    },
  });
}
