import {
  type ContextFragment,
  type FragmentData,
  guardrail,
  hint,
  lastAssistantMessage,
  policy,
  walkFragments,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { decodeSerializedValue, encodeSerializedValue, SerializationError } from './index';

function issuesOf(action: () => unknown): readonly { path: string; message: string }[] {
  try {
    action();
  } catch (error) {
    expect(SerializationError.isInstance(error)).toBe(true);
    return (error as SerializationError).issues;
  }
  throw new Error('expected a SerializationError, but nothing was thrown');
}

describe('encodeSerializedValue', () => {
  it('encodes the spec example: fragments inside data become flat objects', () => {
    expect(
      encodeSerializedValue({
        policies: [
          'Prefer low-risk actions first',
          hint('Validate assumptions before destructive actions'),
        ],
      }),
    ).toEqual({
      policies: [
        'Prefer low-risk actions first',
        { type: 'hint', text: 'Validate assumptions before destructive actions' },
      ],
    });
  });

  it('keeps JSON scalars, walks arrays and objects, drops undefined, and turns -0 into 0', () => {
    expect(
      encodeSerializedValue({
        text: 'ünïcødé 👩‍👩‍👧',
        count: 3.5,
        zero: -0,
        flag: false,
        nothing: null,
        missing: undefined,
        list: [1, undefined, [guardrail('No DELETE')], { nested: policy({ rule: 'r' }) }],
      }),
    ).toEqual({
      text: 'ünïcødé 👩‍👩‍👧',
      count: 3.5,
      zero: 0,
      flag: false,
      nothing: null,
      list: [
        1,
        [{ type: 'guardrail', rule: 'No DELETE' }],
        { nested: { type: 'policy', rule: 'r' } },
      ],
    });
    expect(Object.is(encodeSerializedValue(-0), 0)).toBe(true);
    expect(encodeSerializedValue(undefined)).toBeUndefined();
    expect(encodeSerializedValue('text')).toBe('text');
  });

  it('keeps an own __proto__ key as data instead of changing the prototype', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as FragmentData;
    const encoded = encodeSerializedValue(value) as Record<string, unknown>;
    expect(Object.hasOwn(encoded, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(encoded)).toBe(Object.prototype);
    expect(JSON.stringify(encoded)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('checks objects already in serialized form, and keeps objects whose type is not registered', () => {
    expect(encodeSerializedValue({ item: { type: 'hint', text: 'ok' } })).toEqual({
      item: { type: 'hint', text: 'ok' },
    });
    expect(issuesOf(() => encodeSerializedValue({ item: { type: 'hint', text: '' } }))).toEqual([
      { path: 'item.text', message: 'expected a non-empty string' },
    ]);
    expect(encodeSerializedValue({ type: 'bar chart', bars: 3 })).toEqual({
      type: 'bar chart',
      bars: 3,
    });
  });

  it('refuses values JSON cannot hold, naming the path', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ a: Number.NaN }, 'a', /NaN cannot be stored as JSON/],
      [[Number.POSITIVE_INFINITY], '[0]', /Infinity cannot be stored as JSON/],
      [{ big: 10n }, 'big', /a bigint cannot be stored as JSON/],
      [{ run: () => 1 }, 'run', /a function cannot be stored as JSON/],
      [{ id: Symbol('x') }, 'id', /a symbol cannot be stored as JSON/],
      [{ at: new Date(0) }, 'at', /an instance of Date cannot be stored as JSON/],
      [{ 'odd key': new Map() }, '["odd key"]', /an instance of Map cannot be stored as JSON/],
    ];
    for (const [value, path, message] of cases) {
      const issues = issuesOf(() => encodeSerializedValue(value as FragmentData));
      expect(issues).toEqual([{ path, message: expect.stringMatching(message) }]);
    }
  });

  it('refuses cycles and message fragments', () => {
    const list: FragmentData[] = ['a'];
    list.push(list);
    expect(issuesOf(() => encodeSerializedValue({ list }))).toEqual([
      { path: 'list[1]', message: expect.stringMatching(/cycle/) },
    ]);
    expect(
      issuesOf(() => encodeSerializedValue([hint('ok'), lastAssistantMessage('Done')])),
    ).toEqual([
      { path: '[1]', message: expect.stringMatching(/"assistant" is a message fragment/) },
    ]);
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { a: 1 };
    expect(encodeSerializedValue([shared, shared])).toEqual([{ a: 1 }, { a: 1 }]);
  });
});

describe('decodeSerializedValue', () => {
  it('is the inverse of encodeSerializedValue', () => {
    const value: FragmentData = {
      policies: ['Prefer low-risk actions first', hint('Validate first')],
      nested: [{ deeper: policy({ rule: 'r', policies: [policy({ rule: 's' })] }) }],
      count: 2,
      none: null,
    };
    const decoded = decodeSerializedValue(JSON.parse(JSON.stringify(encodeSerializedValue(value))));
    expect(decoded).toEqual(value);
    const wrap = (data: FragmentData): ContextFragment => ({ name: 'root', data });
    expect(walkFragments([wrap(decoded)])).toEqual(walkFragments([wrap(value)]));
  });

  it('leaves objects with an unregistered type as plain objects', () => {
    expect(decodeSerializedValue({ type: 'bar chart', bars: [1, 2] })).toEqual({
      type: 'bar chart',
      bars: [1, 2],
    });
  });

  it('refuses malformed serialized fragments with their full path', () => {
    expect(issuesOf(() => decodeSerializedValue({ rows: [{ type: 'term', name: 'x' }] }))).toEqual([
      { path: 'rows[0].definition', message: 'missing (expected string)' },
    ]);
  });

  it('refuses values that are not JSON', () => {
    expect(issuesOf(() => decodeSerializedValue({ a: Number.NaN }))).toEqual([
      { path: 'a', message: 'NaN is not a JSON value (only finite numbers)' },
    ]);
    expect(issuesOf(() => decodeSerializedValue([() => 1]))).toEqual([
      { path: '[0]', message: 'a function is not a JSON value' },
    ]);
    expect(issuesOf(() => decodeSerializedValue({ at: new Date(0) }))).toEqual([
      { path: 'at', message: 'an instance of Date is not a JSON value' },
    ]);
    expect(issuesOf(() => decodeSerializedValue([hint('x')]))).toEqual([
      { path: '[0]', message: 'a "hint" fragment (it is already hydrated) is not a JSON value' },
    ]);
  });
});
