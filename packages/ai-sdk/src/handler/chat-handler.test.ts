import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { getRequestListener } from '@hono/node-server';
import { simulateReadableStream, stepCountIs, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import {
  scriptedModel,
  scriptedTools,
  TestChat,
  textOf,
} from '../cycle/__fixtures__/cycle-test-kit';
import { createChatCycle } from '../cycle/chat-cycle';
import { createChatHandler } from './chat-handler';

// The route handler mounted the ways apps mount it: called as it is (a Worker's `fetch` is this),
// in Hono, behind a plain Node HTTP server, and as a Next.js App Router route (its signature:
// `(request, { params })`). Each mount is driven by the AI SDK's own client (`AbstractChat`, what
// `useChat` runs) and by plain requests for the reads, the stop, the events and bad input.

const USER = 'alice';

function handlerOn(store: InMemoryContextStore) {
  const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
  const model = scriptedModel();
  return createChatHandler({
    cycle,
    // The app's sign-in: here a header; nobody without it.
    userId: (request) => request.headers.get('x-user'),
    turn: () => ({ context: (engine) => engine.set(role('You are a test.')) }),
    reply: (turn) =>
      streamText({
        model,
        system: turn.system,
        messages: turn.messages,
        tools: scriptedTools,
        stopWhen: stepCountIs(3),
        abortSignal: turn.abortSignal,
      }),
    onError: () => {},
  });
}

type Fetch = (request: Request) => Promise<Response>;

/** A Next.js App Router route handler: `(request, { params })`, one export per method. */
type NextRouteHandler = (
  request: Request,
  context: { params: Promise<{ path?: string[] }> },
) => Promise<Response>;

const servers: Server[] = [];
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
});

const mounts: [string, () => Promise<Fetch>][] = [
  ['called as it is (a Worker’s fetch)', async () => handlerOn(new InMemoryContextStore())],
  [
    'in Hono',
    async () => {
      const handler = handlerOn(new InMemoryContextStore());
      const app = new Hono();
      app.all('/api/chat', (c) => handler(c.req.raw));
      app.all('/api/chat/*', (c) => handler(c.req.raw));
      return async (request) => app.fetch(request);
    },
  ],
  [
    'behind a Node HTTP server',
    async () => {
      const server = createServer(getRequestListener(handlerOn(new InMemoryContextStore())));
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      return (request) => {
        const url = new URL(request.url);
        return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
          method: request.method,
          headers: request.headers,
          ...(request.body === null ? {} : { body: request.body, duplex: 'half' }),
          signal: request.signal,
        } as RequestInit);
      };
    },
  ],
  [
    'as a Next.js route (app/api/chat/[[...path]]/route.ts)',
    async () => {
      const handler = handlerOn(new InMemoryContextStore());
      const route: Record<'GET' | 'POST', NextRouteHandler> = { GET: handler, POST: handler };
      return (request) => {
        const path = new URL(request.url).pathname.split('/').slice(3).filter(Boolean);
        const method = request.method as 'GET' | 'POST';
        const exported = route[method];
        if (exported === undefined) return Promise.resolve(new Response(null, { status: 405 }));
        return exported(request, { params: Promise.resolve(path.length > 0 ? { path } : {}) });
      };
    },
  ],
];

