import { validateMessages } from '@ctxgraph/codecs';
import { type MessageNodeRecord, ValidationError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MessageValidator } from './message-validator';

function node(id: string, message: unknown, engineRecord: unknown = null): MessageNodeRecord {
  return {
    chatId: 'c',
    id,
    parentId: null,
    sequence: 1,
    message: message as MessageNodeRecord['message'],
    engineRecord: engineRecord as MessageNodeRecord['engineRecord'],
    createdAt: 0,
    updatedAt: 0,
  };
}

/** Every object reachable from `value` that is not frozen, by path. */
function unfrozen(value: unknown, path = '$'): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const own = Object.isFrozen(value) ? [] : [path];
  return own.concat(
    ...Object.entries(value).map(([key, entry]) => unfrozen(entry, `${path}.${key}`)),
  );
}

const stored = [
  // Plain text messages (the hand parse), with nested metadata and a part state.
  {
    id: 'q',
    role: 'user',
    metadata: { sentAt: 1, tags: ['a', { deep: [1, 2] }] },
    parts: [{ type: 'text', text: 'question' }],
  },
  {
    id: 'r',
    role: 'assistant',
    parts: [
      { type: 'step-start' },
      { type: 'reasoning', id: 'think-1', text: 'thinking', state: 'done' },
      { type: 'text', text: 'answer', state: 'done' },
    ],
  },
  // A tool call: the AI SDK validates it.
  {
    id: 't',
    role: 'assistant',
    parts: [
      {
        type: 'tool-lookup',
        toolCallId: 'call-1',
        state: 'output-available',
        input: { query: 'x', nested: { list: [1] } },
        output: { rows: [{ id: 1 }] },
      },
    ],
  },
];

describe('MessageValidator.entries', () => {
  it('settles stored messages as the AI SDK parses them, deeply frozen, by either path', async () => {
    const validator = new MessageValidator({});
    const nodes = stored.map((message) => node(message.id, structuredClone(message)));
    const entries = await validator.entries(nodes);
    const expected = await validateMessages(structuredClone(stored));
    expect(entries.map((entry) => entry.message)).toStrictEqual(expected);
    for (const entry of entries) {
      expect(entry.error).toBeNull();
      expect(entry.node).toBe(nodes[entries.indexOf(entry)]);
      expect(unfrozen(entry.message)).toEqual([]);
    }
  });

  it('leaves out keys holding undefined, as a store round trip would', async () => {
    const validator = new MessageValidator({});
    const [entry] = await validator.entries([
      node('q', {
        id: 'q',
        role: 'user',
        metadata: { kept: 1, gone: undefined },
        parts: [{ type: 'text', text: 'q', state: undefined }],
      }),
    ]);
    expect(JSON.stringify(entry?.message)).toBe(
      JSON.stringify({
        id: 'q',
        role: 'user',
        metadata: { kept: 1 },
        parts: [{ type: 'text', text: 'q' }],
      }),
    );
    expect(Object.keys(entry?.message?.parts[0] ?? {})).toEqual(['type', 'text']);
    expect(unfrozen(entry?.message)).toEqual([]);
  });

  it('says which stored message no longer validates, keeps the others, and skips tombstones', async () => {
    const validator = new MessageValidator({
      metadataSchema: z.object({ sentAt: z.number() }).optional(),
    });
    const entries = await validator.entries([
      node('a', { id: 'a', role: 'user', parts: [{ type: 'text', text: 'fine' }] }),
      node('b', { id: 'b', role: 'user', metadata: { sentAt: 'never' }, parts: [] }),
      node(
        'c',
        { id: 'c', role: 'user', parts: [] },
        { dropped: { version: 1, compactionId: 'k' } },
      ),
      node('d', { id: 'd', role: 'assistant', parts: [{ type: 'text', text: 'also fine' }] }),
    ]);
    expect(entries.map((entry) => entry.message?.id ?? null)).toEqual(['a', null, null, 'd']);
    expect(ValidationError.isInstance(entries[1]?.error)).toBe(true);
    expect(entries[2]?.error).toBeNull();
    expect(unfrozen(entries[3]?.message)).toEqual([]);
  });

  it('does not freeze what a polluted prototype holds', async () => {
    const validator = new MessageValidator({});
    const prototype = Object.prototype as Record<string, unknown>;
    const shared = { changeable: true };
    prototype.pollutedForTest = shared;
    try {
      const [entry] = await validator.entries([
        node('q', { id: 'q', role: 'user', parts: [{ type: 'text', text: 'q' }] }),
      ]);
      expect(unfrozen(entry?.message)).toEqual([]);
      expect(Object.isFrozen(shared)).toBe(false);
    } finally {
      delete prototype.pollutedForTest;
    }
  });
});
