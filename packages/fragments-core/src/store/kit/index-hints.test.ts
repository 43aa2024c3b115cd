import { describe, expect, it } from 'vitest';
import { IndexHints } from './index-hints';

describe('IndexHints', () => {
  it('keeps nothing for a chat that was never searched', () => {
    const hints = new IndexHints();
    hints.wrote('quiet');
    expect(hints.searched('quiet')).toBe(false);
    expect(hints.behind('quiet')).toBe(false);
  });

  it('is behind after a write to a searched chat, and current again after its search', () => {
    const hints = new IndexHints();
    hints.current('c');
    expect(hints.searched('c')).toBe(true);
    expect(hints.behind('c')).toBe(false);
    hints.wrote('c');
    expect(hints.behind('c')).toBe(true);
    hints.current('c');
    expect(hints.behind('c')).toBe(false);
  });

  it('starts over past 4,096 searched chats instead of growing without end', () => {
    const hints = new IndexHints();
    for (let index = 0; index < 4096; index += 1) hints.current(`chat-${index}`);
    hints.wrote('chat-0');
    expect(hints.behind('chat-0')).toBe(true);
    hints.current('one-more');
    expect(hints.searched('chat-0')).toBe(false);
    expect(hints.behind('chat-0')).toBe(false);
    expect(hints.searched('one-more')).toBe(true);
  });
});
