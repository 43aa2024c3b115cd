// The durable-turn routes in one process, on SQLite and PostgreSQL: POST /api/chat/:id/stop with
// every body a hostile client may send, GET /api/chat/:id/events and /stream for chats that do
// not exist, streams that close cleanly when their client goes (no watcher left on the store),
// and a chat with two live replies (two tabs on two branches). The app's mock is held after its
// first words until the test lets it go on, or the reply is stopped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HeldModel,
  holdAfterWords,
  NodeChat,
  startTestServer,
  type TestServer,
  textOf,
} from '../__fixtures__/chat-test-kit';
import { readEventStream, type StreamChunk } from '../__fixtures__/event-stream-reader';
import { createMockModel } from './mock-model';
import { type RunningChatServer, startChatServer } from './start-server';
import type { ChatUIMessage } from './tools';

const HELD_AFTER = 4;
const long = 'please answer with a rather long sentence made of many separate words to stream';

let counter = 0;
function newChatId(): string {
  counter += 1;
  return `live-${Date.now().toString(36)}-${counter}`;
}

describe.each(['sqlite', 'postgres'] as const)('the stop route on %s', (kind) => {
  let held: HeldModel;
  let server: TestServer;
  beforeAll(async () => {
    held = holdAfterWords(createMockModel({ chunkDelayMs: 0 }), HELD_AFTER);
    server = await startTestServer({ model: held.model, store: kind });
  });
  afterAll(async () => {
    held?.release();
    await server?.stop();
  });

  const stop = (chatId: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/chat/${encodeURIComponent(chatId)}/stop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  async function liveReplies(chatId: string): Promise<string[]> {
    const state = await server.store.getLiveState?.(chatId);
    return (state?.replies ?? []).map((reply) => reply.replyId);
  }

  /** A chat whose reply is live (held after its first words); the client and the reply's id. */
  async function liveChat(): Promise<{ chatId: string; chat: NodeChat; sending: Promise<void> }> {
    const chatId = newChatId();
    const chat = new NodeChat(server.url, chatId);
    const sending = chat.sendMessage({ text: long });
    await expect.poll(() => textOf(chat.messages[1])).toBe('You said: please answer ');
    return { chatId, chat, sending };
  }

  const wide = '€'.repeat(200); // 600 bytes of UTF-8
  const badBodies: [string, string][] = [
    ['not JSON', '{ nope'],
    ['JSON cut off', '{"messageId": "ab'],
    ['an array', '[]'],
    ['null', 'null'],
    ['a string', '"stop"'],
    ['a number', '5'],
    ['a messageId that is a number', '{"messageId": 5}'],
    ['a messageId that is null', '{"messageId": null}'],
    ['a messageId that is an object', '{"messageId": {"id": "x"}}'],
    ['an empty messageId', '{"messageId": ""}'],
    ['a messageId with NUL', JSON.stringify({ messageId: 'a\u0000b' })],
    ['a messageId with a lone surrogate', '{"messageId": "half \\ud83d"}'],
    ['a 600-character messageId', JSON.stringify({ messageId: 'x'.repeat(600) })],
    ['a 600-byte messageId', JSON.stringify({ messageId: wide })],
    ['an extra key', '{"messageId": "x", "force": true}'],
    ['only junk', '{"reason": "because"}'],
    ['a __proto__ key', '{"__proto__": {"messageId": "x"}}'],
    ['a body far too long', JSON.stringify({ messageId: 'x', padding: 'p'.repeat(20_000) })],
  ];

  it('a hostile body is a 400 with a JSON error, and nothing is stopped or written', async () => {
    const { chatId, chat, sending } = await liveChat();
    const replyId = chat.messages[1]?.id as string;
    const graph = await server.store.getGraph(chatId);
    for (const [name, body] of badBodies) {
      const response = await stop(chatId, body);
      expect({ name, status: response.status }).toEqual({ name, status: 400 });
      expect(response.headers.get('content-type')).toContain('application/json');
      const answer = (await response.json()) as { error: string };
      expect(answer.error, name).toMatch(/^Stop request refused: /);
      // The body is checked before the chat is read: an unknown chat gets the same answer.
      expect((await stop(`never-${chatId}`, body)).status, name).toBe(400);
    }
    expect(await liveReplies(chatId)).toEqual([replyId]);
    expect((await server.store.getGraph(chatId)).nodes).toHaveLength(graph.nodes.length);
    expect((await server.messages(`never-${chatId}`)).status).toBe(404);

    // A reply that is not live (an id the chat never had) stops nothing: 204.
    expect((await stop(chatId, JSON.stringify({ messageId: 'not-a-reply' }))).status).toBe(204);
    expect(await liveReplies(chatId)).toEqual([replyId]);
    // Whitespace is an empty body; any content type is read the same way.
    const stopped = await stop(chatId, '  \n', { 'content-type': 'text/plain' });
    expect(stopped.status).toBe(200);
    expect(await stopped.json()).toEqual({ messageId: replyId });
    await sending;
    expect(await liveReplies(chatId)).toEqual([]);
  });

  it('an unknown chat is a 404 with a JSON error, and it is not created; a malformed chat id a 400', async () => {
    const chatId = `never-${newChatId()}`;
    for (const body of ['', '{}', JSON.stringify({ messageId: 'r1' })]) {
      const response = await stop(chatId, body);
      expect(response.status).toBe(404);
      expect((await response.json()) as { error: string }).toEqual({ error: expect.any(String) });
    }
    expect(await server.store.getChat(chatId)).toBeNull();
    for (const id of ['x'.repeat(600), wide, 'a\u0000b']) {
      const response = await stop(id, '');
      expect(response.status).toBe(400);
      expect((await response.json()) as { error: string }).toMatchObject({
        error: expect.any(String),
      });
    }
  });

  it('two live replies on two branches: the resume follows the newer; a stop names one or stops all', async () => {
    const chatId = newChatId();
    held.release();
    const opening = new NodeChat(server.url, chatId);
    await opening.sendMessage({ text: 'hi' });
    const [question, answer] = opening.messages as [ChatUIMessage, ChatUIMessage];
    // Tab one continues the conversation; tab two edits the first question (another branch).
    const one = new NodeChat(server.url, chatId, [question, answer]);
    const sendingOne = one.sendMessage({ text: long });
    await expect.poll(() => textOf(one.messages[3])).toBe('You said: please answer ');
    const two = new NodeChat(server.url, chatId, [question, answer]);
    const sendingTwo = two.sendMessage({ text: `${long}, edited`, messageId: question.id });
    await expect.poll(() => textOf(two.messages[1])).toBe('You said: please answer ');
    const oneId = one.messages[3]?.id as string;
    const twoId = two.messages[1]?.id as string;
    expect(await liveReplies(chatId)).toEqual([oneId, twoId]);

    // The resume follows the most recently started one.
    const resumed = readEventStream<StreamChunk>(
      await fetch(`${server.url}/api/chat/${chatId}/stream`),
    );
    await expect.poll(() => resumed.events[0]).toEqual({ type: 'start', messageId: twoId });

    const first = await stop(chatId, JSON.stringify({ messageId: oneId }));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ messageId: oneId });
    await sendingOne;
    expect(await liveReplies(chatId)).toEqual([twoId]);
    const rest = await stop(chatId, '');
    expect(await rest.json()).toEqual({ messageId: twoId });
    await sendingTwo;
    expect(await resumed.finished).toBe('end');
    expect(resumed.events.at(-1)?.type).toBe('finish');
    expect(await liveReplies(chatId)).toEqual([]);

    // Each branch holds its stopped reply, marked; a version's read marks it too.
    const oneRead = (await server.messages(chatId, `?leaf=${oneId}`)).body as {
      outcomes: Record<string, string>;
    };
    expect(oneRead.outcomes).toEqual({ [oneId]: 'aborted' });
    const versions = (await (
      await fetch(`${server.url}/api/chat/${chatId}/versions/${question.id}`)
    ).json()) as { versions: { leafNodeId: string }[] };
    expect(versions.versions).toHaveLength(2);
    const byNode = await Promise.all(
      versions.versions.map(
        async (version) =>
          (await server.messages(chatId, `?node=${encodeURIComponent(version.leafNodeId)}`))
            .body as { messages: ChatUIMessage[]; outcomes: Record<string, string> },
      ),
    );
    expect(byNode.map((read) => read.outcomes)).toEqual([
      { [oneId]: 'aborted' },
      { [twoId]: 'aborted' },
    ]);
    expect(byNode.map((read) => read.messages.at(-1)?.id)).toEqual([oneId, twoId]);
  });
});

