import { fragment, hint, policy, principle, role, ValidationError } from '@ctxgraph/fragments-core';
import { MAX_SERIALIZED_DEPTH, SerializationError } from '@ctxgraph/serialization';
import { describe, expect, it } from 'vitest';
import { decodeContext, encodeContext, MAX_CONTEXT_FRAGMENTS } from './context-codec';

describe('context codec', () => {
  it('round-trips built-in fragments and named groups nested in each other', () => {
    const fragments = [
      role('You are helpful.'),
      fragment(
        'database',
        hint('PostgreSQL'),
        fragment('constraints', hint('No DELETE'), 'plain text'),
      ),
      principle({
        title: 'Order',
        description: 'Prerequisites first',
        policies: [policy({ rule: 'Validate first' })],
      }),
    ];
    const encoded = encodeContext(fragments);
    expect(encoded[1]).toEqual({
      type: 'fragment',
      name: 'database',
      children: [
        { type: 'hint', text: 'PostgreSQL' },
        {
          type: 'fragment',
          name: 'constraints',
          children: [{ type: 'hint', text: 'No DELETE' }, 'plain text'],
        },
      ],
    });
    expect(decodeContext(encoded)).toEqual(fragments);
    expect(encodeContext(decodeContext(encoded))).toEqual(encoded);
  });

  it('keeps a group with one text child a group after a round trip', () => {
    const encoded = [{ type: 'fragment', name: 'note', children: ['only child'] }];
    expect(encodeContext(decodeContext(encoded))).toEqual(encoded);
  });

  it('names the item and field at fault', () => {
    const attempt = (value: unknown) => {
      try {
        decodeContext(value);
      } catch (error) {
        expect(ValidationError.isInstance(error)).toBe(true);
        return (error as ValidationError).message;
      }
      throw new Error('expected a ValidationError');
    };
    expect(attempt('nope')).toContain('expected an array');
    expect(attempt([null])).toContain('fragments[0]');
    expect(attempt([{ type: 'fragment', name: '', children: [] }])).toContain('fragments[0].name');
    expect(attempt([{ type: 'fragment', name: 'g', children: 'x' }])).toContain(
      'fragments[0].children',
    );
    expect(attempt([{ type: 'fragment', name: 'g', children: [7] }])).toContain(
      'fragments[0].children[0]',
    );
    expect(
      attempt(
        Array.from({ length: MAX_CONTEXT_FRAGMENTS + 1 }, () => ({ type: 'hint', text: 'x' })),
      ),
    ).toContain(`at most ${MAX_CONTEXT_FRAGMENTS}`);
    let deep: unknown = { type: 'hint', text: 'bottom' };
    for (let level = 0; level < 40; level += 1)
      deep = { type: 'fragment', name: `level${level}`, children: [deep] };
    // The depth limit is serialization's (MAX_SERIALIZED_DEPTH): a group takes two levels.
    expect(attempt([deep])).toMatch(
      new RegExp(
        `^fragments\\[0\\](\\.children\\[0\\]){32}: nested deeper than ${MAX_SERIALIZED_DEPTH} levels`,
      ),
    );
  });

  it('refuses to encode a group holding something other than text or fragments', () => {
    expect(() => encodeContext([{ name: 'numbers', data: [1, 2] }])).toThrow(/fragments\[0\]/);
  });

  it('still loads group JSON stored by the earlier playground codec', () => {
    // Written by the playground's own group encoding before groups moved to serialization.
    const stored = JSON.parse(
      '[{"type":"role","text":"You are helpful."},{"type":"fragment","name":"database","children":[{"type":"hint","text":"PostgreSQL"},{"type":"fragment","name":"note","children":["only child"]},{"type":"fragment","name":"empty","children":[]}]}]',
    ) as unknown;
    const fragments = decodeContext(stored);
    expect(fragments).toEqual([
      role('You are helpful.'),
      fragment(
        'database',
        hint('PostgreSQL'),
        { name: 'note', data: ['only child'] },
        fragment('empty'),
      ),
    ]);
    expect(encodeContext(fragments)).toEqual(stored);
  });

  it('refuses a group past the depth limit with a SerializationError naming the path', () => {
    let deep: unknown = 'leaf';
    for (let level = 0; level < 40; level += 1)
      deep = { type: 'fragment', name: `level${level}`, children: [deep] };
    try {
      decodeContext([{ type: 'hint', text: 'x' }, deep]);
      throw new Error('expected a SerializationError');
    } catch (error) {
      expect(SerializationError.isInstance(error)).toBe(true);
      expect((error as SerializationError).issues[0]?.path).toMatch(
        /^fragments\[1\]\.children\[0\]/,
      );
    }
  });
});
