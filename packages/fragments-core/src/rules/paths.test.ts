import { describe, expect, it } from 'vitest';
import * as kit from '../store/kit/index';
import { describeValue, joinPath, prefixPath } from './index';

describe('the data rules module', () => {
  it('builds paths that read like property access', () => {
    expect(joinPath('', 'policies')).toBe('policies');
    expect(joinPath('policies', 1)).toBe('policies[1]');
    expect(joinPath('policies[1]', 'rule')).toBe('policies[1].rule');
    expect(joinPath('entries', 'a b')).toBe('entries["a b"]');
    expect(prefixPath('message', 'parts[0]')).toBe('message.parts[0]');
    expect(prefixPath('message', '[0]')).toBe('message[0]');
    expect(prefixPath('message', '')).toBe('message');
    expect(prefixPath('', 'parts')).toBe('parts');
  });

  it('describes a value by its kind', () => {
    expect([null, [], 1, 'a', {}, undefined].map(describeValue)).toEqual([
      'null',
      'array',
      'number',
      'string',
      'object',
      'undefined',
    ]);
  });

  it('is exported from the main entry only, not from the store kit', () => {
    for (const name of [
      'assertIdentifier',
      'jsonIssues',
      'utf8Length',
      'MAX_JSON_DEPTH',
      'CHAT_PAGE_SIZE',
    ])
      expect(name in kit, name).toBe(false);
  });
});
