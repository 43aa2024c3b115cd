import {
  anthropicCacheProfile,
  type BudgetOptions,
  type ContextEngine,
  openAICacheProfile,
} from '@ctxgraph/engine';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { simulateReadableStream, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createChatCycle } from './chat-cycle';

// The plan owns cache marks: the marks a chat client puts on its messages (a part's
// `providerMetadata`, which the AI SDK turns into `providerOptions`) never reach the provider,
// with or without a budget. Providers accept 4 marks a request; a client could send dozens.

function recordingModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'anthropic.messages',
    modelId: 'claude-sonnet-4-5',
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Fine.' },
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: undefined },
            usage: {
              inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 1, text: 1, reasoning: undefined },
            },
          },
        ],
      }),
    }),
  });
}

/** Every cache mark a client could put on one part, in each provider's own words. */
const clientMarks = {
  anthropic: { cacheControl: { type: 'ephemeral' }, cache_control: { type: 'ephemeral' } },
  bedrock: { cachePoint: { type: 'default' } },
  openrouter: { cacheControl: { type: 'ephemeral' } },
  openai: { promptCacheBreakpoint: { mode: 'explicit' }, promptCacheKey: 'client-key' },
};
const markNames = [
  'cacheControl',
  'cache_control',
  'cachePoint',
  'promptCacheBreakpoint',
  'promptCacheKey',
];

/** A conversation whose every part carries client marks, beside metadata that must stay. */
function markedConversation(): UIMessage[] {
  const messages: UIMessage[] = [];
  for (let index = 0; index < 6; index += 1) {
    messages.push({
      id: `q${index}`,
      role: 'user',
      parts: [
        { type: 'text', text: `Question ${index}`, providerMetadata: clientMarks },
        {
          type: 'file',
          mediaType: 'text/plain',
          url: 'data:text/plain;base64,aGk=',
          providerMetadata: clientMarks,
        },
      ],
    });
    messages.push({
      id: `a${index}`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'reasoning',
          text: 'Thinking.',
          state: 'done',
          providerMetadata: {
            ...clientMarks,
            anthropic: { ...clientMarks.anthropic, signature: `sig-${index}` },
          },
        },
        {
          type: 'tool-lookup',
          toolCallId: `call-${index}`,
          state: 'output-available',
          input: { query: 'x' },
          output: 'found',
          callProviderMetadata: {
            ...clientMarks,
            openai: { ...clientMarks.openai, itemId: `fc-${index}` },
          },
        },
        {
          type: 'text',
          text: `Answer ${index}`,
          state: 'done',
          providerMetadata: {
            ...clientMarks,
            openai: { ...clientMarks.openai, itemId: `msg-${index}` },
          },
        },
      ],
    });
  }
  messages.push({
    id: 'q-last',
    role: 'user',
    parts: [{ type: 'text', text: 'And now?', providerMetadata: clientMarks }],
  });
  return messages;
}

const count = (value: unknown, name: string): number =>
  JSON.stringify(value).split(`"${name}"`).length - 1;

describe("a client's cache marks", () => {
  const budgets: [string, BudgetOptions | undefined][] = [
    ['without a budget', undefined],
    ['with an Anthropic budget', { maxInputTokens: 50_000, cacheProfile: anthropicCacheProfile() }],
    [
      'with an explicit OpenAI budget',
      { maxInputTokens: 50_000, cacheProfile: openAICacheProfile({ mode: 'explicit' }) },
    ],
  ];
  it.each(budgets)('never reach the provider (%s): only the plan marks', async (_name, budget) => {
    const store = new InMemoryContextStore();
    const model = recordingModel();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    // Long enough for the plan to mark the system prompt and messages (a provider's minimum).
    const rules = Array.from({ length: 400 }, (_, index) => `Rule ${index}: be brief.`).join(' ');
    const turn = await cycle.begin(
      { id: 'marks', messages: markedConversation() },
      {
        userId: 'u',
        context: (engine: ContextEngine) => engine.set(role(rules)),
        ...(budget === undefined ? {} : { budget }),
      },
    );
    await turn.respond(streamText({ model, ...turn })).text();
    const prompt = model.doStreamCalls[0]?.prompt;
    // The plan's marks are those of the turn's input (system and messages); the provider gets
    // exactly those and nothing of the client's.
    const planned = { system: turn.system, messages: turn.messages };
    for (const name of markNames) expect(count(prompt, name)).toBe(count(planned, name));
    expect(count(prompt, 'cache_control')).toBe(0);
    expect(count(prompt, 'cachePoint')).toBe(0);
    expect(count(prompt, 'promptCacheKey')).toBe(0);
    const anthropicMarks = count(prompt, 'cacheControl');
    const openAIMarks = count(prompt, 'promptCacheBreakpoint');
    expect(anthropicMarks + openAIMarks).toBeLessThanOrEqual(4);
    if (budget === undefined) expect(anthropicMarks + openAIMarks).toBe(0);
    else expect(anthropicMarks + openAIMarks).toBeGreaterThan(0);
    // What is not a cache mark passes through: reasoning signatures and OpenAI item ids.
    const sent = JSON.stringify(prompt);
    for (let index = 0; index < 6; index += 1) {
      expect(sent).toContain(`"signature":"sig-${index}"`);
      expect(sent).toContain(`"itemId":"fc-${index}"`);
      expect(sent).toContain(`"itemId":"msg-${index}"`);
    }
    // What the chat stores is the client's message as it came (the marks are dropped on the way
    // to the model, not rewritten in the store).
    const stored = await cycle.messages('marks', { userId: 'u' });
    expect(count(stored[0], 'cacheControl')).toBe(4);
  });
});
