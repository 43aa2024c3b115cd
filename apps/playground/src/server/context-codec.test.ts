import { fragment, hint, policy, principle, role, ValidationError } from '@ctxgraph/fragments-core';
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
    expect(attempt([deep])).toContain('nested more than 32 levels');
  });

  it('refuses to encode a group holding something other than text or fragments', () => {
    expect(() => encodeContext([{ name: 'numbers', data: [1, 2] }])).toThrow(/fragments\[0\]/);
  });
});
