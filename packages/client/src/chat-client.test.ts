import { describe, expect, it } from 'vitest';
import { createTestChatServer } from './__fixtures__/chat-server';
import { serverSupport } from './__fixtures__/server-support';
import { ChatClientError, createChatClient } from './chat-client';
import { chatRoutes } from './chat-routes';
import { followChatEvents } from './follow-chat-events';
import type { ChatEvent } from './saved-chat';

const support = await serverSupport();

/** Posts a turn (the last-message body) and reads its reply stream to the end. */
async function turn(
  fetcher: ReturnType<typeof createTestChatServer>['fetch'],
  chatId: string,
  id: string,
  text: string,
  after?: string | null,
): Promise<void> {
  const response = await fetcher('/api/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: chatId,
      message: { id, role: 'user', parts: [{ type: 'text', text }] },
      trigger: 'submit-message',
      ...(after === undefined ? {} : { after }),
    }),
  });
  expect(response.status).toBe(200);
  await response.text();
}

describe('chatRoutes', () => {
  it('builds every route under the base path, ids encoded', () => {
    const routes = chatRoutes('/api/chat/');
    expect(routes.turn).toBe('/api/chat');
    expect(routes.messages('a/b')).toBe('/api/chat/a%2Fb/messages');
    expect(routes.messages('c', { leaf: 'm 1' })).toBe('/api/chat/c/messages?leaf=m%201');
    expect(routes.messages('c', { node: 'n&1' })).toBe('/api/chat/c/messages?node=n%261');
    expect(routes.stream('c')).toBe('/api/chat/c/stream');
    expect(routes.stop('c')).toBe('/api/chat/c/stop');
    expect(routes.events('c')).toBe('/api/chat/c/events');
    expect(routes.context('c')).toBe('/api/chat/c/context');
    expect(chatRoutes().turn).toBe('/api/chat');
    expect(chatRoutes('https://x.test/chat').stream('c')).toBe('https://x.test/chat/c/stream');
  });

  it('refuses an empty chat id and a read to both a leaf and a node', () => {
    const routes = chatRoutes();
    expect(() => routes.stream('')).toThrow(/needs a chat id/);
    expect(() => routes.messages('c', { leaf: 'a', node: 'b' })).toThrow(/not both/);
  });
});

