// DELETE /api/chat/:id: the user's own chat goes with everything it holds; another user's chat,
// an unknown one, a malformed id and a chat with a reply still being written are refused, and
// each refusal leaves the store as it was.

import { MAX_IDENTIFIER_LENGTH } from '@ctxgraph/fragments-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeChat, startTestServer, type TestServer } from '../__fixtures__/chat-test-kit';

let counter = 0;
function newChatId(): string {
  counter += 1;
  return `delete-${Date.now().toString(36)}-${counter}`;
}

describe.each(['sqlite', 'postgres'] as const)('DELETE /api/chat/:id on %s', (storeKind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: storeKind });
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function deleteChat(chatId: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${server.url}/api/chat/${encodeURIComponent(chatId)}`, {
      method: 'DELETE',
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  }

  it("deletes the user's chat with its messages; the id is free again", async () => {
    const chatId = newChatId();
    const chat = new NodeChat(server.url, chatId);
    await chat.sendMessage({ text: 'first question' });
    expect(chat.currentError).toBeUndefined();
    expect((await server.store.getGraph(chatId)).nodes).toHaveLength(2);

    expect(await deleteChat(chatId)).toEqual({ status: 204, body: null });
    expect(await server.store.getChat(chatId)).toBeNull();
    expect((await server.messages(chatId)).status).toBe(404);
    // A second delete finds nothing.
    expect((await deleteChat(chatId)).status).toBe(404);

    // The same id starts a new, empty chat.
    const again = new NodeChat(server.url, chatId);
    await again.sendMessage({ text: 'a new start' });
    expect(again.messages).toHaveLength(2);
    expect((await server.store.getGraph(chatId)).nodes).toHaveLength(2);
  });

  it("answers another user's chat as an unknown one, and leaves it", async () => {
    const chatId = newChatId();
    await server.store.openChat({ chatId, userId: 'someone-else', title: 'theirs' });
    const answer = await deleteChat(chatId);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: `No chat '${chatId}' for this user.` });
    expect(await server.store.getChat(chatId)).toMatchObject({ userId: 'someone-else' });
    // An id no chat has gets the same answer.
    expect(await deleteChat('never-created')).toEqual({
      status: 404,
      body: {
        error: "No chat 'never-created' for this user.",
      },
    });
  });

  it('refuses a malformed id with 400 before reading the store', async () => {
    const before = (await server.store.listChats({ userId: 'chat-app-user', limit: 100 })).items
      .length;
    const tooLong = 'x'.repeat(MAX_IDENTIFIER_LENGTH + 1);
    const answer = await deleteChat(tooLong);
    expect(answer.status).toBe(400);
    // 200 characters but 600 bytes of UTF-8: over the byte limit.
    expect((await deleteChat('€'.repeat(200))).status).toBe(400);
    expect((answer.body as { error: string }).error).toMatch(
      /DELETE \/api\/chat\/:id: id expected at most/,
    );
    // NUL is no character an id may hold.
    expect((await deleteChat('a\u0000b')).status).toBe(400);
    expect(
      (await server.store.listChats({ userId: 'chat-app-user', limit: 100 })).items,
    ).toHaveLength(before);
  });

  it('refuses a chat whose reply is being written (409), and deletes it once the reply ended', async () => {
    const chatId = newChatId();
    await server.store.openChat({ chatId, userId: 'chat-app-user' });
    const startReply = server.store.startReply?.bind(server.store);
    const endReply = server.store.endReply?.bind(server.store);
    if (startReply === undefined || endReply === undefined) throw new Error('no live replies');
    await startReply({
      chatId,
      replyId: 'r1',
      branch: 'main',
      afterNodeId: null,
      owner: 'writer',
      leaseMs: 60_000,
    });

    const refused = await deleteChat(chatId);
    expect(refused.status).toBe(409);
    expect((refused.body as { error: string }).error).toContain('stop it');
    expect(await server.store.getChat(chatId)).not.toBeNull();

    await endReply({ chatId, replyId: 'r1', owner: 'writer' });
    expect((await deleteChat(chatId)).status).toBe(204);
    expect(await server.store.getChat(chatId)).toBeNull();
  });
});