const call = (fetcher: Fetch, path: string, init: RequestInit & { user?: string | null } = {}) => {
  const { user = USER, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (user !== null) headers.set('x-user', user);
  return fetcher(new Request(`http://app.test${path}`, { ...rest, headers }));
};

async function json(
  response: Response,
): Promise<{ status: number; body: Record<string, unknown> }> {
  expect(response.headers.get('content-type')).toContain('application/json');
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.each(mounts)('the chat handler %s', (_name, mount) => {
  it('serves a turn to the AI SDK client, then its reads, resume, stop and events', async () => {
    const fetcher = await mount();
    const chat = new TestChat('chat-1', {
      fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        request.headers.set('x-user', USER);
        return fetcher(request);
      }) as typeof fetch,
    });
    await chat.sendMessage({ text: 'Hello there' });
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOf(chat.messages[1])).toBe('You said: Hello there');

    const read = await json(await call(fetcher, '/api/chat/chat-1/messages'));
    expect(read.status).toBe(200);
    const stored = read.body.messages as UIMessage[];
    expect(stored.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
    expect(read.body.outcomes).toEqual({});
    const userId = stored[0]?.id as string;

    const versions = await json(await call(fetcher, `/api/chat/chat-1/versions/${userId}`));
    expect(versions.status).toBe(200);
    const [only] = versions.body.versions as { nodeId: string; leafNodeId: string }[];
    expect(only).toMatchObject({ nodeId: userId });
    // A version's conversation, by its leaf node.
    const opened = await json(
      await call(
        fetcher,
        `/api/chat/chat-1/messages?node=${encodeURIComponent(only?.leafNodeId ?? '')}`,
      ),
    );
    expect((opened.body.messages as UIMessage[]).map((message) => message.id)).toEqual(
      stored.map((message) => message.id),
    );
    const toLeaf = await json(await call(fetcher, `/api/chat/chat-1/messages?leaf=${userId}`));
    expect((toLeaf.body.messages as UIMessage[]).map((message) => message.id)).toEqual([userId]);

    // Nothing is live: resume and stop answer 204.
    expect((await call(fetcher, '/api/chat/chat-1/stream')).status).toBe(204);
    expect((await call(fetcher, '/api/chat/chat-1/stop', { method: 'POST' })).status).toBe(204);

    // Events: the chat's state at once.
    const controller = new AbortController();
    const events = await call(fetcher, '/api/chat/chat-1/events', { signal: controller.signal });
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    const data = JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n\n'))) as {
      live: string | null;
    };
    expect(data.live).toBeNull();
  });

  it('answers bad input 400, unknown chats 404, misses 404 and wrong methods 405, as JSON, writing nothing', async () => {
    const fetcher = await mount();
    const cases: [string, RequestInit & { user?: string | null }, number][] = [
      ['/api/chat', { method: 'POST', body: 'not json' }, 400],
      ['/api/chat', { method: 'POST', body: '{"id":"x","messages":"no"}' }, 400],
      ['/api/chat/%ZZ/messages', {}, 400],
      [`/api/chat/${'x'.repeat(600)}/messages`, {}, 400],
      ['/api/chat/a%00b/messages', {}, 400],
      ['/api/chat/unknown/messages', {}, 404],
      ['/api/chat/unknown/messages?node=n', {}, 404],
      ['/api/chat/unknown/messages?leaf=a&node=b', {}, 400],
      ['/api/chat/unknown/versions/m', {}, 404],
      ['/api/chat/unknown/stop', { method: 'POST', body: '{"other":1}' }, 400],
      ['/api/chat/unknown/stop', { method: 'POST' }, 404],
      ['/api/chat/unknown/events', {}, 404],
      ['/api/chat/unknown/nothing', {}, 404],
      ['/api/chat/unknown/messages', { method: 'POST', body: '{}' }, 405],
      ['/api/chat', { method: 'GET' }, 405],
      ['/api/chat/unknown/messages', { user: null }, 401],
      ['/api/chat', { method: 'POST', body: '{}', user: null }, 401],
    ];
    for (const [path, init, status] of cases) {
      const response = await call(fetcher, path, init);
      expect([path, response.status]).toEqual([path, status]);
      const answer = await json(response);
      expect(typeof answer.body.error).toBe('string');
    }
    // None of them created a chat.
    expect((await call(fetcher, '/api/chat/unknown/messages')).status).toBe(404);
    expect((await call(fetcher, '/api/chat/x/messages')).status).toBe(404);
  });

  it('keeps each user to their own chats: another user’s chat is unknown', async () => {
    const fetcher = await mount();
    const body = JSON.stringify({
      id: 'private',
      trigger: 'submit-message',
      messages: [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: 'Mine' }] }],
    });
    const turn = await call(fetcher, '/api/chat', { method: 'POST', body });
    expect(turn.status).toBe(200);
    await turn.text();
    expect((await call(fetcher, '/api/chat/private/messages')).status).toBe(200);
    for (const path of ['messages', 'versions/q1', 'events']) {
      const response = await call(fetcher, `/api/chat/private/${path}`, { user: 'mallory' });
      expect([path, response.status]).toEqual([path, 404]);
    }
    expect(
      (await call(fetcher, '/api/chat/private/stop', { method: 'POST', user: 'mallory' })).status,
    ).toBe(404);
    expect((await call(fetcher, '/api/chat/private/stream', { user: 'mallory' })).status).toBe(204);
  });
});

