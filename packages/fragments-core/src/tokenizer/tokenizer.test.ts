import { describe, expect, it } from 'vitest';
import { CtxGraphError } from '../errors/ctxgraph-error';
import { BudgetExceededError, ValidationError } from '../errors/errors';
import { hint, role } from '../fragment/builders';
import { withBudget } from '../fragment/fragment-budget';
import { createEstimatorTokenizer } from './estimator-tokenizer';
import { isTokenizer } from './tokenizer';

describe('createEstimatorTokenizer', () => {
  it('counts ASCII at 4 characters a token by default and other characters at 3 each', () => {
    const tokenizer = createEstimatorTokenizer();
    expect(tokenizer.id).toBe('estimate:4.00');
    expect(tokenizer.count('')).toBe(0);
    expect(tokenizer.count('abcd')).toBe(1);
    expect(tokenizer.count('abcde')).toBe(2);
    expect(tokenizer.count('日本')).toBe(2); // weight 6 / 4
    expect(tokenizer.count('😀')).toBe(1); // one character, weight 3
    expect(isTokenizer(tokenizer)).toBe(true);
  });

  it('calibrates halfway toward the reported ratio and changes its id with it', () => {
    const tokenizer = createEstimatorTokenizer({ charactersPerToken: 4 });
    // The estimate said 1200 where the provider counted 1000: text packs 4.8 characters a token.
    expect(tokenizer.calibrate({ estimatedTokens: 1200, reportedTokens: 1000 })).toBe(4.4);
    expect(tokenizer.id).toBe('estimate:4.40');
    expect(tokenizer.count('a'.repeat(44))).toBe(10);
    // Too small a sample teaches nothing.
    expect(tokenizer.calibrate({ estimatedTokens: 10, reportedTokens: 20 })).toBe(4.4);
    // The ratio stays within 1–12.
    for (let round = 0; round < 20; round += 1) {
      tokenizer.calibrate({ estimatedTokens: 100_000, reportedTokens: 100 });
    }
    expect(tokenizer.charactersPerToken).toBe(12);
  });

  it('refuses a bad ratio or sample', () => {
    expect(() => createEstimatorTokenizer({ charactersPerToken: 0 })).toThrow(
      /charactersPerToken must be a number from 1 to 12, received 0/,
    );
    expect(() => createEstimatorTokenizer({ charactersPerToken: Number.NaN })).toThrow(
      ValidationError,
    );
    const tokenizer = createEstimatorTokenizer();
    expect(() => tokenizer.calibrate({ estimatedTokens: -1, reportedTokens: 100 })).toThrow(
      /estimatedTokens must be a non-negative number, received -1/,
    );
    expect(() =>
      tokenizer.calibrate({ estimatedTokens: 100, reportedTokens: Number.POSITIVE_INFINITY }),
    ).toThrow(/reportedTokens/);
    expect(tokenizer.id).toBe('estimate:4.00');
  });

  it('isTokenizer checks the shape', () => {
    expect(isTokenizer({ id: 'x', count: () => 1 })).toBe(true);
    expect(isTokenizer({ id: 'x' })).toBe(false);
    expect(isTokenizer(null)).toBe(false);
  });
});

describe('withBudget', () => {
  it('returns a copy with the settings, leaving the original alone', () => {
    const original = hint('Catalogue');
    const marked = withBudget(original, { priority: -2, required: false });
    expect(marked).toEqual({ ...original, budget: { priority: -2, required: false } });
    expect(original).not.toHaveProperty('budget');
    expect(withBudget(role('r'), { required: true }).budget).toEqual({ required: true });
  });

  it('refuses messages, bad priorities and bad required marks', () => {
    const message = { name: 'user', data: 'hi', type: 'message' as const };
    expect(() => withBudget(message, { priority: 1 })).toThrow(/must be a context fragment/);
    expect(() => withBudget(hint('x'), { priority: Number.NaN })).toThrow(
      /budget.priority must be a finite number, received NaN/,
    );
    expect(() => withBudget(hint('x'), { required: 'yes' as unknown as boolean })).toThrow(
      /budget.required must be a boolean/,
    );
    expect(() => withBudget(hint('x'), null as unknown as object)).toThrow(ValidationError);
  });
});

describe('BudgetExceededError', () => {
  it('carries the shortfall, names the largest parts and has its marker', () => {
    const error = new BudgetExceededError({
      maxInputTokens: 100,
      requiredTokens: 150,
      tokenizer: 'estimate:4.00',
      required: [
        { kind: 'fragment', id: '#0', name: 'role', tokens: 30, keptBecause: 'required' },
        { kind: 'message', id: 'm1', name: 'user', tokens: 120, keptBecause: 'pending' },
      ],
    });
    expect(error.name).toBe('BudgetExceededError');
    expect(BudgetExceededError.isInstance(error)).toBe(true);
    expect(CtxGraphError.isInstance(error)).toBe(true);
    expect(error.shortfall.requiredTokens).toBe(150);
    expect(error.message).toContain('take 150 tokens (estimate:4.00), over maxInputTokens 100');
    expect(error.message).toContain('message m1 (user, 120 tokens, pending)');
  });
});
