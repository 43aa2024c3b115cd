import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/errors';
import {
  messageSearchText,
  prepareSearch,
  SEARCH_PAGE_SIZE,
  searchCursor,
  searchScore,
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
    expect(searchTerms('ελληνικά 東京 CAFE\u0301')).toEqual(['ελληνικα', '東京', 'cafe']);
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

  it('prepares a search with its defaults and pages by a keyset cursor bound to the search', () => {
    const search = prepareSearch({ userId: 'u', query: 'Hello world' });
    expect(search).toEqual({
      userId: 'u',
      chatId: undefined,
      branch: undefined,
      terms: ['hello', 'world'],
      prefix: false,
      limit: SEARCH_PAGE_SIZE.default,
      after: undefined,
    });
    const last = { score: 1.2345678901234567, chatId: 'chat: é/1', sequence: 42 };
    const cursor = searchCursor(search, last);
    expect(prepareSearch({ userId: 'u', query: 'hello WORLD', cursor }).after).toEqual(last);
    expect(refusal({ userId: 'u', query: 'hello', cursor }).message).toContain('cursor');
    expect(refusal({ userId: 'other', query: 'hello world', cursor }).message).toContain('cursor');
    // A cursor changed by hand is refused, never read as a position.
    for (const tampered of [
      cursor.replace('42', '43'),
      cursor.replace('1.2345678901234567', '9'),
      `x${cursor}`,
      cursor.replace(/:[0-9a-z]+$/, ':0'),
      "1:1:' OR 1=1 --:abc",
      '-1:0:c:abc',
      'NaN:0:c:abc',
      '1:0:%E0%A4%A:abc',
    ])
      expect(
        refusal({ userId: 'u', query: 'hello world', cursor: tampered }).message,
        tampered,
      ).toContain('cursor');
  });

  it('folds words one way for every store: NFKD, no combining marks, lower case, runs of letters and digits', () => {
    expect(searchTokens('Jane.Doe@example.com 10.5 report_final.pdf')).toEqual([
      'jane',
      'doe',
      'example',
      'com',
      '10',
      '5',
      'report',
      'final',
      'pdf',
    ]);
    expect(searchTokens('İSTANBUL İstanbul café CAFE\u0301 ﬁle ℌ')).toEqual([
      'istanbul',
      'istanbul',
      'cafe',
      'cafe',
      'file',
      'h',
    ]);
    expect(searchTerms('İstanbul AND café NOT')).toEqual(['istanbul', 'cafe']);
    for (const token of searchTokens('a\u0130b ǅ ﬃ ⅷ ½ 𝔘𝔫𝔦'))
      expect(token).toMatch(/^[\p{L}\p{N}]+$/u);
  });

  it('scores from the message and the query alone, the same way every store does', () => {
    expect(searchScore(['a', 'b'], ['c'])).toBeUndefined();
    expect(searchScore(['a'], ['a'])).toBe(2.2 / (1 + 0.3 + 0.028125 * 1));
    const many = searchScore(['a', 'a', 'a'], ['a']) as number;
    const diluted = searchScore(['a', ...Array.from({ length: 40 }, () => 'x')], ['a']) as number;
    expect(many).toBeGreaterThan(searchScore(['a'], ['a']) as number);
    expect(diluted).toBeLessThan(searchScore(['a'], ['a']) as number);
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

  it('prefix: the last word typed is the prefix, refused unless the store supports it', () => {
    expect(refusal({ userId: 'u', query: 'fib', prefix: true }).message).toContain(
      'capabilities.searchPrefix',
    );
    expect(() => prepareSearch({ userId: 'u', query: 'fib', prefix: 1 as never }, true)).toThrow(
      'prefix must be a boolean',
    );
    const search = prepareSearch({ userId: 'u', query: 'Fib lucas FIB', prefix: true }, true);
    expect(search).toMatchObject({ terms: ['lucas', 'fib'], prefix: true });
    expect(prepareSearch({ userId: 'u', query: 'fib AND', prefix: true }, true).terms).toEqual([
      'fib',
    ]);
    // The word limit keeps the last word, in the last place.
    const many = Array.from({ length: 40 }, (_, index) => `w${index}`).join(' ');
    const capped = prepareSearch({ userId: 'u', query: many, prefix: true }, true).terms;
    expect(capped).toHaveLength(32);
    expect(capped.at(-1)).toBe('w39');
    // A prefix search and a whole-word search of the same words do not share cursors.
    const cursor = searchCursor(search, { score: 1, chatId: 'c', sequence: 1 });
    expect(() =>
      prepareSearch({ userId: 'u', query: 'lucas fib', prefix: true, cursor }, true),
    ).not.toThrow();
    expect(() => prepareSearch({ userId: 'u', query: 'lucas fib', cursor }, true)).toThrow(
      'cursor',
    );
  });

  it('prefix: scores every word the prefix starts, and the snippet finds it', () => {
    expect(searchScore(['fibonacci', 'fib', 'x'], ['fib'], true)).toBe(
      (2 * 2.2) / (2 + 0.3 + 0.028125 * 3),
    );
    expect(searchScore(['fob'], ['fib'], true)).toBeUndefined();
    // Only the last term is a prefix.
    expect(searchScore(['fibonacci', 'lucas'], ['fib', 'lucas'], true)).toBeUndefined();
    expect(searchSnippet('Start. The Fibonacci numbers', ['fib'], true)).toContain('Fibonacci');
  });
});
