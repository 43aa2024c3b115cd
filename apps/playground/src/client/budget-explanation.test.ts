import { describe, expect, it } from 'vitest';
import { explainShortfall } from './budget-explanation';

describe('explainShortfall', () => {
  it('names the newest turn and the overhead, and never blames required fragments when none are', () => {
    const text = explainShortfall({
      maxInputTokens: 5,
      requiredTokens: 31,
      required: [{ kind: 'message', id: 'm9', name: 'user', tokens: 12, keptBecause: 'pending' }],
    });
    expect(text).toBe(
      'Even the parts that cannot be left out take 31 tokens, over the budget of 5 tokens: the newest turn, always sent (1 user message, 12 tokens) and the fixed overhead of the prompt and messages (19 tokens). To fit, raise the budget or shorten the newest message.',
    );
    expect(text).not.toContain('required');
  });

  it('names the required fragments when there are some', () => {
    const text = explainShortfall({
      maxInputTokens: 100,
      requiredTokens: 240,
      required: [
        { kind: 'fragment', id: '#0', name: 'role', tokens: 150, keptBecause: 'required' },
        { kind: 'fragment', id: '#2', name: 'guardrail', tokens: 40, keptBecause: 'required' },
        { kind: 'message', id: 'm1', name: 'user', tokens: 50, keptBecause: 'pending' },
      ],
    });
    expect(text).toContain('the fragments marked required “role”, “guardrail” (190 tokens)');
    expect(text).toContain('1 user message, 50 tokens');
    expect(text).not.toContain('overhead');
    expect(text).toContain(
      'To fit, raise the budget, mark fewer fragments required or shorten the newest message.',
    );
  });

  it('says only the budget can change when only overhead is counted', () => {
    expect(explainShortfall({ maxInputTokens: 1, requiredTokens: 3, required: [] })).toBe(
      'Even the parts that cannot be left out take 3 tokens, over the budget of 1 token: the fixed overhead of the prompt and messages (3 tokens). To fit, raise the budget.',
    );
  });
});
