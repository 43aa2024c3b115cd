import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { assistantText, user } from './message-fragment';
import { toModelMessages } from './model-messages';

describe('toModelMessages', () => {
  it('turns UIMessages into model messages that generateText accepts', async () => {
    const uiMessages = [
      user('What is 2+2?').codec.encode(),
      assistantText('4').codec.encode(),
      user('And 3+3?').codec.encode(),
    ];
    const modelMessages = await toModelMessages(uiMessages);
    expect(modelMessages.map((entry) => entry.role)).toEqual(['user', 'assistant', 'user']);

    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: '6' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    const response = await generateText({ model, system: 'Be brief.', messages: modelMessages });
    expect(response.text).toBe('6');
    const prompt = model.doGenerateCalls[0]?.prompt ?? [];
    expect(prompt[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(prompt).toHaveLength(4);
  });
});
