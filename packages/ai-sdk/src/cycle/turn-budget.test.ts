import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { MessageNotFoundError, role, ValidationError } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import {
  jsonSchema,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createChatCycle } from './chat-cycle';

/** A model that reports `cacheRead` of its `input` tokens read from the provider's cache. */
function cachingModel(input: number, cacheRead: number): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Noted.' },
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: undefined },
            usage: {
              inputTokens: {
                total: input,
                noCache: input - cacheRead,
                cacheRead,
                cacheWrite: undefined,
              },
              outputTokens: { total: 2, text: 2, reasoning: undefined },
            },
          },
        ],
      }),
    }),
  });
}

const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

describe('a turn with its own budget', () => {
  it('saves the reply with the budget cache prediction, which usage() reports predicted and confirmed', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    // Long enough for a provider to cache (providers cache prefixes from about 1,024 tokens).
    const instructions = Array.from(
      { length: 300 },
      (_, index) => `Rule ${index}: answer in one short sentence.`,
    ).join(' ');
    const context = (engine: ContextEngine) => engine.set(role(instructions));
    const send = async (id: string, text: string, input: number, cacheRead: number) => {
      const turn = await cycle.begin(
        { id: 'budgeted', message: ask(id, text), trigger: 'submit-message' },
        { userId: 'u', context, budget: { maxInputTokens: 20_000 } },
      );
      await turn.respond(streamText({ model: cachingModel(input, cacheRead), ...turn })).text();
    };
    await send('q1', 'First question about graphs.', 3_000, 0);
    await send('q2', 'Second question about trees.', 3_020, 2_900);

    const graph = await store.getGraph('budgeted');
    const replies = graph.nodes.filter((node) => node.message.role === 'assistant');
    expect(replies).toHaveLength(2);
    for (const reply of replies) {
      const usage = reply.engineRecord?.usage as {
        cache?: { predicted: unknown; confirmed: { readTokens: number } };
      };
      expect(usage.cache?.predicted).toBeDefined();
    }
    // What a fresh engine reports: both calls with a prediction, the provider's reads confirmed.
    const fresh = new ContextEngine({ store, chatId: 'budgeted', userId: 'u' });
    const { cache } = await fresh.usage({ scope: 'chat' });
    expect(cache.calls).toBe(2);
    expect(cache.readTokens).toBe(2_900);
    expect(cache.inputTokens).toBe(6_020);
    // The prediction is recorded per call: the provider read more than the plan expected here.
    expect(cache.agreed + cache.readLess + cache.readMore).toBe(2);
    expect(cache.hitRate).toBeCloseTo(2_900 / 6_020);
    // The second request ran on the chat's warm engine: its prediction started from the first
    // call's plan, so something was predicted to be read.
    expect(cache.predictedHitRate).toBeGreaterThan(0);
  });

  it('a tool-calling turn records each step as a provider call, reconciled against its own cache figures', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const reports = [
      { input: 3_000, read: 0, write: 2_990 },
      { input: 3_120, read: 2_990, write: 0 },
    ];
    let call = 0;
    const model = new MockLanguageModelV3({
      provider: 'anthropic.messages',
      modelId: 'claude-sonnet-4-5',
      doStream: async () => {
        const report = reports[call] ?? { input: 0, read: 0, write: 0 };
        const first = call === 0;
        call += 1;
        return {
          stream: simulateReadableStream({
            chunks: [
              ...(first
                ? [
                    {
                      type: 'tool-call' as const,
                      toolCallId: 'c1',
                      toolName: 'clock',
                      input: '{}',
                    },
                  ]
                : [
                    { type: 'text-start' as const, id: 't' },
                    { type: 'text-delta' as const, id: 't', delta: 'Noon.' },
                    { type: 'text-end' as const, id: 't' },
                  ]),
              {
                type: 'finish' as const,
                finishReason: {
                  unified: first ? ('tool-calls' as const) : ('stop' as const),
                  raw: undefined,
                },
                usage: {
                  inputTokens: {
                    total: report.input,
                    noCache: report.input - report.read - report.write,
                    cacheRead: report.read,
                    cacheWrite: report.write,
                  },
                  outputTokens: { total: 5, text: 5, reasoning: undefined },
                },
              },
            ],
          }),
        };
      },
    });
    const instructions = Array.from({ length: 300 }, (_, index) => `Rule ${index}.`).join(' ');
    const turn = await cycle.begin(
      { id: 'tools', message: ask('q1', 'What time is it?'), trigger: 'submit-message' },
      {
        userId: 'u',
        context: (engine: ContextEngine) => engine.set(role(instructions)),
        budget: { maxInputTokens: 20_000, model },
      },
    );
    await turn
      .respond(
        streamText({
          model,
          ...turn,
          tools: {
            clock: tool({
              inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
              execute: async () => 'It is noon.',
            }),
          },
          stopWhen: stepCountIs(2),
        }),
      )
      .text();
    const fresh = new ContextEngine({ store, chatId: 'tools', userId: 'u' });
    const usage = await fresh.usage({ scope: 'chat' });
    expect(usage.calls).toBe(2);
    expect(usage.inputTokens).toBe(6_120);
    expect(usage.cacheReadTokens).toBe(2_990);
    expect(usage.cacheWriteTokens).toBe(2_990);
    // Each step is checked against its own figures: the first wrote its input, the second read it.
    expect(usage.cache.calls).toBe(2);
    expect(usage.cache.readTokens).toBe(2_990);
    expect(usage.cache.inputTokens).toBe(6_120);
    expect(usage.cache.misses.filter((miss) => miss.step !== undefined)).toEqual([]);
  });

  it('a reply without a budget carries no cache record', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const turn = await cycle.begin(
      { id: 'plain', message: ask('q1', 'Hello'), trigger: 'submit-message' },
      { userId: 'u' },
    );
    await turn.respond(streamText({ model: cachingModel(10, 0), ...turn })).text();
    const fresh = new ContextEngine({ store, chatId: 'plain', userId: 'u' });
    expect((await fresh.usage({ scope: 'chat' })).cache.calls).toBe(0);
  });
});

