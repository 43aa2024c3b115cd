import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/errors';
import * as root from '../index';
import type { CommitInput } from '../store/context-store';
import { prepareCommit } from '../store/kit/commit-input';
import { assertIdentifier } from './identifiers';
import { MAX_JSON_DEPTH } from './limits';
import { assertJsonObject, jsonIssues, toJsonText } from './storable-json';

const message = (id: string, text = 'hi') => ({
  id,
  message: { id, role: 'user', parts: [{ type: 'text', text }] },
});
const commit = (messages: unknown[]): CommitInput => ({
  chatId: 'c',
  branch: 'main',
  expectedHeadId: null,
  messages: messages as CommitInput['messages'],
});

describe('assertIdentifier', () => {
  it('accepts any non-empty string without NUL, unicode and quotes included', () => {
    for (const value of ['a', 'o\'brien "quoted"', '🎉 chat', 'x'.repeat(512), 'line\nbreak']) {
      expect(() => assertIdentifier('m', 'chatId', value)).not.toThrow();
    }
  });

  it.each([
    ['', 'chatId expected a non-empty string'],
    ['x'.repeat(513), 'expected at most 512 characters, received 513'],
    // 171 CJK characters are 513 bytes of UTF-8: within the character limit, over the byte one.
    ['漢'.repeat(171), 'expected at most 512 bytes of UTF-8, received 513'],
    ['😀'.repeat(129), 'expected at most 512 bytes of UTF-8, received 516'],
    ['a\u0000b', 'must not contain the NUL character'],
    [42, 'expected a string, received number'],
    ['bad\uD800', 'must not contain a lone UTF-16 surrogate'],
    [null, 'expected a string, received null'],
  ])('refuses %j', (value, message) => {
    expect(() => assertIdentifier('openChat(input)', 'chatId', value)).toThrow(
      `openChat(input): ${message.startsWith('chatId') ? message : `chatId ${message}`}`,
    );
  });
});

describe('identifier byte limit', () => {
  it('accepts exactly 512 bytes of UTF-8', () => {
    expect(() => assertIdentifier('m', 'id', `${'漢'.repeat(170)}ab`)).not.toThrow();
    expect(() => assertIdentifier('m', 'id', '😀'.repeat(128))).not.toThrow();
  });
});

describe('JSON depth limit', () => {
  const nest = (depth: number): unknown => {
    let value: unknown = 'leaf';
    for (let level = 0; level < depth; level += 1) value = { child: value };
    return value;
  };

  it('accepts values nested up to the limit and refuses deeper ones with a path', () => {
    expect(jsonIssues(nest(MAX_JSON_DEPTH), 'v')).toEqual([]);
    const issues = jsonIssues(nest(MAX_JSON_DEPTH + 1), 'v');
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(issues[0]?.path.startsWith('v.child.child')).toBe(true);
  });

  it('refuses 5,000 levels with a ValidationError, not a stack overflow', () => {
    expect(() => toJsonText('m', 'value', nest(5000))).toThrow(ValidationError);
    const deep = message('deep');
    (deep.message.parts[0] as Record<string, unknown>).providerMetadata = nest(5000);
    expect(() => prepareCommit(commit([deep]))).toThrow(/nested deeper than 128 levels/);
  });
});

describe('jsonIssues', () => {
  it('names the path of every problem, in arrays and objects, and accepts plain JSON', () => {
    expect(jsonIssues({ a: [1, 'x', { b: true, c: null }], d: { e: 'ok' } }, 'v')).toEqual([]);
    const bad = {
      parts: [{ text: 'fine' }, { text: 'cut \uD83D' }, { n: Number.NaN }],
      list: ['ok', undefined],
      deep: { when: new Date(0), big: 1n, call: () => 1 },
      'key\u0000': 'x',
      nul: 'a\u0000b',
    };
    expect(jsonIssues(bad, 'message')).toEqual([
      {
        path: 'message.parts[1].text',
        message: 'string contains a lone UTF-16 surrogate (not valid Unicode text)',
      },
      { path: 'message.parts[2].n', message: 'NaN is not a finite number' },
      { path: 'message.list[1]', message: 'undefined in an array' },
      { path: 'message.deep.when', message: 'Date instance is not plain JSON' },
      { path: 'message.deep.big', message: 'bigint is not JSON' },
      { path: 'message.deep.call', message: 'function is not JSON' },
      { path: 'message', message: 'a key contains the NUL character or a lone surrogate' },
      { path: 'message.nul', message: 'string contains the NUL character' },
    ]);
  });

  it('finds cycles, but not a value shared by two siblings', () => {
    const shared = { x: 1 };
    expect(jsonIssues({ left: shared, right: [shared] }, 'v')).toEqual([]);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.children = [{ parent: cyclic }];
    expect(jsonIssues(cyclic, 'v')).toEqual([
      { path: 'v.children[0].parent', message: 'cycle (the value contains itself)' },
    ]);
  });

  it('lists at most 50 problems', () => {
    expect(
      jsonIssues(
        Array.from({ length: 80 }, () => Number.NaN),
        'v',
      ),
    ).toHaveLength(50);
  });
});

describe('the package root', () => {
  it('exports the data rules and limits, not the store kit checks', () => {
    expect(root.MAX_JSON_DEPTH).toBe(MAX_JSON_DEPTH);
    for (const name of ['assertIdentifier', 'jsonIssues', 'stringProblem', 'utf8Length'])
      expect(name in root, name).toBe(true);
    for (const name of ['prepareCommit', 'toJsonText', 'mergeMetadata', 'isWellFormed'])
      expect(name in root, name).toBe(false);
  });
});

describe('JSON helpers', () => {
  it('toJsonText drops undefined keys and refuses what JSON cannot hold', () => {
    expect(toJsonText('m', 'value', { a: 1, b: undefined })).toBe('{"a":1}');
    expect(() => toJsonText('m', 'value', { a: 1n })).toThrow('value.a: bigint is not JSON');
    expect(() => toJsonText('m', 'value', [undefined])).toThrow('undefined in an array');
  });

  it('assertJsonObject wants an object of JSON', () => {
    expect(() => assertJsonObject('m', 'metadata', [])).toThrow(
      'metadata must be a plain JSON object',
    );
    expect(() => assertJsonObject('m', 'metadata', { s: Symbol('x') })).toThrow(
      'metadata.s: symbol is not JSON',
    );
    expect(() =>
      assertJsonObject('m', 'metadata', { nested: { ok: [1, 'two', null] } }),
    ).not.toThrow();
  });
});
