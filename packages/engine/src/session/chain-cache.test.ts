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

  it('finds nodes by message id, versions included, through appends, replacements and cuts', () => {
    // A version's node id differs from the id of the message it holds.
    const version = (nodeId: string, messageId: string): ChainEntry => {
      const base = entry(messageId);
      return { ...base, node: { ...base.node, id: nodeId } };
    };
    const cache = new ChainCache();
    cache.reset([entry('a'), version('b~2', 'b'), entry('c')]);
    // Looked up only after the appends: the index is built on the first lookup.
    cache.append([version('q~3', 'q'), entry('d')]);
    expect(cache.nodeIdOf('a')).toBe('a');
    expect(cache.nodeIdOf('b')).toBe('b~2');
    expect(cache.nodeIdOf('b~2')).toBeUndefined();
    expect(cache.nodeIdOf('q')).toBe('q~3');
    expect(cache.nodeIdOf('d')).toBe('d');
    expect(cache.has('q~3')).toBe(true);
    expect(cache.node('b~2')?.message.id).toBe('b');
    expect(cache.messagePosition('q~3')).toBe(3);
    // Indexed now; later appends join the index on the next lookup.
    cache.append([version('e~2', 'e')]);
    expect(cache.nodeIdOf('e')).toBe('e~2');
    expect(cache.position('e~2')).toBe(5);

    // A replacement that changes the message a node holds moves its lookup.
    expect(cache.replace(version('c', 'x'))).toBe(true);
    expect(cache.nodeIdOf('c')).toBeUndefined();
    expect(cache.nodeIdOf('x')).toBe('c');
    expect(cache.replace(entry('c'))).toBe(true);
    expect(cache.nodeIdOf('x')).toBeUndefined();
    expect(cache.nodeIdOf('c')).toBe('c');

    // A cut forgets the versions after it.
    expect(cache.truncateAfter('c')).toBe(true);
    expect(cache.nodeIdOf('q')).toBeUndefined();
    expect(cache.nodeIdOf('e')).toBeUndefined();
    expect(cache.has('d')).toBe(false);
    expect(cache.nodeIdOf('b')).toBe('b~2');
    cache.append([version('q~4', 'q')]);
    expect(cache.nodeIdOf('q')).toBe('q~4');
    expect(cache.messages.map((message) => message.id)).toEqual(['a', 'b', 'c', 'q']);
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
