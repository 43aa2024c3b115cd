import { createOpenAI } from '@ai-sdk/openai';
import { gateway, type LanguageModel } from 'ai';
import { createMockModel } from './mock-model';

/** The model the environment picks, and how to describe it. */
export interface ChosenModel {
  readonly model: LanguageModel;
  readonly description: string;
}

/**
 * `CHAT_MODEL=mock` (the default without API keys) is the built-in mock; otherwise
 * `OPENAI_API_KEY` (model `CHAT_MODEL`, default gpt-4o-mini) or `AI_GATEWAY_API_KEY` (model
 * `CHAT_MODEL`, default openai/gpt-4o-mini). `ANTHROPIC_API_KEY` goes through the gateway's
 * `anthropic/…` models when `AI_GATEWAY_API_KEY` is set; without it the app says how to use it.
 * `env` is `process.env` on Node, the Worker's variables on Workers.
 */
export function chooseModel(env: Readonly<Record<string, string | undefined>>): ChosenModel {
  const name = env.CHAT_MODEL;
  const delay = Number(env.MOCK_CHUNK_DELAY_MS ?? 20);
  if (!Number.isFinite(delay) || delay < 0) {
    throw new Error(
      `MOCK_CHUNK_DELAY_MS must be a non-negative number, received '${env.MOCK_CHUNK_DELAY_MS}'.`,
    );
  }
  const mock = (): ChosenModel => ({
    model: createMockModel({ chunkDelayMs: delay }),
    description: `mock (You said: …, ${delay} ms a word)`,
  });
  if (name === 'mock') return mock();
  if (env.OPENAI_API_KEY) {
    const modelId = name ?? 'gpt-4o-mini';
    return {
      model: createOpenAI({ apiKey: env.OPENAI_API_KEY })(modelId),
      description: `openai ${modelId}`,
    };
  }
  if (env.AI_GATEWAY_API_KEY) {
    const modelId =
      name ?? (env.ANTHROPIC_API_KEY ? 'anthropic/claude-sonnet-4' : 'openai/gpt-4o-mini');
    return { model: gateway(modelId), description: `gateway ${modelId}` };
  }
  if (env.ANTHROPIC_API_KEY) {
    throw new Error(
      'ANTHROPIC_API_KEY is set, but the app reaches Anthropic through the AI Gateway: set AI_GATEWAY_API_KEY (or CHAT_MODEL=mock).',
    );
  }
  return mock();
}
