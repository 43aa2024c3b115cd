import { describe, expect, it } from 'vitest';
import { writtenNode } from './written-node';

describe('writtenNode', () => {
  const json = JSON.stringify({ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] });

  it('reads as a plain record: a spread and a deep equality see the message', () => {
    const node = writtenNode('c', 'm1', null, 1, json, null, 10, 20);
    const expected = {
      chatId: 'c',
      id: 'm1',
      parentId: null,
      sequence: 1,
      message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] },
      engineRecord: null,
      createdAt: 10,
      updatedAt: 20,
    };
    expect(node).toEqual(expected);
    expect({ ...node }).toEqual(expected);
    expect(JSON.parse(JSON.stringify(node))).toEqual(expected);
  });

  it('parses the message once, on first read, into an object of its own', () => {
    const node = writtenNode('c', 'm1', null, 1, json, { usage: { calls: 1 } }, 10, 20);
    expect(node.message).toBe(node.message);
    expect(writtenNode('c', 'm1', null, 1, json, null, 10, 20).message).not.toBe(node.message);
    expect(node.engineRecord).toEqual({ usage: { calls: 1 } });
  });
});
