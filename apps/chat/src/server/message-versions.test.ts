// Editing one message many times and from many tabs at once (issue #34), over HTTP with the AI
// SDK's own client, on the app's SQLite file and on PostgreSQL: every edit is stored as a
// version of its own.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeChat, startTestServer, type TestServer, textOf } from '../__fixtures__/chat-test-kit';
import type { ChatUIMessage } from './tools';

/** The timeout of a test that makes a hundred requests or more: room for a busy machine. */
const MANY_REQUESTS = 120_000;

async function versionsOf(
  server: TestServer,
  chatId: string,
  messageId: string,
): Promise<{ nodeId: string; message: ChatUIMessage }[]> {
  const response = await fetch(`${server.url}/api/chat/${chatId}/versions/${messageId}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { versions: { nodeId: string; message: ChatUIMessage }[] })
    .versions;
}

describe.each(['sqlite', 'postgres'] as const)('editing one message on %s', (storeKind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store: storeKind });
  });
  afterAll(async () => {
    await server.stop();
  });

  // The app's own store; the engine's and the stores' suites repeat it on PostgreSQL.
  it.runIf(storeKind === 'sqlite')(
    'the same question edited 105 times: every request answers the edited text',
    async () => {
      const chatId = `edits-${Date.now().toString(36)}`;
      const chat = new NodeChat(server.url, chatId);
      await chat.sendMessage({ text: 'one' });
      await chat.sendMessage({ text: 'two' });
      const editedId = chat.messages[2]?.id as string;
      for (let n = 1; n <= 105; n += 1) {
        await chat.sendMessage({ text: `two, edit ${n}`, messageId: editedId });
        expect(chat.currentError).toBeUndefined();
        expect(chat.messages[2]?.id).toBe(editedId);
        expect(textOf(chat.messages[3])).toBe(`You said: two, edit ${n}`);
      }
      const stored = await server.messages(chatId);
      const messages = (stored.body as { messages: ChatUIMessage[] }).messages;
      expect(messages.map(textOf)).toEqual([
        'one',
        'You said: one',
        'two, edit 105',
        'You said: two, edit 105',
      ]);
    },
    MANY_REQUESTS,
  );

  it(
    'twelve tabs editing the same question at once: every request succeeds, each edit a version',
    async () => {
      const chatId = `tabs-${Date.now().toString(36)}`;
      const first = new NodeChat(server.url, chatId);
      await first.sendMessage({ text: 'one' });
      await first.sendMessage({ text: 'two' });
      const editedId = first.messages[2]?.id as string;
      const tabs = Array.from(
        { length: 12 },
        () => new NodeChat(server.url, chatId, structuredClone(first.messages)),
      );
      await Promise.all(
        tabs.map((tab, index) =>
          tab.sendMessage({ text: `two, tab ${index}`, messageId: editedId }),
        ),
      );
      for (const [index, tab] of tabs.entries()) {
        expect(tab.currentError).toBeUndefined();
        expect(textOf(tab.messages[3])).toBe(`You said: two, tab ${index}`);
      }
      const versions = await versionsOf(server, chatId, editedId);
      expect(new Set(versions.map((version) => version.nodeId)).size).toBe(13);
      expect(versions.map((version) => textOf(version.message)).sort()).toEqual(
        ['two', ...Array.from({ length: 12 }, (_, index) => `two, tab ${index}`)].sort(),
      );
    },
    MANY_REQUESTS,
  );
});
