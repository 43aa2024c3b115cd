// Stopping (the stop route), going away (a disconnect, which does not stop) and resuming a
// streaming reply, with the app's mock held after its first words until the test lets it go on
// (or the reply is stopped): each test acts while the reply is under way, whatever the machine's
// speed, instead of racing a stream timed in milliseconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HeldModel,
  holdAfterWords,
  NodeChat,
  startTestServer,
  type TestServer,
  textOf,
} from '../__fixtures__/chat-test-kit';
import { createMockModel } from './mock-model';
import type { ChatUIMessage } from './tools';

/** Words a reply streams before it is held. */
const HELD_AFTER = 4;

let held: HeldModel;
let server: TestServer;
beforeAll(async () => {
  held = holdAfterWords(createMockModel({ chunkDelayMs: 0 }), HELD_AFTER);
  server = await startTestServer({ model: held.model });
});
afterAll(async () => {
  await server.stop();
});

const long = 'please answer with a rather long sentence made of many separate words to stream';

async function storedMessages(chatId: string, query = ''): Promise<ChatUIMessage[]> {
  const answer = await server.messages(chatId, query);
  expect(answer.status).toBe(200);
  return (answer.body as { messages: ChatUIMessage[] }).messages;
}

describe('stop and resume', () => {
  it('the stop route stops a reply: kept under the id the client saw, every part settled, marked aborted, and the next turn works', async () => {
    const chatId = `stop-${Date.now()}`;
    const chat = new NodeChat(server.url, chatId);
    const sending = chat.sendMessage({ text: long });
    // The reply's first words are on the client, and the model holds the rest: stop now.
    await expect.poll(() => textOf(chat.messages[1])).toBe('You said: please answer ');
    const seenId = chat.messages[1]?.id;
    const stop = await fetch(`${server.url}/api/chat/${chatId}/stop`, { method: 'POST' });
    expect(stop.status).toBe(200);
    // Answered once the reply is saved: it is there at once.
    expect(await stop.json()).toEqual({ messageId: seenId });
    const stored = await storedMessages(chatId);
    expect(stored).toHaveLength(2);
    expect(stored[0]?.parts).toEqual([{ type: 'text', text: long }]);
    expect(stored[1]?.id).toBe(seenId);
    // What the model streamed before the stop, and nothing after it.
    expect(textOf(stored[1])).toBe('You said: please answer ');
    expect(JSON.stringify(stored)).not.toContain('"streaming"');
    // The engine marked it aborted (its record, never the app's metadata), and the read says so.
    const graph = await server.store.getGraph(chatId);
    const node = graph.nodes.find((candidate) => candidate.message.id === seenId);
    expect(JSON.stringify(node?.engineRecord ?? {})).toContain('aborted');
    expect(stored[1]?.metadata).toBeUndefined();
    expect((await server.messages(chatId)).body).toMatchObject({
      outcomes: { [seenId as string]: 'aborted' },
    });
    // The client's own stream ended with what it had: the stored text.
    await sending;
    expect(textOf(chat.messages[1])).toBe('You said: please answer ');

    await chat.sendMessage({ text: 'next' });
    expect(chat.currentError).toBeUndefined();
    const after = await storedMessages(chatId);
    expect(after.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
    expect(textOf(after[3])).toBe('You said: next');
  });

  it('a client that goes away does not stop the reply: it runs to its end, is saved whole, and resumes meanwhile', async () => {
    const chatId = `gone-${Date.now()}`;
    const chat = new NodeChat(server.url, chatId);
    const sending = chat.sendMessage({ text: long });
    await expect.poll(() => textOf(chat.messages[1])).toBe('You said: please answer ');
    const seenId = chat.messages[1]?.id;
    // The AI SDK client's stop() aborts its request: a disconnect, as a closed tab or a reload.
    await chat.stop();
    await sending;
    // The reply is still live: a reload resumes it.
    const follower = new NodeChat(server.url, chatId, [
      structuredClone(chat.messages[0] as ChatUIMessage),
    ]);
    const following = follower.resumeStream();
    await expect.poll(() => textOf(follower.messages.at(-1))).toBe('You said: please answer ');
    held.release();
    await following;
    expect(follower.currentError).toBeUndefined();
    expect(follower.messages.at(-1)?.id).toBe(seenId);
    expect(textOf(follower.messages.at(-1))).toBe(`You said: ${long}`);
    const stored = await storedMessages(chatId);
    expect(stored.map((message) => message.id)).toEqual([chat.messages[0]?.id, seenId]);
    expect(textOf(stored[1])).toBe(`You said: ${long}`);
    expect((await server.messages(chatId)).body).toMatchObject({ outcomes: {} });
  });

  it('a second client resumes the active stream (GET /api/chat/:id/stream), 204 when none', async () => {
    const chatId = `resume-${Date.now()}`;
    expect((await fetch(`${server.url}/api/chat/${chatId}/stream`)).status).toBe(204);
    const chat = new NodeChat(server.url, chatId);
    const sending = chat.sendMessage({ text: 'a reply to follow from elsewhere' });
    // The reply is under way (the model holds it after its first words) while the follower joins.
    await expect.poll(() => textOf(chat.messages[1]).length).toBeGreaterThan(0);
    const follower = new NodeChat(server.url, chatId, [
      structuredClone(chat.messages[0] as ChatUIMessage),
    ]);
    // The AI SDK's resume: GET {api}/{id}/stream, the reply from its first chunk.
    const following = follower.resumeStream();
    // The follower has the reply's first words from the replay before the rest is let go.
    await expect.poll(() => textOf(follower.messages.at(-1))).toBe('You said: a reply ');
    held.release();
    await following;
    await sending;
    expect(follower.currentError).toBeUndefined();
    expect(textOf(follower.messages.at(-1))).toBe('You said: a reply to follow from elsewhere');
    expect(follower.messages.at(-1)?.id).toBe(chat.messages[1]?.id);
    expect((await fetch(`${server.url}/api/chat/${chatId}/stream`)).status).toBe(204);
  });

  it('a reply that cannot be saved ends the stream with an error the client sees', async () => {
    const chatId = `unsaved-${Date.now()}`;
    const chat = new NodeChat(server.url, chatId);
    const sending = chat.sendMessage({ text: 'this chat is deleted while the reply streams' });
    await expect.poll(() => textOf(chat.messages[1]).length).toBeGreaterThan(0);
    // Another request deletes the chat mid-stream: the reply has nowhere to go.
    expect(await server.store.deleteChat(chatId)).toBe(true);
    held.release();
    await sending;
    expect(chat.status).toBe('error');
    expect(chat.currentError?.message).toContain('The reply could not be saved');
  });
});
