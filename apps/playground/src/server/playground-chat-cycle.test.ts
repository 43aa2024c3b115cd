import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextEngine } from '@ctxgraph/engine';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { versionPositions } from '../client/graph-model';
import type { ChatView } from './chat-view';
import { createEchoModel } from './echo-model';
import { openBackend, type PlaygroundBackend } from './open-backend';
import { createPlaygroundApp } from './playground-app';
import { rendererFor } from './renderers';
import { holdAfterWords } from './testing/hold-after-words';

// The playground's model replies go through @ctxgraph/ai-sdk's chat cycle (as apps/chat's do):
// these tests drive the HTTP API with the built-in echo model, which reports usage like a
// provider with a prefix cache, on a real SQLite file.

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-cycle-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noExplicitAny: response bodies and NDJSON events are checked field by field
type Json = any;

let count = 0;
let backend: PlaygroundBackend;
let app: Hono;
const logged: unknown[] = [];

beforeEach(async () => {
  count += 1;
  backend = await openBackend({ kind: 'sqlite', path: join(directory, `cycle-${count}.db`) });
  app = createPlaygroundApp({
    store: backend.store,
    storeDescription: backend.description,
    model: { modelId: 'echo', apiKey: '', baseURL: undefined, kind: 'echo' },
    languageModel: createEchoModel({ chunkDelayMs: 0 }),
    defaultUserId: 'demo-user',
    logError: (_message, error) => logged.push(error),
  });
  logged.length = 0;
});
afterEach(async () => {
  await backend.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await app.request(path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

async function createChat(): Promise<ChatView> {
  const reply = await call('POST', '/api/chats', { title: 'Cycle' });
  expect(reply.status).toBe(201);
  const context = await call('PUT', `/api/chats/${reply.body.chat.id}/context`, {
    fragments: [{ type: 'role', text: LONG_ROLE }],
  });
  expect(context.status).toBe(200);
  return reply.body as ChatView;
}

async function ask(
  chatId: string,
  text: string,
  extra: Record<string, unknown> = {},
): Promise<Json[]> {
  const response = await app.request(`/api/chats/${chatId}/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, maxInputTokens: 4000, ...extra }),
  });
  expect(response.status).toBe(200);
  return (await response.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

const fresh = (chatId: string) =>
  new ContextEngine({
    store: backend.store,
    chatId,
    userId: 'demo-user',
    renderer: rendererFor('xml'),
    tokenizer: o200kTokenizer,
  });

/** A context long enough for a provider to cache (from 1,024 tokens). */
const LONG_ROLE = Array.from(
  { length: 200 },
  (_, index) => `Rule ${index}: explain graphs with a small example.`,
).join(' ');

describe('model replies through the chat cycle', () => {
  it('streams the reply, answers what changed, and saves it with its usage and cache prediction', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    const first = await ask(chatId, 'What is a node?');
    expect(
      first
        .filter((event) => event.type === 'delta')
        .map((event) => event.text)
        .join(''),
    ).toBe('You said: What is a node?');
    const done = first.at(-1);
    expect(done.type).toBe('done');
    // Two messages and their nodes, the moved head: not the whole chat.
    expect(done.change.added.map((each: { node: { role: string } }) => each.node.role)).toEqual([
      'user',
      'assistant',
    ]);
    expect(done.change.headMessageId).toBe(done.change.added[1].node.id);
    expect(done.change.added[1].node.parentId).toBe(done.change.added[0].node.id);
    expect(done.change).not.toHaveProperty('graph');

    await ask(chatId, 'And an edge?');
    // The whole chat as the page reads it on opening agrees with the changes it was told.
    const chat = await call('GET', `/api/chats/${chatId}`);
    expect(chat.body.messages.map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);

    // Usage: both calls recorded with the whole call's usage, and their cache prediction.
    const engine = fresh(chatId);
    const usage = await engine.usage({ scope: 'branch' });
    expect(usage.calls).toBe(2);
    expect(usage.replies.complete).toBe(2);
    expect(usage.cache.calls).toBe(2);
    // The echo model read the second call's shared prefix from its cache.
    expect(usage.cache.readTokens).toBeGreaterThan(0);

    // The cache view's figures: per call predicted and confirmed, totals as usage() reports them.
    const calls = await call('GET', `/api/chats/${chatId}/cache-calls`);
    expect(calls.status).toBe(200);
    expect(calls.body.calls).toHaveLength(2);
    expect(calls.body.totals).toEqual(JSON.parse(JSON.stringify(usage.cache)));
    const inspected = await engine.inspect({ modelId: 'echo' });
    expect(calls.body.totals).toEqual(JSON.parse(JSON.stringify(inspected.usage.branch.cache)));
    let read = 0;
    let input = 0;
    for (const each of calls.body.calls) {
      expect(each.predicted.inputTokens).toBeGreaterThan(0);
      expect(each.confirmed.inputTokens).toBeGreaterThan(0);
      expect(['agreed', 'read-less', 'read-more']).toContain(each.status);
      read += each.confirmed.readTokens;
      input += each.confirmed.inputTokens;
    }
    expect(read).toBe(usage.cache.readTokens);
    expect(input).toBe(usage.cache.inputTokens);
    expect(calls.body.calls[1].confirmed.readTokens).toBeGreaterThan(0);
    // The second call ran on the cycle's warm engine, which planned it against the first call:
    // a read was predicted, and the provider's report says how it went.
    expect(calls.body.calls[1].predicted.readTokens).toBeGreaterThan(0);
  });

  it("the next call's estimate follows the echo model's cache: nothing read below its minimum", async () => {
    // A short chat: the echo model (OpenAI's rules) caches nothing under 1,024 tokens.
    const created = await call('POST', '/api/chats', { title: 'Short' });
    const chatId = created.body.chat.id as string;
    await call('PUT', `/api/chats/${chatId}/context`, {
      fragments: [{ type: 'role', text: 'You answer briefly.' }],
    });
    await ask(chatId, 'What is a node?');
    // The call the Cache tab records on opening (for the model the page shows), then a reply.
    const recorded = await call('POST', `/api/chats/${chatId}/budgeted-call`, {
      maxInputTokens: 4000,
    });
    expect(recorded.status).toBe(200);
    expect(recorded.body.budget.cache.profile).toBe('openai');
    await ask(chatId, 'And an edge?');
    const calls = await call('GET', `/api/chats/${chatId}/cache-calls`);
    expect(calls.body.calls).toHaveLength(2);
    for (const each of calls.body.calls) expect(each.confirmed.readTokens).toBe(0);

    // Both windows ask for the page's budget and model: the estimate is the engine's prediction
    // with the echo model's profile, so it counts nothing from the cache, as every call confirmed,
    // even though the input repeats the recorded call's prefix.
    const snapshot = await call(
      'GET',
      `/api/chats/${chatId}/inspect?modelId=echo&maxInputTokens=4000`,
    );
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.budget.prefix.reusedTokens).toBeGreaterThan(0);
    expect(snapshot.body.budget.cache.profile).toBe('openai');
    expect(snapshot.body.nextCall).toMatchObject({
      profile: 'openai',
      cachedTokens: 0,
      uncachedTokens: snapshot.body.budget.totalTokens,
      cost: null,
    });
  });

  it('continues from the active branch head, and a sibling question shows as a version', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    const first = (await ask(chatId, 'First question')).at(-1).change;
    const second = (await ask(chatId, 'Second question')).at(-1).change;
    // An edit of the second question, as the page does it: a branch at the first reply, then ask.
    const rewound = await call('POST', `/api/chats/${chatId}/rewind`, {
      messageId: first.added[1].node.id,
    });
    expect(rewound.status).toBe(200);
    const edited = (await ask(chatId, 'Second question, edited')).at(-1).change;
    expect(edited.added[0].node.parentId).toBe(first.added[1].node.id);
    expect(edited.branch).toBe(rewound.body.view.branch);

    const chat = await call('GET', `/api/chats/${chatId}`);
    const positions = versionPositions(chat.body.graph.nodes);
    expect(positions.get(second.added[0].node.id)).toEqual({ index: 1, count: 2 });
    expect(positions.get(edited.added[0].node.id)).toEqual({ index: 2, count: 2 });
    // The graph's "2/2" and the inspector's versions switch (the engine's versions()) agree.
    for (const node of chat.body.graph.nodes) {
      const answer = await call('GET', `/api/chats/${chatId}/versions?nodeId=${node.id}`);
      const engineCount = answer.body.versions.length;
      const position = positions.get(node.id);
      expect(position?.count ?? 1).toBe(engineCount);
      if (position !== undefined) {
        expect(answer.body.versions[position.index - 1].nodeId).toBe(node.id);
      }
    }
  });

  it('refuses a bad budget before anything is written', async () => {
    const view = await createChat();
    for (const maxInputTokens of [0, 1.5, 'many', 20_000_000]) {
      const response = await app.request(`/api/chats/${view.chat.id}/reply`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Hi', maxInputTokens }),
      });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error.message).toContain('maxInputTokens');
    }
    const chat = await call('GET', `/api/chats/${view.chat.id}`);
    expect(chat.body.graph.nodes).toHaveLength(0);
  });

  it('refuses another user and an unknown chat before asking the model', async () => {
    const view = await createChat();
    const other = await app.request(`/api/chats/${view.chat.id}/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ctxgraph-user': 'mallory' },
      body: JSON.stringify({ text: 'Let me in' }),
    });
    expect([403, 404]).toContain(other.status);
    const unknown = await app.request('/api/chats/no-such-chat/reply', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello?' }),
    });
    expect(unknown.status).toBe(404);
    const chat = await call('GET', `/api/chats/${view.chat.id}`);
    expect(chat.body.graph.nodes).toHaveLength(0);
  });

  it("stops a reply on the page's request: the stream ends with the reply so far, saved as aborted", async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    // The echo model held after its fifth word until stopped, and a question of 60 words: the
    // stop lands mid-reply whatever the machine's speed.
    const slow = createPlaygroundApp({
      store: backend.store,
      storeDescription: backend.description,
      model: { modelId: 'echo', apiKey: '', baseURL: undefined, kind: 'echo' },
      languageModel: holdAfterWords(createEchoModel({ chunkDelayMs: 0 }), 5).model,
      defaultUserId: 'demo-user',
      logError: (_message, error) => logged.push(error),
    });
    const question = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
    const response = await slow.request(`/api/chats/${chatId}/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: question, stopId: 'stop-1' }),
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('word2 ')) {
      const { done, value } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    const stop = (stopId: unknown, user?: string) =>
      slow.request(`/api/chats/${chatId}/reply/stop`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(user === undefined ? {} : { 'x-ctxgraph-user': user }),
        },
        body: JSON.stringify({ stopId }),
      });
    // Another user's stop, or another id, stops nothing.
    expect(await (await stop('stop-1', 'someone-else')).json()).toEqual({ stopped: false });
    expect(await (await stop('stop-2')).json()).toEqual({ stopped: false });
    expect((await stop('')).status).toBe(400);
    expect(await (await stop('stop-1')).json()).toEqual({ stopped: true });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    const events = received
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const last = events.at(-1);
    expect(last.type).toBe('done');
    const streamed = events
      .filter((event) => event.type === 'delta')
      .map((event) => event.text)
      .join('');
    const reply = last.change.added.at(-1);
    expect(reply.node.role).toBe('assistant');
    expect(reply.node.text).toBe(streamed);
    expect(reply.node.outcome).toBe('aborted');
    // What the model streamed before the stop, and nothing after it.
    expect(streamed).toBe('You said: word0 word1 word2 ');
    // A fresh engine counts it as the integration records a stopped reply.
    const usage = await fresh(chatId).usage();
    expect(usage.replies).toEqual({ complete: 0, aborted: 1, error: 0, interrupted: 0 });
    // Once ended, the id stops nothing.
    expect(await (await stop('stop-1')).json()).toEqual({ stopped: false });
    expect(logged).toEqual([]);
  });
});
