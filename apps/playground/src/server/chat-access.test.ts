import { createChatCycle } from '@ctxgraph/ai-sdk';
import { user } from '@ctxgraph/codecs';
import type { ContextEngine } from '@ctxgraph/engine';
import { ChatNotFoundError, type ContextStore, OwnershipError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ChatAccess, chatAccess } from './chat-access';
import type { ChatView } from './chat-view';
import { createPlaygroundApp } from './playground-app';
import { rendererFor } from './renderers';
import { type CountingStore, countingStore } from './testing/counting-store';
import { startFakeOpenAI } from './testing/start-fake-openai';

/** Counts the loads and saves of the store's context lane (never reset between requests). */
interface LaneCounts {
  loads: number;
  saves: number;
}

function countLane(store: ContextStore, counts: LaneCounts): ContextStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...parameters: unknown[]) => {
        if (property === 'getContext') counts.loads += 1;
        if (property === 'saveContext') counts.saves += 1;
        return (value as (...parameters: unknown[]) => unknown).apply(target, parameters);
      };
    },
  });
}

/** A promise and the function that settles it, to hold a task or a model stream open. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

let counting: CountingStore;
let contexts: LaneCounts;

beforeEach(() => {
  contexts = { loads: 0, saves: 0 };
  counting = countingStore(countLane(new InMemoryContextStore(), contexts));
});

async function newChat(chatId: string, userId = 'alice'): Promise<void> {
  await counting.store.openChat({ chatId, userId });
}

/** The chat routes' access over a chat cycle, as the app makes it. */
function access(warmEngines?: number): ChatAccess {
  return chatAccess(
    createChatCycle({
      store: counting.store,
      engine: { renderer: rendererFor('xml'), tokenizer: o200kTokenizer },
      ...(warmEngines === undefined ? {} : { warmEngines }),
    }),
  );
}

