// Two app processes on one SQLite file (two servers, two connections), each keeping warm
// engines between requests: what one writes, the other's warm engine shows on its next request.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { message } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeChat, plain, textOf } from '../__fixtures__/chat-test-kit';
import { createMockModel } from './mock-model';
import { type RunningChatServer, startChatServer } from './start-server';
import type { ChatUIMessage } from './tools';

let directory: string;
let first: RunningChatServer;
let second: RunningChatServer;
beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-warm-'));
  const sqlitePath = join(directory, 'chat.db');
  const model = createMockModel({ chunkDelayMs: 0 });
  first = await startChatServer({ sqlitePath, model, port: 0 });
  second = await startChatServer({ sqlitePath, model, port: 0 });
});
afterAll(async () => {
  await first.close();
  await second.close();
  rmSync(directory, { recursive: true, force: true });
});

let counter = 0;
function newChatId(): string {
  counter += 1;
  return `warm-${Date.now().toString(36)}-${counter}`;
}

async function stored(server: RunningChatServer, chatId: string): Promise<ChatUIMessage[]> {
  const response = await fetch(`${server.url}/api/chat/${chatId}/messages`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: ChatUIMessage[] }).messages;
}

async function turn(chat: NodeChat, text: string): Promise<void> {
  await chat.sendMessage({ text });
  expect(chat.currentError).toBeUndefined();
}

describe('warm engines across processes', () => {
  it('a turn written by another process is on the warm engine’s next request', async () => {
    const chatId = newChatId();
    const onFirst = new NodeChat(first.url, chatId);
    await turn(onFirst, 'one');
    await turn(onFirst, 'two');
    // The other process continues the chat from what it stores.
    const onSecond = new NodeChat(second.url, chatId, await stored(second, chatId));
    await turn(onSecond, 'three');
    // Back on the first process (its engine for the chat is warm): the client that saw the
    // other process's turn continues after it, and the stored path holds every turn.
    const reloaded = new NodeChat(first.url, chatId, await stored(first, chatId));
    expect(plain(reloaded.messages)).toEqual(plain(onSecond.messages));
    await turn(reloaded, 'four');
    expect(textOf(reloaded.messages.at(-1))).toBe('You said: four');
    expect(plain(await stored(first, chatId))).toEqual(plain(reloaded.messages));
    expect(plain(await stored(second, chatId))).toEqual(plain(reloaded.messages));
    // The first client, still holding two turns, continues from its own path: a branch there.
    await turn(onFirst, 'two and a half');
    const branch = await stored(first, chatId);
    expect(branch.map(textOf)).toEqual([
      'one',
      'You said: one',
      'two',
      'You said: two',
      'two and a half',
      'You said: two and a half',
    ]);
  });

  it('a reply another process rewrote in place shows on the warm engine, and the next turn answers after it', async () => {
    const chatId = newChatId();
    const chat = new NodeChat(first.url, chatId);
    await turn(chat, 'hello');
    await turn(chat, 'again');
    const reply = chat.messages.at(-1) as ChatUIMessage;
    // Another process replaces the reply's content in place (as a client-side tool result does).
    const engine = new ContextEngine({ store: second.store, chatId, userId: 'chat-app-user' });
    const [node] = await engine.findMessage(reply.id);
    await engine.continueFrom(node ?? null);
    engine.set(message({ ...reply, parts: [{ type: 'text', text: 'rewritten elsewhere' }] }));
    await engine.save();
    // A client that loaded the chat from the other process posts to this one, whose warm engine
    // last saw the reply before the rewrite: it is matched as stored, not taken for an edit.
    const shown = await stored(second, chatId);
    expect(shown.map(textOf)).toEqual(['hello', 'You said: hello', 'again', 'rewritten elsewhere']);
    const reloaded = new NodeChat(first.url, chatId, shown);
    await turn(reloaded, 'third');
    const versions = await fetch(`${first.url}/api/chat/${chatId}/versions/${reply.id}`);
    expect(((await versions.json()) as { versions: unknown[] }).versions).toHaveLength(1);
    expect(plain(await stored(first, chatId))).toEqual(plain(reloaded.messages));
    expect((await stored(second, chatId)).map(textOf)).toEqual([
      'hello',
      'You said: hello',
      'again',
      'rewritten elsewhere',
      'third',
      'You said: third',
    ]);
  });
});
