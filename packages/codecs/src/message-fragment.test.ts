import { isFragment, isMessageFragment, ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyPartKind } from './__fixtures__/ui-messages';
import {
  assistant,
  assistantText,
  type BuiltMessage,
  builtMessage,
  type MessageFragment,
  message,
  user,
} from './message-fragment';
import { settledMessage } from './plain-messages';
import { validateMessages } from './validate-messages';

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

describe('builtMessage and settledMessage', () => {
  const texts = [
    user('Explain recursion', { id: 'q1' }),
    user(''),
    assistantText('4', { id: 'a1', metadata: { usage: { inputTokens: 3 }, tags: ['x'] } }),
    assistant('done', { metadata: null }),
    user('emoji 🙂 and CJK 漢字', { id: '漢字-id' }),
  ];

  it("gives a text builder's message frozen, equal to what the AI SDK's validation returns, key for key", async () => {
    for (const fragment of texts) {
      const built = builtMessage(fragment);
      expect(built?.settled).toBe(true);
      const message = built?.message as UIMessage;
      expect(Object.isFrozen(message)).toBe(true);
      expect(Object.isFrozen(message.parts)).toBe(true);
      expect(Object.isFrozen(message.parts[0])).toBe(true);
      if (message.metadata !== null && message.metadata !== undefined)
        expect(Object.isFrozen(message.metadata)).toBe(true);
      const [validated] = await validateMessages([fragment.codec.encode()]);
      expect(JSON.stringify(message)).toBe(JSON.stringify(validated));
      expect(Object.keys(message)).toEqual(Object.keys(validated as object));
      expect(settledMessage(built as BuiltMessage)).toBe(message);
    }
  });

  it('leaves a message to validation when a metadataSchema must see it, or when it was not built from text', () => {
    const built = builtMessage(texts[2] as MessageFragment) as BuiltMessage;
    expect(settledMessage(built, { metadataSchema: z.object({}) })).toBeUndefined();
    const whole = builtMessage(message(everyPartKind)) as BuiltMessage;
    expect(whole.settled).toBe(false);
    expect(Object.isFrozen(whole.message)).toBe(true);
    expect(settledMessage(whole)).toBeUndefined();
  });

  it('is gone once encode is replaced, and never given for a fragment made elsewhere', () => {
    const fragment = user('fine', { id: 'q1' });
    fragment.codec.encode = () => ({ id: 'q1', role: 'user', parts: [] }) as unknown as UIMessage;
    expect(builtMessage(fragment)).toBeUndefined();
    expect(
      builtMessage({ name: 'user', data: '', codec: { encode: () => ({}), decode: () => ({}) } }),
    ).toBeUndefined();
    expect(builtMessage({ name: 'note', data: 'x' })).toBeUndefined();
  });

  it('a copy from encode() still belongs to the caller: it can be changed, the fragment cannot', () => {
    const fragment = user('original', { id: 'q1', metadata: { tags: ['a'] } });
    const copy = fragment.codec.encode();
    (copy.parts[0] as { text: string }).text = 'changed';
    (copy.metadata as { tags: string[] }).tags.push('b');
    expect(builtMessage(fragment)?.message).toEqual({
      id: 'q1',
      role: 'user',
      metadata: { tags: ['a'] },
      parts: [{ type: 'text', text: 'original' }],
    });
  });

  it('text that a store would refuse still gets the full check and its clear error', () => {
    expect(() => user('cut \uD83D', { id: 'q1' })).toThrow(
      'content: string contains a lone UTF-16 surrogate',
    );
    expect(() => user('nul \u0000', { id: 'q1' })).toThrow('NUL');
    expect(() => user('fine', { id: '' })).toThrow('options.id');
    expect(() => user('fine', { id: 'x'.repeat(513) })).toThrow('options.id');
  });
});
