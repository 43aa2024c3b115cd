import { DefaultChatTransport, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createTestChatServer, type TestChatServer } from './__fixtures__/chat-server';
import { plainChat, TestTab, textOf } from './__fixtures__/chat-tab';
import { serverSupport } from './__fixtures__/server-support';
import { createChatClient } from './chat-client';
import { prepareLastMessageRequest } from './last-message-request';

// Tabs as a page runs them: the AI SDK's own chat client driven by a session, against the real
// handler over the memory store.

const support = await serverSupport();

/** The server, with every turn body it was posted kept. */
function recordingServer(): TestChatServer & { bodies: Record<string, unknown>[] } {
  const server = createTestChatServer();
  const bodies: Record<string, unknown>[] = [];
  return {
    ...server,
    bodies,
    fetch: async (input, init) => {
      if (init?.method === 'POST' && String(input).endsWith('/api/chat')) {
        bodies.push(JSON.parse(String(init.body)) as Record<string, unknown>);
      }
      return server.fetch(input, init);
    },
  };
}

async function openTab(server: TestChatServer, chatId: string, node?: string): Promise<TestTab> {
  const tab = new TestTab(server, chatId, node === undefined ? {} : { node });
  await tab.open();
  return tab;
}

describe('createChatSession', () => {
  it('starts a new chat, posts only the new message with the node it follows, and reads the path back', async () => {
    const server = recordingServer();
    const tab = await openTab(server, 'c-new');
    expect(tab.session.getSnapshot()).toMatchObject({ loaded: true, isNew: true, node: null });
    await tab.chat.sendMessage({ text: 'Hello' });
    await tab.idle();
    expect(tab.texts()).toEqual(['Hello', 'You said: Hello']);
    expect(tab.session.getSnapshot().isNew).toBe(false);
    await tab.chat.sendMessage({ text: 'Again' });
    await tab.idle();
    expect(tab.texts()).toEqual(['Hello', 'You said: Hello', 'Again', 'You said: Again']);

    const [first, second] = server.bodies;
    expect(first).toMatchObject({ id: 'c-new', trigger: 'submit-message', after: null });
    expect(first).not.toHaveProperty('messages');
    expect(textOf(first?.message as UIMessage)).toBe('Hello');
    expect(second).not.toHaveProperty('messages');
    expect(textOf(second?.message as UIMessage)).toBe('Again');
    if (support.nodeIds) {
      const reply = tab.chat.messages[1]?.id as string;
      expect(second?.after).toBe(tab.session.getSnapshot().saved.nodeIds[reply]);
      expect(typeof second?.after).toBe('string');
    }
    tab.close();
  });

  it('resumes a live reply when it opens, and a second tab follows a reply the first one starts', async () => {
    const server = createTestChatServer();
    const first = await openTab(server, 'c-live');
    await first.chat.sendMessage({ text: 'Hello' });
    await first.idle();
    const second = await openTab(server, 'c-live');
    expect(second.texts()).toEqual(['Hello', 'You said: Hello']);

    void first.chat.sendMessage({ text: 'hold on' });
    // The second tab reads the question and resumes the reply's stream.
    await second.until(() => second.texts().at(-1) === 'Holding ');
    expect(second.texts().slice(0, 3)).toEqual(['Hello', 'You said: Hello', 'hold on']);
    // A tab opened now resumes it too.
    const third = await openTab(server, 'c-live');
    await third.until(() => third.texts().at(-1) === 'Holding ');

    server.release('hold on');
    for (const tab of [first, second, third]) {
      await tab.until(() => tab.texts().at(-1) === 'Holding done.');
      await tab.idle();
      tab.close();
    }
    expect(second.texts()).toEqual(first.texts());
    expect(third.texts()).toEqual(first.texts());
  });

  it('follows a chat its own first turn created at once, not after the reconnect wait', async () => {
    const server = createTestChatServer();
    // A wait no test reaches: only the session's own retryNow connects the follower.
    const first = new TestTab(server, 'c-created', { retry: { initialMs: 600_000 } });
    await first.open();
    expect(first.session.getSnapshot().isNew).toBe(true);
    await first.chat.sendMessage({ text: 'Hello' });
    await first.idle();
    const second = await openTab(server, 'c-created');
    void second.chat.sendMessage({ text: 'hold from the second tab' });
    await first.until(() => first.texts().at(-1) === 'Holding ');
    server.release('hold from the second tab');
    await first.until(() => first.texts().at(-1) === 'Holding done.');
    await second.idle();
    first.close();
    second.close();
  });

  it('stops a reply through the server and shows it as saved, marked aborted', async () => {
    const server = createTestChatServer();
    const tab = await openTab(server, 'c-stop');
    void tab.chat.sendMessage({ text: 'hold it' });
    await tab.until(() => tab.texts().at(-1) === 'Holding ');
    const reply = tab.chat.messages.at(-1)?.id as string;
    await tab.session.stop();
    await tab.idle();
    const snapshot = tab.session.getSnapshot();
    expect(snapshot.stopping).toBe(false);
    expect(snapshot.error).toBeUndefined();
    expect(snapshot.saved.outcomes[reply]).toBe('aborted');
    expect(tab.texts()).toEqual(['hold it', 'Holding ']);
    tab.close();
  });

  it.skipIf(!support.nodeIds)(
    'marks the version shown, switches version, keeps the choice for the URL and opens on it',
    async () => {
      const server = createTestChatServer();
      const tab = await openTab(server, 'c-versions');
      await tab.chat.sendMessage({ text: 'First' });
      await tab.idle();
      const question = tab.chat.messages[0]?.id as string;
      expect(tab.session.versionsOf(question)).toBeUndefined();
      // An edit keeps the message id: a second version of it.
      await tab.chat.sendMessage({ text: 'First, edited', messageId: question });
      await tab.idle();
      expect(tab.texts()).toEqual(['First, edited', 'You said: First, edited']);
      const versions = tab.session.versionsOf(question);
      expect(versions?.index).toBe(1);
      expect(versions?.nodes).toHaveLength(2);

      await tab.session.selectVersion(question, 0);
      expect(tab.texts()).toEqual(['First', 'You said: First']);
      expect(tab.session.versionsOf(question)?.index).toBe(0);
      const chosen = versions?.nodes[0]?.leafNodeId as string;
      expect(tab.nodes).toEqual([chosen]);
      expect(tab.session.getSnapshot().node).toBe(chosen);
      await expect(tab.session.selectVersion(question, 5)).rejects.toThrow(/has no version 5/);

      // A reload on the chosen version shows it.
      const reloaded = await openTab(server, 'c-versions', chosen);
      expect(reloaded.texts()).toEqual(['First', 'You said: First']);
      // A node the chat does not have (an old link): the newest path, and the URL cleared.
      const stale = await openTab(server, 'c-versions', 'no-such-node');
      expect(stale.texts()).toEqual(['First, edited', 'You said: First, edited']);
      expect(stale.nodes).toEqual([null]);

      // A turn on the chosen version continues it, and the URL follows to its new leaf.
      await tab.chat.sendMessage({ text: 'Next' });
      await tab.idle();
      expect(tab.texts()).toEqual(['First', 'You said: First', 'Next', 'You said: Next']);
      const leaf = tab.session.getSnapshot().saved.nodeIds[tab.chat.messages[3]?.id as string];
      expect(tab.nodes.at(-1)).toBe(leaf);
      for (const open of [tab, reloaded, stale]) open.close();
    },
  );

  it.skipIf(!support.nodeIds)(
    'a turn on a chosen version ends on its own path, though an event asks for a refresh while its path is read back',
    async () => {
      const server = createTestChatServer();
      // The read-back of a turn (`GET …/messages?leaf=`) waits at a gate the test opens, and
      // the chat's events are the test's: the order of the two is the test's, not the machine's.
      let gateShut = false;
      let reads = 0;
      const held: (() => void)[] = [];
      const events: ReadableStreamDefaultController<Uint8Array>[] = [];
      const gated: TestChatServer = {
        ...server,
        fetch: async (input, init) => {
          const url = String(input instanceof Request ? input.url : input);
          if (url.includes('/events')) {
            const body = new ReadableStream<Uint8Array>({
              start: (controller) => {
                events.push(controller);
              },
            });
            return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
          }
          if (url.includes('/messages')) reads += 1;
          if (gateShut && url.includes('/messages?leaf=')) {
            await new Promise<void>((resolve) => held.push(resolve));
          }
          return server.fetch(input, init);
        },
      };
      const tab = await openTab(gated, 'c-readback');
      await tab.chat.sendMessage({ text: 'First' });
      await tab.idle();
      const question = tab.chat.messages[0]?.id as string;
      await tab.chat.sendMessage({ text: 'First, edited', messageId: question });
      await tab.idle();
      await tab.session.selectVersion(question, 0);
      expect(tab.texts()).toEqual(['First', 'You said: First']);
      const before = tab.chat.messages[1]?.id as string;

      gateShut = true;
      await tab.chat.regenerate();
      await expect.poll(() => held.length).toBe(1);
      // The save's event arrives while the turn's path is being read back.
      await expect.poll(() => events.length).toBeGreaterThan(0);
      const event = `data: ${JSON.stringify({ version: 1_000_000, live: null, follows: null })}\n\n`;
      const readsBefore = reads;
      for (const controller of events) controller.enqueue(new TextEncoder().encode(event));
      // The refresh that event asks for is under way; the gate then lets every read-back through.
      await expect.poll(() => reads).toBeGreaterThan(readsBefore);
      gateShut = false;
      for (const release of held.splice(0)) release();
      await tab.idle();
      const reply = tab.chat.messages[1]?.id as string;
      expect(reply).not.toBe(before);
      expect(tab.texts()).toEqual(['First', 'You said: First']);
      expect(tab.session.versionsOf(reply)?.index).toBe(1);
      expect(tab.session.getSnapshot().node).toBe(tab.session.getSnapshot().saved.nodeIds[reply]);
      tab.close();
    },
  );

  it.skipIf(!support.after)(
    'places a question after the reply its tab shows, not after another tab’s unanswered question',
    async () => {
      const server = createTestChatServer();
      const client = createChatClient({ fetch: server.fetch });
      const chatOf = (chatId: string, nodeIds: () => Readonly<Record<string, string>>) =>
        plainChat(
          chatId,
          new DefaultChatTransport<UIMessage>({
            api: client.routes.turn,
            fetch: client.fetch as typeof fetch,
            prepareSendMessagesRequest: prepareLastMessageRequest((id) => nodeIds()[id]),
          }),
        );
      const setup = chatOf('c-after', () => ({}));
      await setup.sendMessage({ text: 'Hello' });
      const saved = await client.loadChat('c-after');
      // Both tabs show [Hello, reply]; tab A asks a question whose reply is held.
      const tabA = chatOf('c-after', () => saved?.nodeIds ?? {});
      const tabB = chatOf('c-after', () => saved?.nodeIds ?? {});
      tabA.setMessages(saved?.messages ?? []);
      tabB.setMessages(saved?.messages ?? []);
      const asked = tabA.sendMessage({ text: 'hold A' });
      await server.holding('hold A');
      await tabB.sendMessage({ text: 'Question B' });
      const question = tabB.messages.at(-2)?.id as string;
      const path = await client.loadChat('c-after', { leaf: question });
      expect(path?.messages.map(textOf)).toEqual(['Hello', 'You said: Hello', 'Question B']);
      server.release('hold A');
      await asked;
    },
  );
});