describe('after: where a last-message body continues', () => {
  it('continues from the node the client shows, not the most recently written one', async () => {
    const store = new InMemoryContextStore();
    const seed = new ContextEngine({ store, chatId: 'two-heads', userId: 'u' });
    seed.set(user('Root question'), assistantText('Root answer'));
    await seed.save();
    const firstHead = seed.headMessageId ?? '';
    seed.set(user('Later question'), assistantText('Later answer'));
    await seed.save();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const turn = await cycle.begin(
      { id: 'two-heads', message: ask('q-new', 'Branching question'), trigger: 'submit-message' },
      { userId: 'u', after: firstHead },
    );
    expect(turn.originalMessages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);
    await turn.respond(streamText({ model: cachingModel(10, 0), ...turn })).text();
    const path = await cycle.messages('two-heads', { userId: 'u', leaf: turn.replyId });
    const text = (message: UIMessage) =>
      message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    expect(path.map(text)).toEqual([
      'Root question',
      'Root answer',
      'Branching question',
      'Noted.',
    ]);
  });

  it('refuses a node that is not in the chat before writing anything', async () => {
    const store = new InMemoryContextStore();
    const seed = new ContextEngine({ store, chatId: 'strict', userId: 'u' });
    seed.set(user('Only question'));
    await seed.save();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    await expect(
      cycle.begin(
        { id: 'strict', message: ask('q2', 'Where?'), trigger: 'submit-message' },
        { userId: 'u', after: 'no-such-node' },
      ),
    ).rejects.toThrow(/no-such-node/);
    expect((await store.getGraph('strict')).nodes).toHaveLength(1);
  });

  it('on a new chat id, a refused node (one of another chat, or not an id) creates nothing', async () => {
    const store = new InMemoryContextStore();
    const seed = new ContextEngine({ store, chatId: 'elsewhere', userId: 'u' });
    seed.set(user('A question of another chat'));
    await seed.save();
    const foreignNode = seed.headMessageId ?? '';
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const body = { id: 'brand-new', message: ask('q1', 'Hello?'), trigger: 'submit-message' };
    await expect(cycle.begin(body, { userId: 'u', after: foreignNode })).rejects.toSatisfy(
      (error) => MessageNotFoundError.isInstance(error) && error.message.includes(foreignNode),
    );
    await expect(cycle.begin(body, { userId: 'u', after: 'bad\u0000id' })).rejects.toSatisfy(
      (error) => ValidationError.isInstance(error),
    );
    expect(await store.getChat('brand-new')).toBeNull();
    expect((await store.listChats({ userId: 'u' })).items.map((chat) => chat.id)).toEqual([
      'elsewhere',
    ]);
    // The same body without `after` (or with null: a new root) makes the chat.
    await cycle.begin(body, { userId: 'u', after: null });
    expect(
      (await cycle.messages('brand-new', { userId: 'u' })).map((message) => message.id),
    ).toEqual(['q1']);
  });
});
