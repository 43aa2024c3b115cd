import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/errors';
import { chatCursor, prepareListChats, prepareSaveContext } from './chat-input';

describe('prepareSaveContext', () => {
  it('serializes the lane and checks the revision', () => {
    expect(prepareSaveContext({ chatId: 'c', fragments: [{ type: 'hint', text: 'x' }] })).toEqual({
      chatId: 'c',
      fragmentsJson: '[{"type":"hint","text":"x"}]',
      expectedRevision: undefined,
    });
    expect(
      prepareSaveContext({ chatId: 'c', fragments: [], expectedRevision: 0 }).fragmentsJson,
    ).toBe('[]');
    expect(() =>
      prepareSaveContext({ chatId: 'c', fragments: ['x'.repeat(20)] }, { maxJsonBytes: 10 }),
    ).toThrow('saveContext(input): fragments is 24 bytes, more than the store accepts (10)');
  });

  it.each([
    [{ chatId: 'c', fragments: {} }, 'fragments must be an array of JSON values'],
    [
      { chatId: 'c', fragments: [], expectedRevision: -1 },
      'expectedRevision must be a non-negative integer',
    ],
    [
      { chatId: 'c', fragments: [], expectedRevision: 1.5 },
      'expectedRevision must be a non-negative integer',
    ],
    [
      { chatId: 'c', fragments: [{ text: 'a\u0000' }] },
      'fragments[0].text: string contains the NUL character',
    ],
    [{ chatId: '', fragments: [] }, 'chatId expected a non-empty string'],
    [null, 'input must be an object'],
  ])('refuses %j', (input, message) => {
    expect(() => prepareSaveContext(input as never)).toThrow(message);
  });
});

describe('prepareListChats and chatCursor', () => {
  it('defaults and bounds the page size', () => {
    expect(prepareListChats({ userId: 'u' })).toEqual({ userId: 'u', limit: 20, after: null });
    expect(() => prepareListChats({ userId: 'u', limit: 0 })).toThrow(
      'limit must be an integer from 1 to 100',
    );
    expect(() => prepareListChats({ userId: 'u', limit: 101 })).toThrow(ValidationError);
    expect(() => prepareListChats({ userId: 'u', limit: 1.5 })).toThrow(ValidationError);
  });

  it('round-trips a cursor, ids with colons included', () => {
    const cursor = chatCursor({ updatedAt: 1700000000000, id: 'chat:with:colons' });
    expect(prepareListChats({ userId: 'u', cursor }).after).toEqual({
      updatedAt: 1700000000000,
      id: 'chat:with:colons',
    });
  });

  it.each(['', 'garbage', ':id', '12:', 'NaN:x'])('refuses the malformed cursor %j', (cursor) => {
    expect(() => prepareListChats({ userId: 'u', cursor })).toThrow(
      'is not a cursor this store returned',
    );
  });
});