/**
 * `store`, counting the change-feed watchers the app holds on it: a stream that ends leaves none
 * (the store's feed, a poll on SQLite, runs only while something watches).
 */
function countWatchers(store: ContextStore): { store: ContextStore; watching(): number } {
  let watching = 0;
  const counted = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (key === 'watchChat' && typeof value === 'function') {
        return (...args: unknown[]) => {
          const unwatch = (value as (...input: unknown[]) => () => void).apply(target, args);
          watching += 1;
          let done = false;
          return () => {
            if (!done) {
              done = true;
              watching -= 1;
            }
            unwatch();
          };
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: counted, watching: () => watching };
}

describe('event and resume streams', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-live-'));
  let sqlite: SqliteContextStore;
  let counted: ReturnType<typeof countWatchers>;
  let held: HeldModel;
  let running: RunningChatServer;
  beforeAll(async () => {
    sqlite = new SqliteContextStore(join(directory, 'chat.db'));
    counted = countWatchers(sqlite);
    held = holdAfterWords(createMockModel({ chunkDelayMs: 0 }), HELD_AFTER);
    running = await startChatServer({ store: counted.store, model: held.model, port: 0 });
  });
  afterAll(async () => {
    held?.release();
    await running?.close();
    await sqlite?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('an unknown chat: events 404 with a JSON error, stream 204, and neither creates it', async () => {
    const chatId = `never-${newChatId()}`;
    const events = await fetch(`${running.url}/api/chat/${chatId}/events`);
    expect(events.status).toBe(404);
    expect(events.headers.get('content-type')).toContain('application/json');
    expect((await events.json()) as { error: string }).toEqual({ error: expect.any(String) });
    const stream = await fetch(`${running.url}/api/chat/${chatId}/stream`);
    expect(stream.status).toBe(204);
    expect(await stream.text()).toBe('');
    expect(await sqlite.getChat(chatId)).toBeNull();
    const malformed = await fetch(`${running.url}/api/chat/${'x'.repeat(600)}/events`);
    expect(malformed.status).toBe(400);
  });

  it('an events stream and a resume close cleanly when their client goes: no watcher is left', async () => {
    const chatId = newChatId();
    const chat = new NodeChat(running.url, chatId);
    const sending = chat.sendMessage({ text: long });
    await expect.poll(() => textOf(chat.messages[1])).toBe('You said: please answer ');
    const replyId = chat.messages[1]?.id;
    const writing = counted.watching();

    const events = readEventStream<{ revision: number; live: string | null }>(
      await fetch(`${running.url}/api/chat/${chatId}/events`),
    );
    expect(events.status).toBe(200);
    await expect.poll(() => events.events[0]?.live).toBe(replyId);
    const resumed = readEventStream<StreamChunk>(
      await fetch(`${running.url}/api/chat/${chatId}/stream`),
    );
    await expect.poll(() => resumed.events[0]).toEqual({ type: 'start', messageId: replyId });
    expect(counted.watching()).toBe(writing + 2);

    await events.cancel();
    await resumed.cancel();
    await expect.poll(() => counted.watching()).toBe(writing);

    // The reply went on meanwhile: released, it ends and is saved whole; then nothing watches.
    held.release();
    await sending;
    expect(textOf(chat.messages[1])).toBe(`You said: ${long}`);
    await expect.poll(() => counted.watching()).toBe(0);
  });
});