describe('the chat handler places a last-message body after the node it names', () => {
  const ask = (id: string, text: string): UIMessage => ({
    id,
    role: 'user',
    parts: [{ type: 'text', text }],
  });
  const post = (fetcher: Fetch, body: unknown) =>
    call(fetcher, '/api/chat', { method: 'POST', body: JSON.stringify(body) });
  const read = async (fetcher: Fetch, query = '') =>
    (await json(await call(fetcher, `/api/chat/tabs/messages${query}`))).body as {
      messages: UIMessage[];
      nodeIds: Record<string, string>;
    };
  const parentOf = async (store: InMemoryContextStore, nodeId: string) =>
    (await store.getMessage({ chatId: 'tabs', messageId: nodeId }))?.parentId;

  it('two tabs: B’s question follows the reply B shows, not A’s unanswered question', async () => {
    const store = new InMemoryContextStore();
    const fetcher = handlerOn(store);
    const first = await post(fetcher, { id: 'tabs', messages: [ask('q1', 'Hello')] });
    expect(first.status).toBe(200);
    await first.text();
    const shown = await read(fetcher);
    const reply = shown.messages[1]?.id as string;
    const after = shown.nodeIds[reply] as string;
    // Tab A asks; its reply streams and is not done.
    const tabA = await post(fetcher, {
      id: 'tabs',
      message: ask('qa', 'hang after a word'),
      trigger: 'submit-message',
      after,
    });
    expect(tabA.status).toBe(200);
    // Tab B, still showing the first reply, asks after it.
    const tabB = await post(fetcher, {
      id: 'tabs',
      message: ask('qb', 'From tab B'),
      trigger: 'submit-message',
      after,
    });
    expect(tabB.status).toBe(200);
    await tabB.text();
    const b = await read(fetcher, '?leaf=qb');
    expect(b.messages.map((message) => message.id)).toEqual(['q1', reply, 'qb']);
    expect(await parentOf(store, b.nodeIds.qb as string)).toBe(after);
    const a = await read(fetcher, '?leaf=qa');
    expect(await parentOf(store, a.nodeIds.qa as string)).toBe(after);
    // Both questions are versions of the message after the first reply.
    const path = (await json(await call(fetcher, '/api/chat/tabs/messages?leaf=qb'))).body as {
      versions: Record<string, { index: number; nodes: { nodeId: string }[] }>;
    };
    expect(path.versions.qb?.nodes.map((node) => node.nodeId)).toEqual([
      a.nodeIds.qa,
      b.nodeIds.qb,
    ]);
    // A body without `after` continues after the chat's newest message, as before.
    const stop = await call(fetcher, '/api/chat/tabs/stop', { method: 'POST' });
    expect(stop.status).toBe(200);
    await tabA.text();
    const plain = await post(fetcher, { id: 'tabs', message: ask('qc', 'No after') });
    await plain.text();
    const c = await read(fetcher, '?leaf=qc');
    expect(c.messages.map((message) => message.id).slice(0, 4)).toEqual([
      'q1',
      reply,
      'qa',
      expect.any(String),
    ]);
    // `after: null`: a new first message (a root).
    const root = await post(fetcher, { id: 'tabs', message: ask('qr', 'Anew'), after: null });
    await root.text();
    const r = await read(fetcher, '?leaf=qr');
    expect(r.messages.map((message) => message.id)).toEqual(['qr']);
    expect(await parentOf(store, r.nodeIds.qr as string)).toBeNull();
  });

  it('a regenerate on an older version of the question regenerates there, by its after', async () => {
    const store = new InMemoryContextStore();
    const fetcher = handlerOn(store);
    const hello = ask('q1', 'Hello');
    await (await post(fetcher, { id: 'tabs', messages: [hello] })).text();
    const firstReply = (await read(fetcher)).messages[1]?.id as string;
    // The question edited (a new version, with its own reply).
    await (
      await post(fetcher, { id: 'tabs', message: ask('q1', 'Hello again'), after: null })
    ).text();
    // The page shows the first version and regenerates its reply.
    const regenerate = await post(fetcher, {
      id: 'tabs',
      message: hello,
      trigger: 'regenerate-message',
      messageId: firstReply,
      after: null,
    });
    expect(regenerate.status).toBe(200);
    await regenerate.text();
    const path = (await json(await call(fetcher, '/api/chat/tabs/messages'))).body as {
      messages: UIMessage[];
      nodeIds: Record<string, string>;
      versions: Record<string, { index: number; nodes: { nodeId: string }[] }>;
    };
    // The new reply follows the first version (node q1): still two versions of the question.
    expect(path.messages.map((message) => textOf(message))).toEqual(['Hello', 'You said: Hello']);
    expect(path.nodeIds.q1).toBe('q1');
    expect(path.versions.q1?.nodes).toHaveLength(2);
    const reply = path.messages[1]?.id as string;
    expect(reply).not.toBe(firstReply);
    expect(path.versions[reply]?.nodes.map((node) => node.nodeId)).toEqual([firstReply, reply]);
  });

  it('refuses an unknown node (404), a bad after and after beside all the messages (400), writing nothing', async () => {
    const store = new InMemoryContextStore();
    const fetcher = handlerOn(store);
    await (await post(fetcher, { id: 'tabs', messages: [ask('q1', 'Hello')] })).text();
    const revision = (await store.getChat('tabs'))?.revision;
    const cases: [unknown, number, string][] = [
      [{ id: 'tabs', message: ask('qx', 'x'), after: 'no-such-node' }, 404, 'no-such-node'],
      [{ id: 'fresh-chat', message: ask('qx', 'x'), after: 'no-such-node' }, 404, 'no-such-node'],
      [{ id: 'tabs', message: ask('qx', 'x'), after: 42 }, 400, 'after'],
      [{ id: 'tabs', message: ask('qx', 'x'), after: { node: 'q1' } }, 400, 'after'],
      [{ id: 'tabs', message: ask('qx', 'x'), after: 'a\u0000b' }, 400, 'after'],
      [{ id: 'tabs', messages: [ask('q1', 'Hello'), ask('qx', 'x')], after: 'q1' }, 400, 'after'],
    ];
    for (const [body, status, named] of cases) {
      const answer = await json(await post(fetcher, body));
      expect([JSON.stringify(body), answer.status]).toEqual([JSON.stringify(body), status]);
      expect(String(answer.body.error)).toContain(named);
    }
    expect((await store.getChat('tabs'))?.revision).toBe(revision);
    expect(await store.getChat('fresh-chat')).toBeNull();
    expect(await store.findMessageNodes({ chatId: 'tabs', messageId: 'qx', limit: 10 })).toEqual(
      [],
    );
  });
});

