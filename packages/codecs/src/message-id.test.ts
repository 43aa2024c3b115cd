import { describe, expect, it } from 'vitest';
import { assistantText, user } from './message-fragment';
import { newMessageId } from './message-id';

describe('newMessageId', () => {
  it('is 16 characters of [0-9A-Za-z], as the AI SDK generates', () => {
    for (let index = 0; index < 1_000; index += 1)
      expect(newMessageId()).toMatch(/^[0-9A-Za-z]{16}$/);
  });

  it('sorts by the time it was made, in code-unit order (as SQL stores compare text)', () => {
    const times = [0, 1, 61, 62, 3_843, 1_700_000_000_000, 1_700_000_000_001, 3_500_000_000_000];
    const ids = times.map((time) => newMessageId(time));
    expect([...ids].sort()).toEqual(ids);
    expect(ids.map((id) => id.slice(0, 7))).toEqual([
      '0000000',
      '0000001',
      '000000z',
      '0000010',
      '00000zz',
      'Tvcokgi',
      'Tvcokgj',
      'zcPDJXE',
    ]);
  });

  it('differs within one millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newMessageId(1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
  });

  it('is what the builders give a message without an id, later ones sorting after', () => {
    const first = user('a').codec.encode().id;
    const second = assistantText('b').codec.encode().id;
    expect(first).toMatch(/^[0-9A-Za-z]{16}$/);
    expect(second.slice(0, 7) >= first.slice(0, 7)).toBe(true);
    expect(user('c', { id: 'given' }).codec.encode().id).toBe('given');
  });
});
