import type { LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];

/** The smallest prefix the simulated cache serves, and the steps it reads in (OpenAI's). */
const CACHE_MINIMUM = 1024;
const CACHE_STEP = 128;

/** Tokens as the echo model counts them: a quarter of the characters, rounded up. */
const tokensOf = (characters: number): number => Math.ceil(characters / 4);

function lastUserText(prompt: Prompt): string {
  for (let index = prompt.length - 1; index >= 0; index -= 1) {
    const message = prompt[index];
    if (message?.role !== 'user') continue;
    return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  }
  return '';
}

/** Milliseconds to wait, cut short when the call is aborted. */
const pause = (milliseconds: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (milliseconds <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(resolve, milliseconds);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * The playground's offline model (`PLAYGROUND_MODEL=echo`): it streams `You said: <the last
 * user message>` word by word, and reports usage the way a provider with an automatic prefix
 * cache does (OpenAI's rules): the input is the prompt's size (characters / 4), and the leading
 * part that equals the previous call's prompt is reported as read from the cache, from 1,024
 * tokens on, in steps of 128. So the cache view has a real
 * provider-side figure to confirm the engine's prediction against, without a key.
 */
export function createEchoModel(options: { chunkDelayMs?: number } = {}): LanguageModel {
  const delay = options.chunkDelayMs ?? 15;
  let previous = '';
  return new MockLanguageModelV3({
    provider: 'ctxgraph-playground',
    modelId: 'echo',
    doStream: async ({ prompt, abortSignal }) => {
      const sent = JSON.stringify(prompt);
      let shared = 0;
      const limit = Math.min(sent.length, previous.length);
      while (shared < limit && sent.charCodeAt(shared) === previous.charCodeAt(shared)) shared += 1;
      previous = sent;
      const inputTokens = tokensOf(sent.length);
      // OpenAI's documented rule for automatic prompt caching: prompts of 1,024 tokens and more,
      // read in 128-token steps from the start, up to where the prompt differs.
      const sharedTokens = Math.min(inputTokens, Math.floor(shared / 4));
      const cacheRead =
        sharedTokens < CACHE_MINIMUM ? 0 : Math.floor(sharedTokens / CACHE_STEP) * CACHE_STEP;
      const words = `You said: ${lastUserText(prompt)}`.split(/(?<= )/);
      const stream = new ReadableStream({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 'text-1' });
          for (const word of words) {
            await pause(delay, abortSignal);
            if (abortSignal?.aborted) break;
            controller.enqueue({ type: 'text-delta', id: 'text-1', delta: word });
          }
          controller.enqueue({ type: 'text-end', id: 'text-1' });
          controller.enqueue({
            type: 'finish',
            finishReason: { unified: 'stop', raw: undefined },
            usage: {
              inputTokens: {
                total: inputTokens,
                noCache: inputTokens - cacheRead,
                cacheRead,
                cacheWrite: undefined,
              },
              outputTokens: { total: words.length, text: words.length, reasoning: undefined },
            },
          });
          controller.close();
        },
      });
      return { stream };
    },
  });
}