describe('chatAccess (the chat cycle’s read)', () => {
  it('makes one engine per chat, even for simultaneous first uses, and keeps it warm', async () => {
    await newChat('chat-warm');
    counting.reset();
    const chats = access();
    const [first, second] = await Promise.all([
      chats.use('chat-warm', 'alice', async (engine) => engine),
      chats.use('chat-warm', 'alice', async (engine) => engine),
    ]);
    expect(first === second).toBe(true);
    expect(counting.calls.filter((call) => call === 'openChat')).toHaveLength(1);
    expect(contexts.loads).toBe(1);
    await chats.use('chat-warm', 'alice', (engine) => engine.resolve());
    counting.reset();
    await chats.use('chat-warm', 'alice', (engine) => engine.resolve());
    // Warm: the chat checked (one read of it) and the branch head; no openChat, getChain or
    // context load.
    expect(counting.calls).toEqual(['getChat', 'getHead']);
    expect(contexts.loads).toBe(1);
  });

  it('refuses a missing chat without creating it', async () => {
    const chats = access();
    await expect(chats.use('chat-missing', 'alice', async () => 'ran')).rejects.toSatisfy((error) =>
      ChatNotFoundError.isInstance(error),
    );
    expect(await counting.store.getChat('chat-missing')).toBeNull();
  });

  it('refuses another user before the task runs, with a warm engine or a cold one', async () => {
    await newChat('chat-owned');
    const chats = access();
    // Cold: the first use of the chat is the intruder's.
    let ran = 0;
    const intrude = () =>
      chats.use('chat-owned', 'mallory', async () => {
        ran += 1;
      });
    await expect(intrude()).rejects.toSatisfy((error) => OwnershipError.isInstance(error));
    await chats.use('chat-owned', 'alice', async (engine) => {
      engine.set(user('mine'));
      await engine.save();
    });
    // Warm: the kept engine is alice's and must not serve mallory.
    const refused = await intrude().catch((error: unknown) => error);
    expect(OwnershipError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toContain('mallory');
    expect(ran).toBe(0);
    const { messages } = await chats.use('chat-owned', 'alice', (engine) => engine.resolve());
    expect(messages.map((message) => message.role)).toEqual(['user']);
  });

  it('runs the tasks of one chat one at a time, in order, and other chats meanwhile', async () => {
    await newChat('chat-a');
    await newChat('chat-b');
    const chats = access();
    const events: string[] = [];
    const held = gate();
    const first = chats.use('chat-a', 'alice', async () => {
      events.push('a1 start');
      await held.promise;
      events.push('a1 end');
    });
    const second = chats.use('chat-a', 'alice', async () => {
      events.push('a2');
    });
    await chats.use('chat-b', 'alice', async () => {
      events.push('b');
    });
    expect(events).toEqual(['a1 start', 'b']);
    held.open();
    await Promise.all([first, second]);
    expect(events).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
  });

  it('drops the messages a failed save left pending, so the next request saves only its own', async () => {
    await newChat('chat-refused');
    const chats = access();
    counting.failNext('append', new Error('the disk is full'));
    await expect(
      chats.use('chat-refused', 'alice', async (engine) => {
        engine.set(user('refused'));
        await engine.save();
      }),
    ).rejects.toThrow('the disk is full');
    const snapshot = await chats.use('chat-refused', 'alice', (engine) => engine.inspect());
    expect(snapshot.fragments.pending).toEqual([]);
    const { messages } = await chats.use('chat-refused', 'alice', async (engine) => {
      engine.set(user('accepted'));
      await engine.save();
      return engine.resolve();
    });
    expect(messages.map((message) => message.parts)).toEqual([
      [{ type: 'text', text: 'accepted' }],
    ]);
  });

  it('drops the least recently used idle chat past its capacity, and reloads it on next use', async () => {
    for (const chatId of ['chat-1', 'chat-2', 'chat-3']) await newChat(chatId);
    const chats = access(2);
    const touch = (chatId: string) => chats.use(chatId, 'alice', async (engine) => engine);
    const firstEngine = await touch('chat-1');
    const secondEngine = await touch('chat-2');
    await touch('chat-1');
    await touch('chat-3');
    expect((await touch('chat-1')) === firstEngine).toBe(true);
    counting.reset();
    expect((await touch('chat-2')) === secondEngine).toBe(false);
    // A new engine: the chat checked, then opened and its context lane loaded.
    expect(counting.calls).toEqual(['getChat', 'openChat', 'getContext']);
  });

  it('a task under way keeps its engine, which then serves the chat’s next task', async () => {
    await newChat('chat-busy');
    await newChat('chat-other');
    const chats = access(1);
    const held = gate();
    let busyEngine: unknown;
    const busy = chats.use('chat-busy', 'alice', async (engine) => {
      busyEngine = engine;
      await held.promise;
    });
    await chats.use('chat-other', 'alice', async () => {});
    held.open();
    await busy;
    expect((await chats.use('chat-busy', 'alice', async (engine) => engine)) === busyEngine).toBe(
      true,
    );
  });

  it('makes tasks queued behind a delete find the chat gone', async () => {
    await newChat('chat-deleted');
    const chats = access();
    const held = gate();
    const deleting = chats.use('chat-deleted', 'alice', async () => {
      await held.promise;
      await counting.store.deleteChat('chat-deleted');
    });
    let ran = false;
    const queued = chats.use('chat-deleted', 'alice', async (engine: ContextEngine) => {
      ran = true;
      return engine.resolve();
    });
    held.open();
    await deleting;
    await expect(queued).rejects.toSatisfy((error) => ChatNotFoundError.isInstance(error));
    expect(ran).toBe(false);
    expect(await counting.store.getChat('chat-deleted')).toBeNull();
  });

  it('refuses a maxOpenChats that is not a whole number of chats', () => {
    for (const maxOpenChats of [-1, 1.5]) {
      expect(() =>
        createPlaygroundApp({
          store: counting.store,
          storeDescription: { kind: 'memory', location: 'in memory' },
          model: null,
          defaultUserId: 'alice',
          maxOpenChats,
        }),
      ).toThrow('warmEngines must be a whole number');
    }
  });
});

describe('the app keeps one warm engine per chat', () => {
  const context = [{ type: 'role', text: 'You are terse.' }];

  function build(options: { baseURL?: string } = {}): Hono {
    return createPlaygroundApp({
      store: counting.store,
      storeDescription: { kind: 'memory', location: 'in memory' },
      model:
        options.baseURL === undefined
          ? null
          : { modelId: 'fake-model', apiKey: 'test', baseURL: options.baseURL },
      defaultUserId: 'alice',
      logError: () => {},
    });
  }

  async function call(
    app: Hono,
    method: string,
    path: string,
    body?: unknown,
    userId = 'alice',
    // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  ): Promise<{ status: number; body: any }> {
    const response = await app.request(path, {
      method,
      headers: { 'content-type': 'application/json', 'x-ctxgraph-user': userId },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  async function chatWithHistory(app: Hono): Promise<string> {
    const created = await call(app, 'POST', '/api/chats', { title: 'Warm' });
    const chatId = (created.body as ChatView).chat.id;
    await call(app, 'PUT', `/api/chats/${chatId}/context`, { fragments: context });
    await call(app, 'POST', `/api/chats/${chatId}/messages`, { role: 'user', text: 'Hello' });
    return chatId;
  }

  it('serves a second view of a chat from the warm engine: the branch head and the graph', async () => {
    const app = build();
    const chatId = await chatWithHistory(app);
    const loads = contexts.loads;
    counting.reset();
    const view = await call(app, 'GET', `/api/chats/${chatId}`);
    expect(view.status).toBe(200);
    expect(view.body.messages).toHaveLength(1);
    expect(view.body.context).toEqual(context);
    expect(counting.calls).toEqual(['getChat', 'getHead', 'getGraph']);
    expect(contexts.loads).toBe(loads);
    // The same view from a cold app opens the chat and reads the chain and the context.
    counting.reset();
    const cold = await call(build(), 'GET', `/api/chats/${chatId}`);
    expect(cold.body).toEqual(view.body);
    expect(counting.calls).toEqual(
      expect.arrayContaining(['getChat', 'openChat', 'getHead', 'getChain', 'getGraph']),
    );
    expect(contexts.loads).toBe(loads + 1);
  });

  it('opens the chat once for PUT context and serves the new context warm', async () => {
    const app = build();
    const created = await call(app, 'POST', '/api/chats', {});
    const chatId = created.body.chat.id as string;
    counting.reset();
    const coldApp = build();
    const put = await call(coldApp, 'PUT', `/api/chats/${chatId}/context`, { fragments: context });
    expect(put.status).toBe(200);
    expect(put.body.context).toEqual(context);
    expect(counting.calls.filter((name) => name === 'getChat')).toHaveLength(1);
    expect(counting.calls.filter((name) => name === 'openChat')).toHaveLength(1);
    expect(contexts.saves).toBe(1);
    // Its engine is now warm and takes a new context in place: saved, never reloaded.
    const loads = contexts.loads;
    counting.reset();
    const replaced = [{ type: 'hint', text: 'Prefer tables.' }];
    await call(coldApp, 'PUT', `/api/chats/${chatId}/context`, { fragments: replaced });
    const view = await call(coldApp, 'GET', `/api/chats/${chatId}`);
    expect(view.body.context).toEqual(replaced);
    expect(view.body.prompts[0].prompt).toContain('Prefer tables.');
    expect(contexts.loads).toBe(loads);
    expect(counting.calls).toEqual([
      'getChat',
      'saveContext',
      'getHead',
      'getGraph',
      'getChat',
      'getHead',
      'getGraph',
    ]);
    // The first app's engine read the lane before those saves (like another server): a PUT there
    // still replaces the whole context, reading the new revision once and saving over it.
    const last = [{ type: 'hint', text: 'Last writer wins.' }];
    const put2 = await call(app, 'PUT', `/api/chats/${chatId}/context`, { fragments: last });
    expect(put2.status).toBe(200);
    expect(put2.body.context).toEqual(last);
    expect(contexts.loads).toBe(loads + 1);
    expect((await counting.store.getContext?.(chatId))?.fragments).toEqual(last);
  });

  it('refuses another user on a chat whose engine is warm, and still serves the owner', async () => {
    const app = build();
    const chatId = await chatWithHistory(app);
    for (const [method, path, body] of [
      ['GET', `/api/chats/${chatId}`, undefined],
      ['POST', `/api/chats/${chatId}/messages`, { role: 'user', text: 'intrusion' }],
      ['PUT', `/api/chats/${chatId}/context`, { fragments: [] }],
    ] as const) {
      const refused = await call(app, method, path, body, 'mallory');
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.error.name).toBe('OwnershipError');
    }
    const view = await call(app, 'GET', `/api/chats/${chatId}`);
    expect(view.body.messages).toHaveLength(1);
    expect(view.body.context).toEqual(context);
  });

  it('answers a refused save with an error and keeps nothing of it for the next request', async () => {
    const app = build();
    const chatId = await chatWithHistory(app);
    counting.failNext('append', new Error('the disk is full'));
    const refused = await call(app, 'POST', `/api/chats/${chatId}/messages`, {
      role: 'user',
      text: 'lost',
    });
    expect(refused.status).toBe(500);
    expect(refused.body.error.message).toContain('the disk is full');
    const inspect = await call(app, 'GET', `/api/chats/${chatId}/inspect`);
    expect(inspect.body.fragments.pending).toEqual([]);
    const next = await call(app, 'POST', `/api/chats/${chatId}/messages`, {
      role: 'assistant',
      text: 'Hi',
    });
    expect(next.status).toBe(200);
    expect(next.body.node.text).toBe('Hi');
    const after = await call(app, 'GET', `/api/chats/${chatId}`);
    expect(after.body.graph.nodes.map((node: { text: string }) => node.text)).toEqual([
      'Hello',
      'Hi',
    ]);
  });

  it('lets other requests on the chat through while the model streams its reply', async () => {
    const held = gate();
    const fake = await startFakeOpenAI(['Hel', 'lo'], false, held.promise);
    try {
      const app = build({ baseURL: fake.baseURL });
      const chatId = await chatWithHistory(app);
      const response = await app.request(`/api/chats/${chatId}/reply`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-ctxgraph-user': 'alice' },
        body: JSON.stringify({ text: 'Greet me' }),
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('\n')) text += (await reader.read()).value ?? '';
      expect(JSON.parse(text.split('\n')[0]!)).toEqual({ type: 'delta', text: 'Hel' });
      // The model is still streaming: the chat is not locked, and the user message is saved.
      const during = await call(app, 'GET', `/api/chats/${chatId}`);
      expect(during.status).toBe(200);
      expect(during.body.messages.map((message: { role: string }) => message.role)).toEqual([
        'user',
        'user',
      ]);
      held.open();
      for (;;) {
        const { done, value } = await reader.read();
        if (value) text += value;
        if (done) break;
      }
      const last = JSON.parse(text.trim().split('\n').at(-1)!);
      expect(last.type).toBe('done');
      // The answer is what changed (question and reply); the chat read whole agrees.
      expect(
        last.change.added.map((each: { message: { role: string } }) => each.message.role),
      ).toEqual(['user', 'assistant']);
      const after = await call(app, 'GET', `/api/chats/${chatId}`);
      expect(after.body.messages.map((message: { role: string }) => message.role)).toEqual([
        'user',
        'user',
        'assistant',
      ]);
    } finally {
      held.open();
      await fake.close();
    }
  });
});
