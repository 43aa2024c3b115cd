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

describe('IndexHints for a user who searches', () => {
  it('takes the chats that user opens afterwards for searched, and no one else’s', () => {
    const hints = new IndexHints();
    hints.opened('before', 'ada');
    expect(hints.searched('before')).toBe(false);
    expect(hints.userSearches('ada')).toBe(false);
    hints.userSearched('ada');
    expect(hints.userSearches('ada')).toBe(true);
    hints.opened('new-chat', 'ada');
    hints.opened('other', 'bob');
    expect(hints.searched('new-chat')).toBe(true);
    expect(hints.searched('other')).toBe(false);
  });

  it('learns from a save whether a chat has index marks, and forgets one that has none', () => {
    const hints = new IndexHints();
    hints.marksFound('elsewhere', true);
    expect(hints.searched('elsewhere')).toBe(true);
    hints.wrote('elsewhere');
    expect(hints.behind('elsewhere')).toBe(true);
    hints.marksFound('elsewhere', false);
    expect(hints.searched('elsewhere')).toBe(false);
    expect(hints.behind('elsewhere')).toBe(false);
  });

  it('starts over past 4,096 users', () => {
    const hints = new IndexHints();
    for (let index = 0; index < 4096; index += 1) hints.userSearched(`user-${index}`);
    hints.userSearched('one-more');
    expect(hints.userSearches('user-0')).toBe(false);
    expect(hints.userSearches('one-more')).toBe(true);
  });
});