describe('the chat handler’s context route', () => {
  /** A model priced in the built-in table, answering one fixed reply with its usage. */
  const pricedModel = () =>
    new MockLanguageModelV3({
      modelId: 'gpt-4o-mini',
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'A fairly short answer to the question.' },
            { type: 'text-end', id: 't' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: undefined },
              usage: {
                inputTokens: {
                  total: 1200,
                  noCache: 1200,
                  cacheRead: undefined,
                  cacheWrite: undefined,
                },
                outputTokens: { total: 40, text: 40, reasoning: undefined },
              },
            },
          ],
        }),
      }),
    });

  const mount = (store: InMemoryContextStore) => {
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const model = pricedModel();
    return createChatHandler({
      cycle,
      userId: (request) => request.headers.get('x-user'),
      // The app's budget, here from a header (a user who picks it), else none.
      turn: ({ request }) => {
        const window = request.headers.get('x-budget');
        return {
          context: (engine) => engine.set(role('You are a careful assistant for the tests.')),
          ...(window === null ? {} : { budget: { maxInputTokens: Number(window) } }),
        };
      },
      modelId: 'gpt-4o-mini',
      reply: (turn) =>
        streamText({
          model,
          system: turn.system,
          messages: turn.messages,
          abortSignal: turn.abortSignal,
        }),
      onError: () => {},
    });
  };
  type Gauge = {
    tokens: number;
    maxInputTokens: number | null;
    exceeded: boolean;
    tokenizer: string;
    usage: { calls: number; inputTokens: number; outputTokens: number; cost: number | null };
    nextCall: { profile: string; cachedTokens: number; cost: number | null } | null;
  };
  const gauge = async (fetcher: Fetch, query = '', headers: Record<string, string> = {}) => {
    const answer = await json(await call(fetcher, `/api/chat/g/context${query}`, { headers }));
    expect(answer.status).toBe(200);
    return answer.body as unknown as Gauge;
  };

  it('answers the tokens the next call would send, the window, the cost so far and the cache prediction', async () => {
    const store = new InMemoryContextStore();
    const fetcher = mount(store);
    await store.openChat({ chatId: 'g', userId: USER });
    const empty = await gauge(fetcher);
    // The system context alone, no call yet.
    expect(empty.tokens).toBeGreaterThan(0);
    expect(empty).toMatchObject({
      maxInputTokens: null,
      exceeded: false,
      nextCall: null,
      usage: { calls: 0, inputTokens: 0, outputTokens: 0, cost: null },
    });
    const turn = await call(fetcher, '/api/chat', {
      method: 'POST',
      body: JSON.stringify({
        id: 'g',
        messages: [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: 'A question.' }] }],
      }),
    });
    await turn.text();
    const after = await gauge(fetcher);
    expect(after.tokens).toBeGreaterThan(empty.tokens);
    expect(after.usage).toMatchObject({ calls: 1, inputTokens: 1200, outputTokens: 40 });
    // gpt-4o-mini at its built-in price: 1,200 input and 40 output tokens.
    expect(after.usage.cost).toBeCloseTo((1200 * 0.15 + 40 * 0.6) / 1_000_000, 12);
    // With a budget: its window, and the next call's cache prediction, priced.
    const budgeted = await gauge(fetcher, '', { 'x-budget': '4000' });
    expect(budgeted).toMatchObject({ maxInputTokens: 4000, exceeded: false });
    expect(budgeted.tokens).toBeGreaterThan(0);
    expect(budgeted.nextCall?.profile).toBe('openai');
    expect(typeof budgeted.nextCall?.cost).toBe('number');
    // A window the conversation does not fit.
    const tight = await gauge(fetcher, '', { 'x-budget': '3' });
    expect(tight).toMatchObject({ maxInputTokens: 3, exceeded: true, nextCall: null });
    // Of a node: the path to the first message only.
    const first = await gauge(fetcher, '?node=q1');
    expect(first.tokens).toBeLessThan(after.tokens);
    expect(first.tokens).toBeGreaterThan(empty.tokens);
  });

  it('answers 404 for an unknown chat, another user’s chat and an unknown node, 405 for a POST', async () => {
    const store = new InMemoryContextStore();
    const fetcher = mount(store);
    await store.openChat({ chatId: 'g', userId: USER });
    expect((await call(fetcher, '/api/chat/nope/context')).status).toBe(404);
    expect((await call(fetcher, '/api/chat/g/context', { user: 'mallory' })).status).toBe(404);
    expect((await call(fetcher, '/api/chat/g/context?node=missing')).status).toBe(404);
    const post = await call(fetcher, '/api/chat/g/context', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect(await store.getChat('nope')).toBeNull();
  });
});

