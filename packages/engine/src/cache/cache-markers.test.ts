import { message } from '@ctxgraph/codecs';
import { role, type Tokenizer } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import type { ModelMessage, UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withoutCacheMarks } from './cache-markers';
import { anthropicCacheProfile, bedrockCacheProfile, type CacheProfile } from './cache-profiles';

// The plan owns cache marks: whatever marks the stored messages carry (a chat client's parts'
// `providerMetadata`, which the AI SDK turns into `providerOptions`) never leave
// `resolve({ format: 'model' })`, with or without a budget; other provider metadata does.

const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

const marks = {
  anthropic: { cacheControl: { type: 'ephemeral' } },
  bedrock: { cachePoint: { type: 'default' } },
  openrouter: { cache_control: { type: 'ephemeral' } },
  openai: { promptCacheBreakpoint: { mode: 'explicit' }, promptCacheRetention: '24h' },
  gateway: { cacheControl: { type: 'ephemeral' } },
};

function marked(index: number): UIMessage[] {
  return [
    {
      id: `q${index}`,
      role: 'user',
      parts: [
        { type: 'text', text: `question ${index} ${'word '.repeat(300)}`, providerMetadata: marks },
      ],
    },
    {
      id: `a${index}`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        {
          type: 'reasoning',
          text: 'thinking',
          state: 'done',
          providerMetadata: {
            ...marks,
            anthropic: { ...marks.anthropic, signature: `sig-${index}` },
          },
        },
        {
          type: 'dynamic-tool',
          toolName: 'lookup',
          toolCallId: `call-${index}`,
          state: 'output-available',
          input: {},
          output: 'found',
          callProviderMetadata: { ...marks, openai: { ...marks.openai, itemId: `fc-${index}` } },
        },
        {
          type: 'text',
          text: `answer ${index} ${'word '.repeat(300)}`,
          state: 'done',
          providerMetadata: { ...marks, openai: { ...marks.openai, itemId: `msg-${index}` } },
        },
      ],
    },
  ];
}

const names = [
  'cacheControl',
  'cache_control',
  'cachePoint',
  'promptCacheBreakpoint',
  'promptCacheRetention',
];
const count = (value: unknown, name: string): number =>
  JSON.stringify(value).split(`"${name}"`).length - 1;

async function engineWithMarkedHistory(chatId: string): Promise<ContextEngine> {
  const engine = new ContextEngine({
    store: new InMemoryContextStore(),
    chatId,
    userId: 'u',
    renderer: new LineRenderer(),
    tokenizer: words,
  });
  engine.set(role(`You are the support assistant. ${'Policy sentence. '.repeat(600)}`));
  for (let index = 0; index < 5; index += 1)
    engine.set(...marked(index).map((each) => message(each)));
  await engine.save();
  return engine;
}

function expectOtherMetadataKept(messages: readonly ModelMessage[]): void {
  const sent = JSON.stringify(messages);
  for (let index = 0; index < 5; index += 1) {
    expect(sent).toContain(`"signature":"sig-${index}"`);
    expect(sent).toContain(`"itemId":"fc-${index}"`);
    expect(sent).toContain(`"itemId":"msg-${index}"`);
  }
}

describe('cache marks in resolve({ format: "model" })', () => {
  it('without a budget: none at all, the rest of the provider metadata kept', async () => {
    const engine = await engineWithMarkedHistory('no-budget');
    const result = await engine.resolve({ format: 'model' });
    for (const name of names) expect(count(result, name)).toBe(0);
    expectOtherMetadataKept(result.messages);
    // The stored messages keep what the client sent: only the model input is cleaned.
    const { messages } = await engine.resolve();
    // 5 turns of 4 marked parts, each with an `anthropic` and a `gateway` cacheControl.
    expect(count(messages, 'cacheControl')).toBe(40);
  });

  const profiles: [string, CacheProfile, string][] = [
    ['anthropic', anthropicCacheProfile(), 'cacheControl'],
    ['bedrock', bedrockCacheProfile(), 'cachePoint'],
  ];
  it.each(profiles)(
    'with a budget (%s): the plan marks only, at most 4',
    async (_name, profile, mark) => {
      const engine = await engineWithMarkedHistory(`budget-${profile.id}`);
      const result = await engine.resolve({
        format: 'model',
        budget: { maxInputTokens: 100_000, cacheProfile: profile },
      });
      const placed = result.budget?.breakpoints.length ?? 0;
      expect(placed).toBeGreaterThan(0);
      expect(count(result, mark)).toBe(Math.min(placed, 4));
      for (const name of names.filter((each) => each !== mark)) expect(count(result, name)).toBe(0);
      expectOtherMetadataKept(result.messages);
    },
  );
});

describe('withoutCacheMarks', () => {
  it('removes the marks of messages and parts (and of a tool result content output) and nothing else', () => {
    const input = [
      { role: 'user', content: 'plain', providerOptions: { anthropic: { cacheControl: {} } } },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x', providerOptions: { custom: { keep: 1, cachePoint: {} } } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: 't',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'r', providerOptions: { anthropic: { cacheControl: {} } } },
              ],
            },
          },
        ],
      },
    ] as ModelMessage[];
    expect(withoutCacheMarks(input)).toEqual([
      { role: 'user', content: 'plain' },
      {
        role: 'user',
        content: [{ type: 'text', text: 'x', providerOptions: { custom: { keep: 1 } } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: 't',
            output: { type: 'content', value: [{ type: 'text', text: 'r' }] },
          },
        ],
      },
    ]);
    // Untouched messages are the same objects; a `__proto__` key a client sent stays a plain key.
    const clean = { role: 'user', content: [{ type: 'text', text: 'y' }] } as ModelMessage;
    expect(withoutCacheMarks([clean])[0]).toBe(clean);
    const hostile = JSON.parse(
      '{"role":"user","content":[{"type":"text","text":"z","providerOptions":{"__proto__":{"polluted":true,"cacheControl":{}}}}]}',
    ) as ModelMessage;
    const [cleaned] = withoutCacheMarks([hostile]);
    const options = (cleaned as { content: { providerOptions: object }[] }).content[0]
      ?.providerOptions;
    expect(Object.getPrototypeOf(options)).toBe(Object.prototype);
    expect(Object.hasOwn(options as object, '__proto__')).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
