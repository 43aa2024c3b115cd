import { assistantText, message, user } from '@ctxgraph/codecs';
import { createEstimatorTokenizer, hint } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { generateText, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { aiMajor } from '../../../../tooling/ai-major/major.mjs';
import { LineRenderer, scriptedModel } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

const system = (id: string, text: string) =>
  message({ id, role: 'system', parts: [{ type: 'text', text }] });

function engineWith(...fragments: Parameters<ContextEngine['set']>): ContextEngine {
  return new ContextEngine({
    store: new InMemoryContextStore(),
    chatId: `fold-${Math.random().toString(36).slice(2)}`,
    userId: 'u',
    renderer: new LineRenderer(),
    tokenizer: createEstimatorTokenizer(),
  }).set(...fragments);
}

describe("resolve({ format: 'model' }) and system-role messages", () => {
  it('folds them into system, in order after the context, with and without a budget', async () => {
    const engine = engineWith(
      hint('x'),
      system('s1', 'Be brief.'),
      user('hi'),
      assistantText('hello'),
      system('s2', 'Answer in French.'),
      user('and now?'),
    );
    await engine.save();
    const expected = 'hint: x\n\nBe brief.\n\nAnswer in French.';
    for (const options of [{}, { budget: { maxInputTokens: 10_000 } }]) {
      const resolved = await engine.resolve({ format: 'model', ...options });
      expect(resolved.systemPrompt).toBe('hint: x');
      expect(resolved.system).toMatchObject({ role: 'system', content: expected });
      expect(resolved.messages.map((entry) => entry.role)).toEqual(['user', 'assistant', 'user']);
    }
  });

  it('gives output that generateText takes as it is, on AI SDK 6 and 7', async () => {
    const engine = engineWith(hint('x'), system('s1', 'Be brief.'), user('hi'));
    const { system: systemMessage, messages } = await engine.resolve({ format: 'model' });
    const model = scriptedModel('ok');
    const result = await generateText({ model, system: systemMessage, messages });
    expect(result.text).toBe('ok');
    const prompt = model.doGenerateCalls[0]?.prompt ?? [];
    expect(prompt.filter((entry) => entry.role === 'system')).toEqual([
      { role: 'system', content: 'hint: x\n\nBe brief.' },
    ]);
    // Why the fold: AI SDK 7 refuses a system message inside `messages`.
    const unfolded: ModelMessage[] = [{ role: 'system', content: 'Be brief.' }, ...messages];
    const sent = generateText({ model: scriptedModel('ok'), messages: unfolded });
    if (aiMajor() === '7') await expect(sent).rejects.toThrow(/system/i);
    else await expect(sent).resolves.toMatchObject({ text: 'ok' });
  });

  it('leaves system as the context alone when the history has no system message', async () => {
    const resolved = await engineWith(hint('x'), user('hi')).resolve({ format: 'model' });
    expect(resolved.system).toEqual({ role: 'system', content: 'hint: x' });
    expect(resolved.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('starts system with the first system message when the context renders empty', async () => {
    const resolved = await engineWith(system('s1', 'Be brief.'), user('hi')).resolve({
      format: 'model',
    });
    expect(resolved.system).toEqual({ role: 'system', content: 'Be brief.' });
  });
});
