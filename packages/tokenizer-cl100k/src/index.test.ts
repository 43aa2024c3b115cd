import { isTokenizer } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { cl100kTokenizer } from './index';

describe('cl100kTokenizer', () => {
  it('is a v1 Tokenizer named cl100k_base', () => {
    expect(isTokenizer(cl100kTokenizer)).toBe(true);
    expect(cl100kTokenizer.specificationVersion).toBe('v1');
    expect(cl100kTokenizer.id).toBe('cl100k_base');
    expect(Object.isFrozen(cl100kTokenizer)).toBe(true);
  });

  it('counts tokens as the cl100k_base encoding does (the README example)', () => {
    expect(cl100kTokenizer.count('')).toBe(0);
    expect(cl100kTokenizer.count('Hello, world!')).toBe(4);
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(100);
    expect(cl100kTokenizer.count(long)).toBeGreaterThan(900);
    expect(cl100kTokenizer.count(long)).toBeLessThan(1100);
  });
});
