import { chatErrorResponse, createChatCycle, readChatBody } from '@ctxgraph/ai-sdk';
import { usageOf } from '@ctxgraph/engine';
import { assertIdentifier, type ContextStore, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { serveStatic } from '@hono/node-server/serve-static';
import { type LanguageModel, stepCountIs, streamText } from 'ai';
import { Hono } from 'hono';
import { readStopRequest } from './stop-request';
import { type ChatUIMessage, chatTools, messageMetadataSchema } from './tools';

/** Options of {@link createChatApp}. */
export interface ChatAppOptions {
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
  /** Serve the built client from this folder. */
  clientDirectory?: string;
  /** The user every request acts as (the app has no sign-in). @default 'chat-app-user' */
  userId?: string;
  /** Told how long ctxgraph's parts of a turn took (the benchmark's figures). */
  onTiming?: (entry: { phase: 'begin' | 'save'; ms: number }) => void;
}

/** The outcome of each stopped or interrupted reply on the path to a node, by message id. */
async function outcomesTo(
  store: ContextStore,
  chatId: string,
  nodeId: string,
): Promise<Record<string, 'aborted' | 'interrupted'>> {
  const outcomes: Record<string, 'aborted' | 'interrupted'> = Object.create(null);
  const { nodes } = await store.getChain({ chatId, headMessageId: nodeId });
  for (const node of nodes) {
    const outcome = usageOf(node)?.outcome;
    if (outcome === 'aborted' || outcome === 'interrupted') outcomes[node.message.id] = outcome;
  }
  return { ...outcomes };
}

/**
 * The reference chat app's HTTP API (see the README for the contract): `POST /api/chat`,
 * `POST /api/chat/:id/stop`, `GET /api/chat/:id/messages?leaf=`, `GET /api/chat/:id/stream`,
 * `GET /api/chat/:id/events`, `GET /api/chat/:id/versions/:messageId`, `DELETE /api/chat/:id`.
 * Every route works
 * whichever process of the app a request reaches: a reply's stream, its stop and the chat's
 * changes live in the store the processes share.
 */
export function createChatApp(options: ChatAppOptions): Hono {
  const userId = options.userId ?? 'chat-app-user';
  const cycle = createChatCycle<ChatUIMessage>({
    store: options.store,
    engine: { renderer: new XmlRenderer() },
    schemas: { metadataSchema: messageMetadataSchema, tools: chatTools },
    ...(options.live === undefined ? {} : { live: options.live }),
    onSaveError: (error) => console.error(error),
    onReplySaved: (event) => options.onTiming?.({ phase: 'save', ms: event.saveMs }),
  });
  const app = new Hono();

  app.onError((error, c) => {
    const answer = chatErrorResponse(error);
    if (answer) return answer;
    console.error(error);
    return c.json({ error: error instanceof Error ? error.message : String(error) }, 500);
  });

  // Every answer is JSON, a miss too (an unknown path, or a method a path does not take).
  app.notFound((c) =>
    c.json({ error: `Not found: ${c.req.method} ${c.req.path} is no route of this app.` }, 404),
  );

  app.post('/api/chat', async (c) => {
    const body = await readChatBody(c.req.raw);
    const started = performance.now();
    // No request signal: a client that goes away (a reload, a closed tab) does not stop the
    // reply, which runs to its end, is saved whole and can be resumed meanwhile. A stop is a
    // request of its own (POST /api/chat/:id/stop).
    const turn = await cycle.begin(body, {
      userId,
      context: (engine) => {
        engine.set(
          role('You are the ctxgraph reference chat assistant.'),
          hint('Answer briefly. Use getWeather for questions about the weather.'),
        );
      },
    });
    options.onTiming?.({ phase: 'begin', ms: performance.now() - started });
    const result = streamText({
      model: options.model,
      system: turn.system,
      messages: turn.messages,
      tools: chatTools,
      stopWhen: stepCountIs(5),
      abortSignal: turn.abortSignal,
    });
    return turn.respond(result, {
      modelId: typeof options.model === 'string' ? options.model : options.model.modelId,
      onError: (error) => (error instanceof Error ? error.message : String(error)),
    });
  });

  app.get('/api/chat/:id/messages', async (c) => {
    const leaf = c.req.query('leaf');
    const node = c.req.query('node');
    const chatId = c.req.param('id');
    if (node !== undefined && node !== '') {
      // A version's conversation (the versions answer names each one's leafNodeId).
      const messages = await cycle.openVersion(chatId, node, { userId });
      return c.json({ messages, outcomes: await outcomesTo(options.store, chatId, node) });
    }
    return c.json(
      await cycle.conversation(chatId, {
        userId,
        ...(leaf === undefined || leaf === '' ? {} : { leaf }),
      }),
    );
  });

  app.get('/api/chat/:id/versions/:messageId', async (c) => {
    const versions = await cycle.versions(c.req.param('id'), c.req.param('messageId'), { userId });
    return c.json({ versions });
  });

  app.get('/api/chat/:id/stream', (c) =>
    cycle.resume(c.req.param('id'), { userId, signal: c.req.raw.signal }),
  );

  app.post('/api/chat/:id/stop', async (c) => {
    const request = await readStopRequest(c.req.raw);
    const stopped = await cycle.stop(c.req.param('id'), { userId, ...request });
    return stopped === null ? c.body(null, 204) : c.json(stopped);
  });

  app.get('/api/chat/:id/events', (c) =>
    cycle.events(c.req.param('id'), { userId, signal: c.req.raw.signal }),
  );

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

  if (options.clientDirectory) {
    app.use('/*', serveStatic({ root: options.clientDirectory }));
  }
  return app;
}
