import { isTokenizer } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from './index';

describe('o200kTokenizer', () => {
  it('is a v1 Tokenizer named o200k_base', () => {
    expect(isTokenizer(o200kTokenizer)).toBe(true);
    expect(o200kTokenizer.specificationVersion).toBe('v1');
    expect(o200kTokenizer.id).toBe('o200k_base');
    expect(Object.isFrozen(o200kTokenizer)).toBe(true);
  });

  it('counts tokens as the o200k_base encoding does (the README example)', () => {
    expect(o200kTokenizer.count('')).toBe(0);
    expect(o200kTokenizer.count('Hello, world!')).toBe(4);
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(100);
    expect(o200kTokenizer.count(long)).toBeGreaterThan(900);
    expect(o200kTokenizer.count(long)).toBeLessThan(1100);
  });
});
