// chatErrorResponse over every typed error the cycle's reads can throw: what a route answers when
// the ids in its path or query are malformed (400) or unknown (404), always JSON `{ error }`.
import { user as userMessage } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { OwnershipError, StoreError } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { chatErrorResponse, createChatCycle } from './chat-cycle';

const renderer = new XmlRenderer();

async function answerOf(read: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  const error = await read.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  const response = chatErrorResponse(error);
  expect(response, String(error)).toBeDefined();
  expect(response?.headers.get('content-type')).toContain('application/json');
  return { status: response?.status ?? 0, body: await response?.json() };
}

describe('chatErrorResponse', () => {
  const long = 'x'.repeat(600);
  const wide = '€'.repeat(200);
  const withNul = 'a\u0000b';

  async function storeWithChat(): Promise<{ store: InMemoryContextStore; nodeId: string }> {
    const store = new InMemoryContextStore();
    const engine = new ContextEngine({ store, chatId: 'c1', userId: 'u', renderer });
    engine.set(userMessage('hello', { id: 'q1' }));
    await engine.save();
    const [node] = await engine.findMessage('q1');
    return { store, nodeId: node as string };
  }

  it('answers a malformed id in a read with a 400 and an unknown one with a 404', async () => {
    const { store } = await storeWithChat();
    const cycle = createChatCycle({ store, engine: { renderer } });
    const user = { userId: 'u' };
    for (const id of [long, wide, withNul]) {
      for (const read of [
        cycle.messages(id, user),
        cycle.messages('c1', { ...user, leaf: id }),
        cycle.versions(id, 'q1', user),
        cycle.versions('c1', id, user),
        cycle.openVersion('c1', id, user),
        cycle.resume(id, user),
      ]) {
        const answer = await answerOf(read);
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ error: expect.any(String) });
      }
    }
    for (const read of [
      cycle.messages('unknown', user),
      cycle.messages('c1', { ...user, leaf: 'unknown' }),
      cycle.versions('c1', 'unknown', user),
      cycle.openVersion('c1', 'no-such-node', user),
      cycle.openVersion('unknown', 'no-such-node', user),
    ]) {
      const answer = await answerOf(read);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ error: expect.any(String) });
    }
  });

  it("answers another user's chat as unknown, without saying whose it is", async () => {
    const answer = await answerOf(Promise.reject(new OwnershipError('c1', 'intruder')));
    expect(answer).toEqual({ status: 404, body: { error: "No chat 'c1' for this user." } });
  });

  it('leaves anything else to the server (a 500)', () => {
    expect(chatErrorResponse(new StoreError('the database is down'))).toBeUndefined();
    expect(chatErrorResponse(new TypeError('a bug'))).toBeUndefined();
    expect(chatErrorResponse('a string')).toBeUndefined();
  });
});
