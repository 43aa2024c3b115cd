import { assistantText, user } from '@ctxgraph/codecs';
import { role, type Tokenizer, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { cacheModelOf } from './cache-profile';
import {
  anthropicCacheProfile,
  anthropicMinCacheableTokens,
  type CacheProfile,
  promptCacheKey,
  selectCacheProfile,
} from './cache-profiles';

const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

/** A mock model of `provider`, answering every call with "ok". */
function modelOf(provider: string, modelId: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider,
    modelId,
    doGenerate: {
      content: [{ type: 'text', text: 'ok' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      },
      warnings: [],
    },
  });
}

async function engineWithHistory(chatId: string, store = new InMemoryContextStore()) {
  const engine = new ContextEngine({
    store,
    chatId,
    userId: 'u',
    renderer: new LineRenderer(),
    tokenizer: words,
  });
  engine.set(role('You are the support assistant.'));
  for (let turn = 0; turn < 3; turn += 1) {
    engine.set(
      user(`question ${turn}`, { id: `q${turn}` }),
      assistantText(`answer ${turn}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
  engine.set(user('and now?', { id: 'q3' }));
  return engine;
}

/** The prompt the model received: per message, its role and provider options (if any). */
async function sendThrough(
  model: MockLanguageModelV3,
  result: Awaited<ReturnType<ContextEngine['resolve']>> & { system?: unknown },
) {
  const resolved = result as Awaited<ReturnType<typeof resolveModel>>;
  await generateText({
    model,
    system: resolved.system,
    messages: resolved.messages,
    ...(resolved.providerOptions === undefined
      ? {}
      : { providerOptions: resolved.providerOptions }),
  });
  const call = model.doGenerateCalls[0];
  return {
    marks: (call?.prompt ?? []).map((message) => [message.role, message.providerOptions ?? null]),
    providerOptions: call?.providerOptions,
  };
}

function resolveModel(engine: ContextEngine, budget: Record<string, unknown>) {
  return engine.resolve({ format: 'model', budget: { maxInputTokens: 1000, ...budget } });
}

describe('cache profiles, through the AI SDK', () => {
  it('Anthropic: cacheControl on the system prompt, the previous question and the input', async () => {
    const engine = await engineWithHistory('anthropic');
    const model = modelOf('anthropic.messages', 'claude-sonnet-4-5');
    const result = await resolveModel(engine, { model });
    expect(result.budget?.cache.profile).toBe('anthropic');
    expect(result.providerOptions).toBeUndefined();
    const mark = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    const sent = await sendThrough(model, result);
    expect(sent.marks).toEqual([
      ['system', mark],
      ['user', null],
      ['assistant', null],
      ['user', null],
      ['assistant', null],
      ['user', mark], // q2: where the previous call's input ended
      ['assistant', null],
      ['user', mark], // q3: this input's end
    ]);
    expect(sent.providerOptions).toBeUndefined();
  });

  it("Anthropic with ttl '1h' (an explicit profile), and a gateway model id picks Anthropic", async () => {
    const engine = await engineWithHistory('anthropic-1h');
    const model = modelOf('anthropic.messages', 'claude-opus-4-5');
    const result = await resolveModel(engine, {
      model,
      cacheProfile: anthropicCacheProfile({ ttl: '1h' }),
    });
    expect(result.budget?.cache).toMatchObject({
      profile: 'anthropic-1h',
      rules: { ttlSeconds: 3600, minCacheableTokens: 4096 },
    });
    const sent = await sendThrough(model, result);
    const mark = { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } };
    expect(sent.marks.filter(([, options]) => options !== null)).toEqual([
      ['system', mark],
      ['user', mark],
      ['user', mark],
    ]);
    const gateway = await resolveModel(await engineWithHistory('gateway'), {
      model: 'anthropic/claude-sonnet-4',
    });
    expect(gateway.budget?.cache.profile).toBe('anthropic');
  });

  it('Bedrock: a cachePoint after each marked message', async () => {
    const engine = await engineWithHistory('bedrock');
    const model = modelOf('amazon-bedrock', 'anthropic.claude-3-5-haiku-20241022-v1:0');
    const result = await resolveModel(engine, { model });
    expect(result.budget?.cache).toMatchObject({
      profile: 'bedrock',
      rules: { minCacheableTokens: 2048 },
    });
    const mark = { bedrock: { cachePoint: { type: 'default' } } };
    const sent = await sendThrough(model, result);
    expect(sent.marks.filter(([, options]) => options !== null)).toEqual([
      ['system', mark],
      ['user', mark],
      ['user', mark],
    ]);
  });

  it('OpenRouter: Anthropic-style marks passed through under openrouter', async () => {
    const engine = await engineWithHistory('openrouter');
    const model = modelOf('openrouter.chat', 'anthropic/claude-sonnet-4');
    const result = await resolveModel(engine, { model });
    const mark = { openrouter: { cacheControl: { type: 'ephemeral' } } };
    const sent = await sendThrough(model, result);
    expect(sent.marks.filter(([, options]) => options !== null)).toEqual([
      ['system', mark],
      ['user', mark],
      ['user', mark],
    ]);
  });

  it('OpenAI: no marks; a promptCacheKey per chat and branch for the call', async () => {
    const store = new InMemoryContextStore();
    const engine = await engineWithHistory('openai', store);
    const model = modelOf('openai.responses', 'gpt-5');
    const result = await resolveModel(engine, { model });
    const key = promptCacheKey('openai', 'main');
    expect(result.providerOptions).toEqual({ openai: { promptCacheKey: key } });
    expect(result.budget?.cache).toMatchObject({
      profile: 'openai',
      marks: 0,
      rules: { mode: 'prefix', minCacheableTokens: 1024, prefixStep: 128 },
    });
    const sent = await sendThrough(model, result);
    expect(sent.marks.every(([, options]) => options === null)).toBe(true);
    expect(sent.providerOptions).toEqual({ openai: { promptCacheKey: key } });
    // Stable for the chat and branch, whatever the engine; another branch routes apart.
    const again = new ContextEngine({ store, chatId: 'openai', userId: 'u', tokenizer: words });
    const second = await again.resolve({
      format: 'model',
      renderer: new LineRenderer(),
      budget: { maxInputTokens: 1000, model },
    });
    expect(second.providerOptions).toEqual({ openai: { promptCacheKey: key } });
    await again.rewind('a0');
    const branched = await again.resolve({
      format: 'model',
      renderer: new LineRenderer(),
      budget: { maxInputTokens: 1000, model },
    });
    expect(branched.providerOptions).not.toEqual(result.providerOptions);
    expect(key).toMatch(/^ctxgraph-[0-9a-f]{16}$/);
    // UI messages too get the call's key (they carry no marks).
    const ui = await engine.resolve({ budget: { maxInputTokens: 1000, model } });
    expect(ui.providerOptions).toEqual({ openai: { promptCacheKey: key } });
    const anthropicUi = await engine.resolve({
      budget: { maxInputTokens: 1000, model: modelOf('anthropic.messages', 'claude-sonnet-4-5') },
    });
    expect(anthropicUi.providerOptions).toBeUndefined();
  });

  it('Google, and an unknown provider: nothing marked, no call options', async () => {
    for (const [provider, profile] of [
      ['google.generative-ai', 'google'],
      ['acme.chat', 'none'],
    ] as const) {
      const engine = await engineWithHistory(`no-marks-${profile}`);
      const model = modelOf(provider, 'gemini-2.5-flash');
      const result = await resolveModel(engine, { model });
      expect(result.budget?.cache.profile).toBe(profile);
      expect(result.providerOptions).toBeUndefined();
      const sent = await sendThrough(model, result);
      expect(sent.marks.every(([, options]) => options === null)).toBe(true);
    }
  });

  it('DeepSeek: nothing marked, the shared prefix read in 64-token units from the second call', async () => {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({
      store,
      chatId: 'deepseek',
      userId: 'u',
      renderer: new LineRenderer(),
      tokenizer: words,
    });
    engine.set(role(`You are the support assistant. ${'Answer from the manual. '.repeat(30)}`));
    engine.set(user('question 0', { id: 'q0' }));
    const model = modelOf('deepseek.chat', 'deepseek-chat');
    const first = await resolveModel(engine, { model });
    expect(first.budget?.cache).toMatchObject({
      profile: 'deepseek',
      readTokens: 0,
      rules: {
        mode: 'prefix',
        maxBreakpoints: 0,
        minCacheableTokens: 64,
        prefixStep: 64,
        reportsWrites: false,
      },
    });
    expect(first.providerOptions).toBeUndefined();
    const sent = await sendThrough(model, first);
    expect(sent.marks.every(([, options]) => options === null)).toBe(true);
    expect(sent.providerOptions).toBeUndefined();

    engine.set(assistantText('answer 0', { id: 'a0' }));
    await engine.save();
    engine.set(user('question 1', { id: 'q1' }));
    const second = await resolveModel(engine, { model: 'deepseek-chat' });
    const cache = second.budget?.cache;
    expect(cache?.profile).toBe('deepseek');
    // The first input is the shared prefix: read in whole 64-token units, never more than it.
    const firstTokens = first.budget?.totalTokens ?? 0;
    expect(firstTokens).toBeGreaterThan(64);
    expect(cache?.readTokens).toBe(64 * Math.floor(firstTokens / 64));
    expect(cache?.writeTokens).toBe(0);
  });

  it("cacheMarkers: 'none' marks nothing whatever the model", async () => {
    const engine = await engineWithHistory('none');
    const model = modelOf('anthropic.messages', 'claude-sonnet-4-5');
    const result = await resolveModel(engine, { model, cacheMarkers: 'none' });
    expect(result.budget?.cache).toMatchObject({ profile: 'none', readTokens: 0 });
    const sent = await sendThrough(model, result);
    expect(sent.marks.every(([, options]) => options === null)).toBe(true);
  });

  it("an app's own profile marks its way, within its maximum (the newest marks kept)", async () => {
    const own: CacheProfile = {
      id: 'acme',
      matches: (model) => model.provider === 'acme.chat',
      rules: () => ({
        mode: 'breakpoints',
        maxBreakpoints: 1,
        minCacheableTokens: 0,
        ttlSeconds: 60,
        prefixStep: 1,
        reportsWrites: true,
      }),
      mark: (input) => ({
        system: input.system,
        messages: input.messages.map((message, index) =>
          input.markMessages.slice(-1).includes(index)
            ? { ...message, providerOptions: { acme: { cache: true } } }
            : message,
        ),
        providerOptions: { acme: { session: `${input.chatId}/${input.branch}` } },
      }),
    };
    const engine = await engineWithHistory('own');
    const model = modelOf('acme.chat', 'acme-1');
    const result = await resolveModel(engine, { model, cacheProfile: own });
    expect(result.budget?.cache).toMatchObject({ profile: 'acme', marks: 1 });
    const sent = await sendThrough(model, result);
    expect(sent.marks.filter(([, options]) => options !== null)).toEqual([
      ['user', { acme: { cache: true } }],
    ]);
    expect(sent.providerOptions).toEqual({ acme: { session: 'own/main' } });
  });

  it('picks profiles from provider ids and knows the minimum sizes per model family', () => {
    const pick = (provider: string, modelId = 'm') => selectCacheProfile({ provider, modelId }).id;
    expect(pick('anthropic.messages')).toBe('anthropic');
    expect(pick('vertex.anthropic.messages')).toBe('anthropic');
    expect(pick('amazon-bedrock')).toBe('bedrock');
    expect(pick('openrouter.chat')).toBe('openrouter');
    expect(pick('openai.chat')).toBe('openai');
    expect(pick('gateway', 'openai/gpt-5')).toBe('openai');
    expect(pick('google.vertex.chat')).toBe('google');
    expect(pick('deepseek.chat')).toBe('deepseek');
    expect(pick('gateway', 'deepseek/deepseek-v3.2')).toBe('deepseek');
    expect(pick('mistral.chat')).toBe('none');
    expect(anthropicMinCacheableTokens('claude-sonnet-4-5-20250929')).toBe(1024);
    expect(anthropicMinCacheableTokens('claude-3-5-haiku-latest')).toBe(2048);
    expect(anthropicMinCacheableTokens('claude-haiku-4-5')).toBe(4096);
    expect(anthropicMinCacheableTokens('claude-opus-4-6')).toBe(4096);
    expect(anthropicMinCacheableTokens('claude-opus-4-1')).toBe(1024);
  });

  it('refuses a bad model, profile, rules or ttl with a ValidationError, before anything is sent', async () => {
    const engine = await engineWithHistory('bad');
    await expect(resolveModel(engine, { model: 42 })).rejects.toThrow(
      /budget\.model must be an AI SDK model/,
    );
    await expect(resolveModel(engine, { model: { provider: 'x' } })).rejects.toThrow(
      ValidationError,
    );
    await expect(resolveModel(engine, { cacheProfile: { id: 'x' } })).rejects.toThrow(
      /budget\.cacheProfile must be a CacheProfile/,
    );
    const broken: CacheProfile = {
      ...anthropicCacheProfile(),
      id: 'broken',
      rules: () => ({ mode: 'sometimes' }) as never,
    };
    await expect(resolveModel(engine, { cacheProfile: broken })).rejects.toThrow(
      /cache profile "broken": rules\(modelId\) mode must be/,
    );
    expect(() => anthropicCacheProfile({ ttl: '2h' as never })).toThrow(/ttl must be '5m' or '1h'/);
    // Nothing was saved or dropped: the pending question is still there.
    expect((await engine.inspect()).fragments.pending).toHaveLength(1);
  });
});

describe('cacheModelOf', () => {
  it('places a model id by its provider prefix, gateway family or family name', () => {
    expect(cacheModelOf('openai:gpt-4o')).toEqual({ provider: 'openai', modelId: 'gpt-4o' });
    expect(cacheModelOf('anthropic/claude-sonnet-4')).toEqual({
      provider: 'gateway',
      modelId: 'anthropic/claude-sonnet-4',
    });
    expect(cacheModelOf('gpt-4o-mini').provider).toBe('openai');
    expect(cacheModelOf('o4-mini').provider).toBe('openai');
    expect(cacheModelOf('claude-3-5-haiku').provider).toBe('anthropic');
    expect(cacheModelOf('gemini-2.5-pro').provider).toBe('google');
    expect(cacheModelOf('deepseek-chat').provider).toBe('deepseek');
    expect(cacheModelOf('echo').provider).toBe('unknown');
  });
});
