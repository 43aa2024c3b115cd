import { isFragment, isMessageFragment, ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { everyPartKind } from './__fixtures__/ui-messages';
import { assistant, assistantText, message, user } from './message-fragment';

describe('message builders', () => {
  it('user(text) is a persisted message fragment whose codec yields a UIMessage', () => {
    const fragment = user('Explain recursion', { id: 'q1' });
    expect(isFragment(fragment)).toBe(true);
    expect(isMessageFragment(fragment)).toBe(true);
    expect(fragment).toMatchObject({
      id: 'q1',
      name: 'user',
      type: 'message',
      persist: true,
      data: 'Explain recursion',
    });
    expect(fragment.codec.encode()).toEqual({
      id: 'q1',
      role: 'user',
      parts: [{ type: 'text', text: 'Explain recursion' }],
    });
    expect(fragment.codec.decode()).toMatchObject({
      id: 'q1',
      role: 'user',
      text: 'Explain recursion',
    });
  });

  it('generates distinct ids when none is given', () => {
    const ids = new Set(Array.from({ length: 100 }, () => user('hi').id));
    expect(ids.size).toBe(100);
    expect(assistantText('a').id).not.toBe(assistantText('a').id);
  });

  it('assistant() takes a UIMessage or a plain reply text', () => {
    expect(assistant('The answer is 4.').codec.encode()).toMatchObject({
      role: 'assistant',
      parts: [{ type: 'text', text: 'The answer is 4.' }],
    });
    const fragment = assistant(everyPartKind);
    expect(fragment.id).toBe('every-part');
    expect(fragment.name).toBe('assistant');
  });

  it('message() keeps any role and the id of the UIMessage', () => {
    const system: UIMessage = {
      id: 's1',
      role: 'system',
      parts: [{ type: 'text', text: 'Be brief.' }],
    };
    expect(message(system)).toMatchObject({ id: 's1', name: 'system', type: 'message' });
  });

  it('round-trips every part kind unchanged', () => {
    const encoded = message(everyPartKind).codec.encode();
    expect(encoded).toEqual(everyPartKind);
    expect(JSON.parse(JSON.stringify(encoded))).toEqual(everyPartKind);
    expect(assistant(everyPartKind).codec.decode().parts).toEqual(everyPartKind.parts);
  });

  it('is not changed by mutating the input or what encode() returned', () => {
    const source: UIMessage = {
      id: 'm',
      role: 'user',
      parts: [{ type: 'text', text: 'original' }],
    };
    const fragment = user(source);
    (source.parts[0] as { text: string }).text = 'mutated input';
    (fragment.codec.encode().parts[0] as { text: string }).text = 'mutated output';
    expect(fragment.codec.encode().parts[0]).toEqual({ type: 'text', text: 'original' });
  });

  it('decode() hands out copies: changing its metadata does not change the fragment', () => {
    const fragment = user('hi', { id: 'm', metadata: { tags: ['a'] } });
    (fragment.codec.decode().metadata as { tags: string[] }).tags.push('changed');
    expect(fragment.codec.encode().metadata).toEqual({ tags: ['a'] });
  });

  it('options.id overrides the id of a given UIMessage and metadata is kept', () => {
    const fragment = user(
      { id: 'x', role: 'user', parts: [] },
      { id: 'y', metadata: { source: 'web' } },
    );
    expect(fragment.codec.encode()).toEqual({
      id: 'y',
      role: 'user',
      parts: [],
      metadata: { source: 'web' },
    });
  });

  it.each([
    [
      'a missing role',
      () => message({ id: 'a', parts: [] } as unknown as UIMessage),
      /message\.role/,
    ],
    [
      'an unknown role',
      () => message({ id: 'a', role: 'robot', parts: [] } as unknown as UIMessage),
      /"robot"/,
    ],
    [
      'parts that are not an array',
      () => message({ id: 'a', role: 'user', parts: 'x' } as unknown as UIMessage),
      /message\.parts: expected an array/,
    ],
    [
      'a part without a type',
      () => message({ id: 'a', role: 'user', parts: [{ text: 'x' }] } as unknown as UIMessage),
      /message\.parts\[0\]\.type/,
    ],
    ['an empty id', () => message({ id: '', role: 'user', parts: [] }), /message\.id/],
    [
      'a role that does not match the builder',
      () => user({ id: 'a', role: 'assistant', parts: [] }),
      /content\.role: expected "user"/,
    ],
    [
      'a non-string assistantText',
      () => assistantText(42 as unknown as string),
      /assistantText\(text, options\): text must be a string/,
    ],
    ['an empty id option', () => user('hi', { id: '' }), /options\.id/],
    [
      'a non-object message',
      () => message('hello' as unknown as UIMessage),
      /expected a UIMessage object, received string/,
    ],
  ])('refuses %s with a ValidationError naming the field', (_label, build, pattern) => {
    expect(build).toThrow(ValidationError);
    expect(build).toThrow(pattern);
  });
});

describe('the private copy a message fragment keeps', () => {
  it('is what a JSON round trip gives: keys in order, undefined left out, -0 as 0, an own __proto__ key kept as data', () => {
    const metadata = JSON.parse('{"__proto__": {"polluted": true}, "b": 1}') as Record<
      string,
      unknown
    >;
    Object.assign(metadata, {
      gone: undefined,
      zero: -0,
      list: [1, 'two', { three: [3] }],
      nested: { z: 1, a: null },
    });
    const source: UIMessage = {
      id: 'c1',
      role: 'assistant',
      metadata,
      parts: [{ type: 'text', text: 'x', state: undefined }, { type: 'step-start' }],
    };
    const fragment = message(source);
    const encoded = fragment.codec.encode();
    const roundTrip = JSON.parse(JSON.stringify(source)) as UIMessage;
    expect(JSON.stringify(encoded)).toBe(JSON.stringify(roundTrip));
    expect(encoded).toStrictEqual(roundTrip);
    expect(Object.is((encoded.metadata as { zero: number }).zero, 0)).toBe(true);
    expect(Object.getPrototypeOf(encoded.metadata)).toBe(Object.prototype);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    // A copy: changing what the fragment handed out changes nothing it hands out next.
    (encoded.metadata as { b: number }).b = 2;
    expect((fragment.codec.encode().metadata as { b: number }).b).toBe(1);
    expect(Object.hasOwn(encoded.metadata as object, '__proto__')).toBe(true);
  });
});
