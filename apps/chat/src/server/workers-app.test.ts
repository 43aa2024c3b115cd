// The app on Workers as its users run it: `start:workers` (scripts/start-workers.mjs: the Worker
// of src/workers in workerd, one Durable Object per chat) in a child process, driven over real
// HTTP with the AI SDK's own client and plain fetch. Waits on what the client received, never
// on time.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeChat, textOf } from '../__fixtures__/chat-test-kit';
import { readEventStream } from '../__fixtures__/event-stream-reader';
import { checkChatListAndSearch } from '../__fixtures__/list-and-search-contract';
import { buildClient } from '../e2e/browser-kit';
import type { ChatUIMessage } from './tools';

const appDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const state = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-workers-'));

/** The stored conversation as `GET …/messages` answers it. */
interface Stored {
  messages: ChatUIMessage[];
  outcomes: Record<string, string>;
  nodeIds: Record<string, string>;
  versions: Record<string, { index: number; nodes: { nodeId: string; leafNodeId: string }[] }>;
}

let child: ChildProcess;
let base: string;
let output = '';

beforeAll(async () => {
  // The page, built for this run (the test run does not build the app itself).
  const client = join(state, 'client');
  await buildClient(client);
  child = spawn(process.execPath, [join(appDirectory, 'scripts', 'start-workers.mjs')], {
    cwd: appDirectory,
    env: {
      ...process.env,
      PORT: '0',
      CHAT_MODEL: 'mock',
      // Slow enough that a reply of a few hundred words is still streaming when a second request
      // resumes or stops it (each test waits for its first words first); the short replies of
      // the other tests take a few of these each.
      MOCK_CHUNK_DELAY_MS: '40',
      CTXGRAPH_WORKERS_STATE: state,
      CTXGRAPH_CLIENT_DIRECTORY: client,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = await new Promise<string>((done, fail) => {
    const watch = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /running at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) done(match[1]);
    };
    child.stdout?.on('data', watch);
    child.stderr?.on('data', watch);
    child.once('exit', (code) => fail(new Error(`start:workers exited (${code}): ${output}`)));
  });
}, 120_000);

afterAll(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(state, { recursive: true, force: true });
});

const chatIdOf = (name: string): string => `${name}-${Math.random().toString(36).slice(2, 10)}`;

