import { ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { ChainCache, type ChainEntry } from './chain-cache';

function entry(id: string, role = 'user', valid = true): ChainEntry {
  const message = { id, role, parts: [{ type: 'text', text: id }] } as UIMessage;
  return {
    node: { chatId: 'c', id, parentId: null, sequence: 0, message, createdAt: 0, updatedAt: 0 },
    message: valid ? message : null,
    error: valid ? null : new ValidationError(`bad ${id}`),
  };
}

describe('ChainCache', () => {
  it('keeps entries, valid messages and positions in step through append, replace and truncate', () => {
    const cache = new ChainCache();
    cache.reset([entry('a'), entry('b', 'assistant'), entry('x', 'user', false), entry('c')]);
    expect(cache.messages.map((message) => message.id)).toEqual(['a', 'b', 'c']);
    expect(cache.invalidCount).toBe(1);
    expect(cache.messagePosition('c')).toBe(2);
    expect(cache.lastIdWithRole('assistant')).toBe('b');

    cache.append([entry('d', 'assistant')]);
    expect(cache.lastId).toBe('d');
    expect(cache.replace(entry('b', 'assistant'))).toBe(true);
    expect(cache.replace(entry('missing'))).toBe(false);

    expect(cache.truncateAfter('b')).toBe(true);
    expect(cache.entries.map((item) => item.node.id)).toEqual(['a', 'b']);
    expect(cache.messages.map((message) => message.id)).toEqual(['a', 'b']);
    expect(cache.invalidCount).toBe(0);
    expect(cache.has('c')).toBe(false);
    expect(cache.messagePosition('d')).toBeUndefined();
    expect(cache.truncateAfter('nope')).toBe(false);

    cache.append([entry('e')]);
    expect(cache.messagePosition('e')).toBe(2);
  });

  it('rebuilds the message list when a replacement changes validity', () => {
    const cache = new ChainCache();
    cache.reset([entry('a'), entry('b')]);
    cache.replace(entry('a', 'user', false));
    expect(cache.messages.map((message) => message.id)).toEqual(['b']);
    expect(cache.messagePosition('b')).toBe(0);
    expect(cache.invalidCount).toBe(1);
  });
});
