import { describe, expect, it } from 'vitest';
import { hint } from './builders';
import { isFragment, isFragmentObject, isLazyFragment, isMessageFragment } from './guards';
import { LAZY_ID, lastAssistantMessage } from './lazy';

describe('type guards', () => {
  it('isFragment needs a non-array object with a string name and a data key', () => {
    expect(isFragment(hint('x'))).toBe(true);
    expect(isFragment({ name: 'n', data: undefined })).toBe(true);
    expect(isFragment({ name: 'n' })).toBe(false);
    expect(isFragment({ name: 3, data: 'x' })).toBe(false);
    expect(isFragment(Object.assign(['x'], { name: 'n', data: 1 }))).toBe(false);
    for (const value of [null, undefined, 'name', 5, true, []])
      expect(isFragment(value)).toBe(false);
  });

  it('isFragmentObject accepts plain objects only', () => {
    expect(isFragmentObject({ a: 1 })).toBe(true);
    expect(isFragmentObject(Object.create(null))).toBe(true);
    expect(isFragmentObject(hint('x'))).toBe(false);
    expect(isFragmentObject([])).toBe(false);
    expect(isFragmentObject(new Date())).toBe(false);
    expect(isFragmentObject(new Map())).toBe(false);
    expect(isFragmentObject(null)).toBe(false);
    expect(isFragmentObject('x')).toBe(false);
  });

  it('isMessageFragment checks type: message', () => {
    expect(isMessageFragment({ name: 'user', data: 'x', type: 'message' })).toBe(true);
    expect(isMessageFragment({ name: 'user', data: 'x', type: 'fragment' })).toBe(false);
    expect(isMessageFragment(hint('x'))).toBe(false);
    expect(isMessageFragment('message')).toBe(false);
  });

  it('isLazyFragment finds the lazy marker', () => {
    expect(isLazyFragment(lastAssistantMessage('fixed'))).toBe(true);
    expect(isLazyFragment({ name: 'assistant', data: 'x', type: 'message' })).toBe(false);
    expect(isLazyFragment({ name: 'assistant', data: 'x', [LAZY_ID]: 'not an object' })).toBe(
      false,
    );
    expect(isLazyFragment(null)).toBe(false);
  });
});

describe('lastAssistantMessage()', () => {
  it('is a persisted assistant message fragment that the engine resolves later', () => {
    const lazy = lastAssistantMessage('Corrected answer');
    expect(lazy).toMatchObject({
      name: 'assistant',
      type: 'message',
      persist: true,
      data: 'Corrected answer',
    });
    expect(lazy[LAZY_ID]).toEqual({ type: 'last-assistant', content: 'Corrected answer' });
    expect(lazy.id).toBeUndefined();
    expect(lazy.codec).toBeUndefined();
  });

  it('uses a registered symbol so two copies of the package agree', () => {
    expect(LAZY_ID).toBe(Symbol.for('ctxgraph.lazy-id'));
  });

  it('refuses non-string content', () => {
    expect(() => lastAssistantMessage(5 as unknown as string)).toThrow(
      'lastAssistantMessage(content): content must be a string, received number.',
    );
  });
});
