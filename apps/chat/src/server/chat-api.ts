import { chatErrorResponse, createChatCycle, createChatHandler } from '@ctxgraph/ai-sdk';
import { assertIdentifier, type ContextStore, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { type LanguageModel, stepCountIs, streamText } from 'ai';
import { Hono } from 'hono';
import { chatListAnswer, chatListRequest, searchAnswer, searchRequest } from './list-routes';
import { type ChatUIMessage, chatTools, messageMetadataSchema } from './tools';

// The app's HTTP API with no runtime of its own: the Node server (chat-app.ts, start-server.ts)
// and the Workers chat object (src/workers) run this same module.

/** Options of {@link createChatApi}. */
export interface ChatApiOptions {
  /**
   * Where chats live (SQLite or PostgreSQL in the app). Its live replies (the three bundled stores
   * have them) carry every reply's stream, stop and change events across processes.
   */
  store: ContextStore;
  /** The model that answers. */
  model: LanguageModel;
  /**
   * The cycle's live replies (`createChatCycle({ live })`): on by default with a store that has
   * them; `false` keeps each reply in its process only (the benchmark's baseline: no resume,
   * stop or events across processes).
   * @default on
   */
  live?: false | { leaseMs?: number; flushMs?: number };
  /** The user every request acts as (the app has no sign-in). @default 'chat-app-user' */
  userId?: string;
  /** Told how long ctxgraph's parts of a turn took (the benchmark's figures). */
  onTiming?: (entry: { phase: 'begin' | 'save'; ms: number }) => void;
}

/**
 * The reference chat app's HTTP API (see the README for the contract): `POST /api/chat`,
 * `POST /api/chat/:id/stop`, `GET /api/chat/:id/messages?leaf=`, `GET /api/chat/:id/stream`,
 * `GET /api/chat/:id/events`, `GET /api/chat/:id/versions/:messageId`, `DELETE /api/chat/:id`,
 * and the user's `GET /api/chats` and `GET /api/search?q=`. Every route works
 * whichever process of the app a request reaches: a reply's stream, its stop and the chat's
 * changes live in the store the processes share (on Workers, the chat's Durable Object).
 */
export function createChatApi(options: ChatApiOptions): Hono {
  const userId = options.userId ?? 'chat-app-user';
  const cycle = createChatCycle<ChatUIMessage>({
    store: options.store,
    engine: { renderer: new XmlRenderer() },
    schemas: { metadataSchema: messageMetadataSchema, tools: chatTools },
    ...(options.live === undefined ? {} : { live: options.live }),
    onSaveError: (error) => console.error(error),
    onReplySaved: (event) => {
      options.onTiming?.({ phase: 'save', ms: event.saveMs });
    },
  });
  // Every route of the chat contract, as the one web-standard handler @ctxgraph/ai-sdk builds.
  // No request signal reaches the turn: a client that goes away (a reload, a closed tab) does
  // not stop the reply, which runs to its end, is saved whole and can be resumed meanwhile. A
  // stop is a request of its own (POST /api/chat/:id/stop).
  // When each turn's begin started (the benchmark's "begin" figure: ctxgraph's part before the
  // model call).
  const beganAt = new WeakMap<Request, number>();
  const handler = createChatHandler<ChatUIMessage>({
    cycle,
    userId: () => userId,
    turn: ({ request }) => {
      beganAt.set(request, performance.now());
      return {
        context: (engine) => {
          engine.set(
            role('You are the ctxgraph reference chat assistant.'),
            hint('Answer briefly. Use getWeather for questions about the weather.'),
          );
        },
      };
    },
    reply: (turn, { request }) => {
      const began = beganAt.get(request);
      if (began !== undefined)
        options.onTiming?.({ phase: 'begin', ms: performance.now() - began });
      return streamText({
        model: options.model,
        system: turn.system,
        messages: turn.messages,
        tools: chatTools,
        stopWhen: stepCountIs(5),
        abortSignal: turn.abortSignal,
      });
    },
    respond: {
      modelId: typeof options.model === 'string' ? options.model : options.model.modelId,
      onError: (error) => (error instanceof Error ? error.message : String(error)),
    },
  });
  const app = new Hono();
  // The app's own routes (here one: DELETE /api/chat/:id) answer their typed errors as the
  // handler does: 400 malformed, 404 unknown, JSON.
  app.onError((error, c) => {
    const answer = chatErrorResponse(error);
    if (answer) return answer;
    console.error(error);
    return c.json({ error: 'Internal error: the server could not answer this request.' }, 500);
  });

  app.delete('/api/chat/:id', async (c) => {
    const chatId = c.req.param('id');
    // A malformed id is a 400 (ValidationError, through onError) before the store is asked.
    assertIdentifier('DELETE /api/chat/:id', 'id', chatId);
    const chat = await options.store.getChat(chatId);
    // Another user's chat answers as an unknown one does: its existence is not this user's to know.
    if (chat === null || chat.userId !== userId) {
      return c.json({ error: `No chat '${chatId}' for this user.` }, 404);
    }
    // A reply still being written would be saved into a chat that is gone: stop it first.
    const live = await options.store.getLiveState?.(chatId);
    if (live !== undefined && live.replies.length > 0) {
      return c.json(
        {
          error: `Chat '${chatId}' has a reply being written: stop it (POST /api/chat/${chatId}/stop), then delete.`,
        },
        409,
      );
    }
    // False when another process deleted it in between: the same 404.
    if (!(await options.store.deleteChat(chatId))) {
      return c.json({ error: `No chat '${chatId}' for this user.` }, 404);
    }
    return c.body(null, 204);
  });

  // The user's chats, most recently updated first (on Workers: the user's object answers).
  app.get('/api/chats', async (c) => {
    const page = await options.store.listChats(chatListRequest(new URL(c.req.url), userId));
    return c.json(chatListAnswer(page));
  });

  // Search over every chat of the user (on Workers: fanned out to the user's chat objects).
  app.get('/api/search', async (c) => {
    const request = searchRequest(new URL(c.req.url));
    if (options.store.searchMessages === undefined) {
      return c.json({ error: 'Search is not served by this store.' }, 501);
    }
    const page = await options.store.searchMessages({ userId, ...request });
    return c.json(searchAnswer(page));
  });

  // Any other method on the two: a 405 naming the one they take, as the chat routes answer.
  app.all('/api/chats', (c) =>
    c.json({ error: `Method ${c.req.method} not allowed here: use GET.` }, 405, { allow: 'GET' }),
  );
  app.all('/api/search', (c) =>
    c.json({ error: `Method ${c.req.method} not allowed here: use GET.` }, 405, { allow: 'GET' }),
  );

  // Every route of the chat contract: the handler (after the app's own routes above).
  app.all('/api/chat', (c) => handler(c.req.raw));
  app.all('/api/chat/*', (c) => handler(c.req.raw));

  // Every answer is JSON, a miss too (an unknown path, or a method a path does not take).
  app.notFound((c) =>
    c.json({ error: `Not found: ${c.req.method} ${c.req.path} is no route of this app.` }, 404),
  );

  return app;
}