describe('the chat handler’s base path', () => {
  it('serves the routes under the base path it is given, and nothing outside it', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const handler = createChatHandler({
      cycle,
      basePath: '/v1/conversations/',
      userId: () => USER,
      reply: () => {
        throw new Error('no turn in this test');
      },
      onError: () => {},
    });
    const miss = await json(await handler(new Request('http://app.test/api/chat/c/messages')));
    expect(miss.status).toBe(404);
    expect(miss.body.error).toContain('/api/chat/c/messages');
    expect((await handler(new Request('http://app.test/v1/conversations/c/messages'))).status).toBe(
      404,
    );
    await store.openChat({ chatId: 'c', userId: USER });
    const read = await json(
      await handler(new Request('http://app.test/v1/conversations/c/messages')),
    );
    expect(read).toEqual({
      status: 200,
      body: { messages: [], outcomes: {}, retries: {}, nodeIds: {}, versions: {} },
    });
  });

  it('answers an error of the app’s own code 500 without its message, and tells onError', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const seen: unknown[] = [];
    const handler = createChatHandler({
      cycle,
      userId: () => {
        throw new Error('session store down: secret detail');
      },
      reply: () => {
        throw new Error('unused');
      },
      onError: (error) => seen.push(error),
    });
    const answer = await json(await handler(new Request('http://app.test/api/chat/c/messages')));
    expect(answer.status).toBe(500);
    expect(String(answer.body.error)).not.toContain('secret');
    expect(seen).toHaveLength(1);
  });
});
