import { assistantText, user } from '@ctxgraph/codecs';
import { role, type Tokenizer, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { generateText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { aiMajor } from '../../../../tooling/ai-major/major.mjs';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { openAICacheProfile, promptCacheKey } from './cache-profiles';

// OpenAI's explicit prompt-cache mode (GPT-5.6 and later). What `@ai-sdk/openai` 4.x does with
// it, read from its source (responses/convert-to-openai-responses-input.ts and
// openai-responses-language-model.ts): the call option `providerOptions.openai.promptCacheOptions`
// becomes the request's `prompt_cache_options`; a content block whose provider options hold
// `openai.promptCacheBreakpoint: { mode: 'explicit' }` (the system message's own options, a user
// text or file part, a tool result) is sent with `prompt_cache_breakpoint`. `@ai-sdk/openai` 3.x
// (AI SDK 6) has neither, so the request check runs on AI SDK 7 only.
const majorSeven = aiMajor() === '7';

const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

const model = { provider: 'openai.responses', modelId: 'gpt-5.6' };

async function engineWithHistory(chatId: string): Promise<ContextEngine> {
  const engine = new ContextEngine({
    store: new InMemoryContextStore(),
    chatId,
    userId: 'u',
    renderer: new LineRenderer(),
    tokenizer: words,
  });
  engine.set(role(`You are the support assistant. ${'Policy sentence. '.repeat(600)}`));
  for (let turn = 0; turn < 3; turn += 1) {
    engine.set(
      user(`question ${turn} ${'word '.repeat(200)}`, { id: `q${turn}` }),
      assistantText(`answer ${turn} ${'word '.repeat(200)}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
  engine.set(user('and now?', { id: 'q3' }));
  return engine;
}

const breakpoint = { openai: { promptCacheBreakpoint: { mode: 'explicit' } } };

describe("openAICacheProfile({ mode: 'explicit' })", () => {
  it('marks the plan breakpoints on the last content block and sends promptCacheOptions with the key', async () => {
    const engine = await engineWithHistory('explicit');
    const result = await engine.resolve({
      format: 'model',
      budget: {
        maxInputTokens: 100_000,
        model,
        cacheProfile: openAICacheProfile({ mode: 'explicit', ttl: '12h' }),
      },
    });
    expect(result.providerOptions).toEqual({
      openai: {
        promptCacheKey: promptCacheKey('explicit', 'main'),
        promptCacheOptions: { mode: 'explicit', ttl: '12h' },
      },
    });
    expect(result.system?.providerOptions).toEqual(breakpoint);
    const marked = result.messages
      .map((message, index) => ({ message, index }))
      .filter(({ message }) => JSON.stringify(message).includes('promptCacheBreakpoint'));
    // The previous question and this one end at the plan's breakpoints (as Anthropic's do).
    const ids = result.budget?.breakpoints.filter((entry) => entry.kind === 'message');
    expect(marked).toHaveLength(ids?.length ?? -1);
    for (const { message } of marked) {
      expect(message.role).toBe('user');
      const parts = message.content as { providerOptions?: unknown }[];
      expect(parts.at(-1)?.providerOptions).toEqual(breakpoint);
    }
    expect(result.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'and now?', providerOptions: breakpoint }],
    });
    // Predicted as breakpoints that OpenAI reports writes for, living 12 hours.
    expect(result.budget?.cache).toMatchObject({
      profile: 'openai-explicit',
      rules: { mode: 'breakpoints', ttlSeconds: 43_200, reportsWrites: true },
      readTokens: 0,
    });
    expect(result.budget?.cache.writeTokens).toBeGreaterThan(0);
  });

  it('implicit mode and 24-hour retention mark nothing and send their call option', async () => {
    const engine = await engineWithHistory('implicit');
    const implicit = await engine.resolve({
      format: 'model',
      budget: {
        maxInputTokens: 100_000,
        model,
        cacheProfile: openAICacheProfile({ mode: 'implicit' }),
      },
    });
    expect(JSON.stringify(implicit.messages)).not.toContain('promptCacheBreakpoint');
    expect(implicit.providerOptions?.openai).toMatchObject({
      promptCacheOptions: { mode: 'implicit' },
    });
    // GPT-5.6 and later report (and bill) cache writes in both modes.
    expect(implicit.budget?.cache.rules).toMatchObject({ mode: 'prefix', reportsWrites: true });
    const retained = await engine.resolve({
      format: 'model',
      budget: {
        maxInputTokens: 100_000,
        model: { provider: 'openai.responses', modelId: 'gpt-5' },
        cacheProfile: openAICacheProfile({ retention: '24h' }),
      },
    });
    expect(retained.providerOptions?.openai).toMatchObject({ promptCacheRetention: '24h' });
    expect(retained.budget?.cache.rules.ttlSeconds).toBe(86_400);
    expect(retained.budget?.cache.rules.reportsWrites).toBe(false);
  });

  it('refuses options OpenAI does not take, with the field named', () => {
    for (const [options, field] of [
      [{ mode: 'manual' }, 'mode'],
      [{ mode: 'explicit', ttl: '1h' }, 'ttl'],
      [{ ttl: '30m' }, 'ttl'],
      [{ mode: 'explicit', retention: '24h' }, 'retention'],
      [{ retention: 'forever' }, 'retention'],
      ['explicit', 'options'],
    ] as const) {
      expect(() => openAICacheProfile(options as never)).toThrow(ValidationError);
      expect(() => openAICacheProfile(options as never)).toThrow(new RegExp(`: ${field} `));
    }
  });
});

describe.skipIf(!majorSeven)(
  "openAICacheProfile({ mode: 'explicit' }) through the real @ai-sdk/openai 4 [AI SDK 6 skips: @ai-sdk/openai 3 has no promptCacheOptions or promptCacheBreakpoint]",
  () => {
    it('the request carries prompt_cache_options and a prompt_cache_breakpoint on each marked block, and nowhere else', async () => {
      const engine = await engineWithHistory('explicit-request');
      const result = await engine.resolve({
        format: 'model',
        budget: {
          maxInputTokens: 100_000,
          model,
          cacheProfile: openAICacheProfile({ mode: 'explicit' }),
        },
      });
      const { createOpenAI } = await import('@ai-sdk/openai');
      let body: Record<string, unknown> | undefined;
      const openai = createOpenAI({
        apiKey: 'test-key',
        fetch: async (_url, init) => {
          body = JSON.parse(String(init?.body));
          return new Response(JSON.stringify({ error: { message: 'captured', type: 'test' } }), {
            status: 400,
            headers: { 'content-type': 'application/json' },
          });
        },
      });
      await expect(
        generateText({
          model: openai.responses('gpt-5.6'),
          system: result.system,
          messages: result.messages as ModelMessage[],
          maxRetries: 0,
          ...(result.providerOptions === undefined
            ? {}
            : { providerOptions: result.providerOptions as never }),
        }),
      ).rejects.toThrow(/captured/);
      if (body === undefined) throw new Error('@ai-sdk/openai sent nothing');
      expect(body.prompt_cache_options).toEqual({ mode: 'explicit' });
      expect(body.prompt_cache_key).toBe(promptCacheKey('explicit-request', 'main'));
      const input = body.input as { role: string; content: unknown }[];
      const blocks = input.flatMap((item) =>
        Array.isArray(item.content)
          ? (item.content as Record<string, unknown>[]).map((block) => ({ role: item.role, block }))
          : [],
      );
      const marked = blocks.filter(({ block }) => block.prompt_cache_breakpoint !== undefined);
      const planned = result.budget?.breakpoints.length ?? -1;
      expect(marked).toHaveLength(planned);
      for (const { block } of marked)
        expect(block.prompt_cache_breakpoint).toEqual({ mode: 'explicit' });
      // The system prompt (sent as a developer message to a reasoning model such as gpt-5.6).
      expect(marked[0]?.role).toBe('developer');
      expect(marked.at(-1)).toEqual({
        role: 'user',
        block: {
          type: 'input_text',
          text: 'and now?',
          prompt_cache_breakpoint: { mode: 'explicit' },
        },
      });
    });
  },
);