async function stored(chatId: string, query = ''): Promise<Stored> {
  const response = await fetch(`${base}/api/chat/${chatId}/messages${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Stored;
}

/** A turn from a last-message body (`{ id, message, trigger, after }`), as a raw response. */
function postMessage(
  chatId: string,
  id: string,
  text: string,
  after: string | null,
): Promise<Response> {
  return fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: chatId,
      trigger: 'submit-message',
      message: { id, role: 'user', parts: [{ type: 'text', text }] },
      after,
    }),
  });
}

describe('the chat app on Workers (start:workers)', () => {
  it('prints its URL like the Node app and serves the built page', async () => {
    expect(output).toMatch(/ctxgraph chat app running at http:\/\/127\.0\.0\.1:\d+/);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
  });

  it('a turn streams the reply to its end; messages has its nodeIds', async () => {
    const chatId = chatIdOf('turn');
    const response = await postMessage(chatId, 'q1', 'ping', null);
    expect(response.status).toBe(200);
    const reply = readEventStream(response);
    expect(await reply.finished).toBe('end');
    expect(reply.events.map((chunk) => chunk.type)).toContain('finish');
    expect(
      reply.events.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join(''),
    ).toBe('You said: ping');
    const { messages, nodeIds } = await stored(chatId);
    expect(messages.map(textOf)).toEqual(['ping', 'You said: ping']);
    const replyId = messages[1]?.id as string;
    expect(reply.events[0]).toMatchObject({ type: 'start', messageId: replyId });
    expect(Object.keys(nodeIds).sort()).toEqual(['q1', replyId].sort());
  });

  it('an edit with the AI SDK client is a version; versions lists both', async () => {
    const chatId = chatIdOf('edit');
    const chat = new NodeChat(base, chatId);
    await chat.sendMessage({ text: 'one' });
    await chat.sendMessage({ text: 'two' });
    const editedId = chat.messages[2]?.id as string;
    await chat.sendMessage({ text: 'two, edited', messageId: editedId });
    expect(chat.currentError).toBeUndefined();
    expect(chat.messages.map(textOf)).toEqual([
      'one',
      'You said: one',
      'two, edited',
      'You said: two, edited',
    ]);
    const versions = (await (
      await fetch(`${base}/api/chat/${chatId}/versions/${editedId}`)
    ).json()) as { versions: { message: ChatUIMessage }[] };
    expect(versions.versions.map((version) => textOf(version.message))).toEqual([
      'two',
      'two, edited',
    ]);
    const { versions: along } = await stored(chatId);
    expect(along[editedId]?.index).toBe(1);
    expect(along[editedId]?.nodes).toHaveLength(2);
  });

  it('`after` places a question after the message it names, not after the newest', async () => {
    const chatId = chatIdOf('after');
    expect((await (await postMessage(chatId, 'a1', 'first', null)).text()).length).toBeGreaterThan(
      0,
    );
    const first = await stored(chatId);
    const firstReplyNode = first.nodeIds[first.messages[1]?.id as string] as string;
    await (await postMessage(chatId, 'a2', 'second', firstReplyNode)).text();
    // A question that follows the first reply, though the chat's newest message is the second's reply.
    await (await postMessage(chatId, 'a3', 'beside', firstReplyNode)).text();
    const newest = await stored(chatId);
    expect(newest.messages.map(textOf)).toEqual([
      'first',
      'You said: first',
      'beside',
      'You said: beside',
    ]);
    // The two questions after the first reply are versions of one message.
    expect(newest.versions.a3?.nodes.map((node) => node.nodeId)).toEqual(['a2', 'a3']);
  });

  it('a second request resumes the reply being streamed, from its start to its end', async () => {
    const chatId = chatIdOf('resume');
    const long = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');
    const first = readEventStream(await postMessage(chatId, 'r1', long, null));
    await expect.poll(() => first.events.some((chunk) => chunk.type === 'text-delta')).toBe(true);
    const resumed = await fetch(`${base}/api/chat/${chatId}/stream`);
    expect(resumed.status).toBe(200);
    const second = readEventStream(resumed);
    expect(await second.finished).toBe('end');
    expect(await first.finished).toBe('end');
    const textOfChunks = (events: readonly { type: string; delta?: string }[]): string =>
      events.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
    expect(textOfChunks(second.events)).toBe(`You said: ${long}`);
    expect(textOfChunks(first.events)).toBe(`You said: ${long}`);
    // Nothing streaming any more: 204.
    expect((await fetch(`${base}/api/chat/${chatId}/stream`)).status).toBe(204);
  });

  it('stop answers 200 with the reply id, the reply is stored `aborted`; delete waits for it', async () => {
    const chatId = chatIdOf('stop');
    const long = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');
    const reply = readEventStream(await postMessage(chatId, 's1', long, null));
    await expect.poll(() => reply.events.some((chunk) => chunk.type === 'text-delta')).toBe(true);
    const replyId = reply.events[0]?.messageId as string;
    // A chat with a reply being written is not deleted (the Node app's 409).
    expect((await fetch(`${base}/api/chat/${chatId}`, { method: 'DELETE' })).status).toBe(409);
    const stop = await fetch(`${base}/api/chat/${chatId}/stop`, { method: 'POST' });
    expect(stop.status).toBe(200);
    expect(await stop.json()).toEqual({ messageId: replyId });
    expect(await reply.finished).toBe('end');
    const { messages, outcomes } = await stored(chatId);
    expect(messages.map((message) => message.id)).toEqual(['s1', replyId]);
    expect(outcomes[replyId]).toBe('aborted');
    expect(textOf(messages[1])).not.toBe(`You said: ${long}`);
    // None left to stop: 204.
    expect((await fetch(`${base}/api/chat/${chatId}/stop`, { method: 'POST' })).status).toBe(204);
    // Stopped, it can be deleted: then it is unknown.
    expect((await fetch(`${base}/api/chat/${chatId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await fetch(`${base}/api/chat/${chatId}/messages`)).status).toBe(404);
  });

  it('an unknown chat is a 404, a wrong method a 405, JSON both', async () => {
    const unknown = await fetch(`${base}/api/chat/${chatIdOf('unknown')}/messages`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: expect.stringContaining('No chat') });
    const stopUnknown = await fetch(`${base}/api/chat/${chatIdOf('unknown')}/stop`, {
      method: 'POST',
    });
    expect(stopUnknown.status).toBe(404);
    const turnByGet = await fetch(`${base}/api/chat`);
    expect(turnByGet.status).toBe(405);
    expect(turnByGet.headers.get('allow')).toBe('POST');
    const messagesByPost = await fetch(`${base}/api/chat/some-chat/messages`, { method: 'POST' });
    expect(messagesByPost.status).toBe(405);
    expect(messagesByPost.headers.get('allow')).toBe('GET');
    expect(await messagesByPost.json()).toEqual({ error: expect.stringContaining('GET') });
  });

  it('events follow the chat: its state at once, then each reply live and ended', async () => {
    const chatId = chatIdOf('events');
    await (await postMessage(chatId, 'e1', 'hello', null)).text();
    const events = readEventStream<{
      version: number;
      live: string | null;
      follows: string | null;
    }>(await fetch(`${base}/api/chat/${chatId}/events`));
    expect(events.status).toBe(200);
    await expect.poll(() => events.events.length).toBeGreaterThan(0);
    expect(events.events[0]).toMatchObject({ live: null });
    const { messages, nodeIds } = await stored(chatId);
    const after = nodeIds[messages.at(-1)?.id as string] as string;
    const reply = readEventStream(await postMessage(chatId, 'e2', 'and again', after));
    await expect.poll(() => reply.events[0]?.messageId).toBeDefined();
    const replyId = reply.events[0]?.messageId as string;
    await expect.poll(() => events.events.some((event) => event.live === replyId)).toBe(true);
    expect(events.events.find((event) => event.live === replyId)?.follows).toBe('e2');
    expect(await reply.finished).toBe('end');
    await expect.poll(() => events.events.at(-1)?.live).toBeNull();
    await events.cancel();
  });

  it('the chat list and search answer as on Node: the user object, and a search fanned out to the chat objects', async () => {
    await checkChatListAndSearch(base);
  });
});
