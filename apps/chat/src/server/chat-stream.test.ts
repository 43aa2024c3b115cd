// Stopping and resuming a streaming reply, with the app's mock held after its first words until
// the test lets it go on (or the reply is stopped): each test acts while the reply is under way,
// whatever the machine's speed, instead of racing a stream timed in milliseconds.
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
  it('a stopped reply is kept under the id the client saw, every part settled, and the next turn works', async () => {
    const chatId = `abort-${Date.now()}`;
    const chat = new NodeChat(server.url, chatId);
    const sending = chat.sendMessage({ text: long });
    // The reply's first words are on the client, and the model holds the rest: stop now.
    await expect.poll(() => textOf(chat.messages[1])).toBe('You said: please answer ');
    await chat.stop();
    await sending;
    const seenId = chat.messages[1]?.id;
    // The server saves the stopped reply once the model call has ended.
    await expect.poll(async () => (await storedMessages(chatId)).length).toBe(2);
    const stored = await storedMessages(chatId);
    expect(stored[0]?.parts).toEqual([{ type: 'text', text: long }]);
    expect(stored[1]?.id).toBe(seenId);
    // What the model streamed before the stop, and nothing after it.
    expect(textOf(stored[1])).toBe('You said: please answer ');
    expect(JSON.stringify(stored)).not.toContain('"streaming"');
    // The engine marked it aborted (its record, never the app's metadata).
    const graph = await server.store.getGraph(chatId);
    const node = graph.nodes.find((candidate) => candidate.message.id === seenId);
    expect(JSON.stringify(node?.engineRecord ?? {})).toContain('aborted');
    expect(stored[1]?.metadata).toBeUndefined();

    await chat.sendMessage({ text: 'next' });
    expect(chat.currentError).toBeUndefined();
    const after = await storedMessages(chatId);
    expect(after.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
    expect(textOf(after[3])).toBe('You said: next');
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
