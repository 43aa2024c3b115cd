import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/errors';
import {
  messageSearchText,
  prepareSearch,
  SEARCH_PAGE_SIZE,
  searchCursor,
  searchSnippet,
  searchTerms,
  searchTokens,
} from './search-input';

function refusal(input: unknown): ValidationError {
  try {
    prepareSearch(input as never);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('expected a ValidationError');
}

describe('search input', () => {
  it('reads a query as its words: lower-cased, once each, operators and punctuation dropped', () => {
    expect(searchTerms('"Red" AND (kite*) OR -red NOT near')).toEqual(['red', 'kite', 'near']);
    expect(searchTerms('ελληνικά 東京 CAFE\u0301')).toEqual(['ελληνικά', '東京', 'café']);
    expect(searchTerms('AND OR NOT NEAR * ( ) "" - + ^ :')).toEqual([]);
    expect(
      searchTerms(Array.from({ length: 40 }, (_, index) => `w${index}`).join(' ')),
    ).toHaveLength(32);
    expect(searchTokens('Hello, hello world!')).toEqual(['hello', 'hello', 'world']);
  });

  it('searches text and reasoning parts only', () => {
    expect(
      messageSearchText({
        id: 'm',
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'why' },
          { type: 'tool-x', input: { text: 'no' } },
          { type: 'text', text: 'answer' },
          null,
          { type: 'text', text: 42 },
        ],
      }),
    ).toBe('why\nanswer');
  });

  it('cuts a snippet around the first word found, never inside a surrogate pair', () => {
    expect(searchSnippet('short   text\nhere', ['text'])).toBe('short text here');
    const long = `${'lead '.repeat(40)}target ${'tail '.repeat(40)}`;
    const snippet = searchSnippet(long, ['target']);
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet).toContain('target');
    expect(snippet.length).toBeLessThanOrEqual(162);
    expect(searchSnippet(`${'x'.repeat(200)}`, ['absent']).startsWith('xxx')).toBe(true);
    const emoji = `${'😀'.repeat(100)} target`;
    expect(searchSnippet(emoji, ['target'])).not.toMatch(/^…?[\uDC00-\uDFFF]|[\uD800-\uDBFF]…?$/);
  });

  it('prepares a search with its defaults and pages by a cursor bound to the search', () => {
    const search = prepareSearch({ userId: 'u', query: 'Hello world' });
    expect(search).toEqual({
      userId: 'u',
      chatId: undefined,
      branch: undefined,
      terms: ['hello', 'world'],
      limit: SEARCH_PAGE_SIZE.default,
      offset: 0,
    });
    const cursor = searchCursor(search, 20);
    expect(prepareSearch({ userId: 'u', query: 'hello WORLD', cursor }).offset).toBe(20);
    expect(refusal({ userId: 'u', query: 'hello', cursor }).message).toContain('cursor');
    expect(refusal({ userId: 'other', query: 'hello world', cursor }).message).toContain('cursor');
  });

  it('refuses bad input with a message naming the field', () => {
    const cases: [unknown, string][] = [
      [null, 'input'],
      [{ query: 'x' }, 'userId'],
      [{ userId: 'u', query: '' }, 'query is empty'],
      [{ userId: 'u', query: ' \n ' }, 'query is empty'],
      [{ userId: 'u', query: 'AND OR *' }, 'only operators or punctuation'],
      [{ userId: 'u', query: 7 }, 'query must be a string'],
      [{ userId: 'u', query: 'x'.repeat(1_001) }, 'more than 1000'],
      [{ userId: 'u', query: 'x', limit: -1 }, 'limit must be an integer from 1 to 100'],
      [{ userId: 'u', query: 'x', limit: 101 }, 'limit'],
      [{ userId: 'u', query: 'x', limit: '5' }, 'limit'],
      [{ userId: 'u', query: 'x', branch: 'main' }, 'branch needs chatId'],
      [{ userId: 'u', query: 'x', chatId: '' }, 'chatId'],
      [{ userId: 'u', query: 'x', cursor: 12 }, 'cursor'],
    ];
    for (const [input, text] of cases) expect(refusal(input).message).toContain(text);
  });
});