describe('createChatClient against the chat handler', () => {
  it('reads an unknown chat as new (null), then its saved path once a turn created it', async () => {
    const server = createTestChatServer();
    const client = createChatClient({ fetch: server.fetch });
    expect(await client.loadChat('c-new')).toBeNull();
    await turn(server.fetch, 'c-new', 'q1', 'Hello');
    const saved = await client.loadChat('c-new');
    expect(saved?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(saved?.messages[0]?.id).toBe('q1');
    expect(saved?.outcomes).toEqual({});
    const toQuestion = await client.loadChat('c-new', { leaf: 'q1' });
    expect(toQuestion?.messages.map((message) => message.id)).toEqual(['q1']);
  });

  it('sends its headers with every request and says what failed', async () => {
    const server = createTestChatServer();
    const seen: string[] = [];
    const client = createChatClient({
      headers: { 'x-trace': 'on' },
      fetch: (input, init) => {
        seen.push(new Headers(init?.headers).get('x-trace') ?? 'missing');
        return server.fetch(input, init);
      },
    });
    await expect(client.stop('nobody')).rejects.toThrow(
      /^Stopping chat "nobody" failed: the server answered 404/,
    );
    const failed = await client.loadChat('x'.repeat(600)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ChatClientError);
    expect((failed as ChatClientError).status).toBe(400);
    expect((failed as Error).message).toMatch(
      /^Reading chat "x+" failed: the server answered 400 \(.+\)\.$/,
    );
    expect(seen.every((value) => value === 'on')).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(2);
  });

  it('stops nothing (null) when no reply is live, and a live reply once saved', async () => {
    const server = createTestChatServer();
    const client = createChatClient({ fetch: server.fetch });
    await turn(server.fetch, 'c-stop', 'q1', 'Hello');
    expect(await client.stop('c-stop')).toBeNull();
    expect(await client.liveReply('c-stop')).toBeNull();

    // A held reply: the turn's stream stays open until the stop.
    const response = server.fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'c-stop',
        message: { id: 'q2', role: 'user', parts: [{ type: 'text', text: 'hold on' }] },
        trigger: 'submit-message',
      }),
    });
    // Its first word has reached the client (so the stop saves a reply with a word in it).
    const reader = (await response).body?.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = '';
    while (!streamed.includes('Holding')) {
      const { value, done } = (await reader?.read()) ?? { done: true };
      if (done) break;
      streamed += value;
    }
    const live = await client.liveReply('c-stop');
    expect(live?.follows).toBe('q2');
    const stopped = await client.stop('c-stop', live?.messageId);
    expect(stopped).toBe(live?.messageId);
    while (!(await reader?.read())?.done) {
      // The rest of the stopped stream.
    }
    const saved = await client.loadChat('c-stop');
    expect(saved?.messages.at(-1)?.id).toBe(stopped);
    expect(saved?.outcomes[stopped as string]).toBe('aborted');
  });

  it.skipIf(!support.nodeIds)(
    'reads node ids and versions with the path, and opens another version by its leaf node',
    async () => {
      const server = createTestChatServer();
      const client = createChatClient({ fetch: server.fetch });
      await turn(server.fetch, 'c-v', 'q1', 'First');
      const first = await client.loadChat('c-v');
      const q1Node = first?.nodeIds.q1 as string;
      expect(typeof q1Node).toBe('string');
      expect(first?.versions).toEqual({});
      // An edit of q1: the same message id, a second version.
      await turn(server.fetch, 'c-v', 'q1', 'First, edited');
      const edited = await client.loadChat('c-v');
      const versions = edited?.versions.q1;
      expect(versions?.nodes).toHaveLength(2);
      expect(versions?.index).toBe(1);
      const older = await client.openVersion('c-v', versions?.nodes[0]?.leafNodeId as string);
      expect(older.messages.map((message) => message.parts)).toEqual(
        first?.messages.map((message) => message.parts),
      );
      expect(older.versions.q1?.index).toBe(0);
      await expect(client.openVersion('c-v', 'no-such-node')).rejects.toThrow(/404/);
    },
  );
});

describe('followChatEvents', () => {
  it('waits for a chat that does not exist yet, then reads its events until aborted', async () => {
    const server = createTestChatServer();
    const events: ChatEvent[] = [];
    const controller = new AbortController();
    let ended = false;
    let wake: (() => void) | undefined;
    const follower = followChatEvents({
      url: chatRoutes().events('c-events'),
      fetch: server.fetch,
      signal: controller.signal,
      // Long waits: the test moves on by retryNow, never by a wait running out.
      retry: { initialMs: 600_000 },
      onEvent(event) {
        events.push(event);
        wake?.();
      },
      onEnd() {
        ended = true;
        wake?.();
      },
    });
    const until = (condition: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (condition()) resolve();
          else wake = check;
        };
        check();
      });
    await turn(server.fetch, 'c-events', 'q1', 'Hello');
    follower.retryNow();
    await until(() => events.length > 0);
    expect(events[0]).toMatchObject({ live: null, follows: null });
    const before = events.at(-1)?.version as number;
    await turn(server.fetch, 'c-events', 'q2', 'Again');
    await until(() => (events.at(-1)?.version ?? 0) > before && events.at(-1)?.live === null);
    controller.abort();
    await until(() => ended);
    expect(ended).toBe(true);
  });

  it('with retry: false, follows one connection and reports a failure that ended it', async () => {
    const errors: unknown[] = [];
    await new Promise<void>((resolve) => {
      followChatEvents({
        url: '/api/chat/c/events',
        fetch: async () => new Response('no', { status: 500 }),
        signal: new AbortController().signal,
        retry: false,
        onEvent: () => {},
        onEnd(error) {
          errors.push(error);
          resolve();
        },
      });
    });
    expect(String(errors[0])).toMatch(/events failed: \/api\/chat\/c\/events answered 500/);
  });
});
