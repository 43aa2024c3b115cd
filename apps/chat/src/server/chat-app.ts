import {
  chatErrorResponse,
  createChatCycle,
  type ResumableStreams,
  readChatBody,
} from '@ctxgraph/ai-sdk';
import { type ContextStore, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { serveStatic } from '@hono/node-server/serve-static';
import { type LanguageModel, stepCountIs, streamText } from 'ai';
import { Hono } from 'hono';
import { type ChatUIMessage, chatTools, messageMetadataSchema } from './tools';

/** Options of {@link createChatApp}. */
export interface ChatAppOptions {
  /** Where chats live (SQLite in the app). */
  store: ContextStore;
  /** The model that answers. */
  model: LanguageModel;
  /** Resumable reply streams (in memory in the app). */
  streams?: ResumableStreams;
  /** Serve the built client from this folder. */
  clientDirectory?: string;
  /** The user every request acts as (the app has no sign-in). @default 'chat-app-user' */
  userId?: string;
  /** Told how long ctxgraph's parts of a turn took (the benchmark's figures). */
  onTiming?: (entry: { phase: 'begin' | 'save'; ms: number }) => void;
}

/**
 * The reference chat app's HTTP API (see the README for the contract):
 * `POST /api/chat`, `GET /api/chat/:id/messages?leaf=`, `GET /api/chat/:id/stream`,
 * `GET /api/chat/:id/versions/:messageId`.
 */
export function createChatApp(options: ChatAppOptions): Hono {
  const userId = options.userId ?? 'chat-app-user';
  const cycle = createChatCycle<ChatUIMessage>({
    store: options.store,
    engine: { renderer: new XmlRenderer() },
    schemas: { metadataSchema: messageMetadataSchema, tools: chatTools },
    ...(options.streams ? { streams: options.streams } : {}),
    // The page stops a reply by closing its request (its Stop button, a closed tab), as the app's
    // contract says; the stop route that works from any process comes with the page that uses it.
    stopOnDisconnect: true,
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
    const turn = await cycle.begin(body, {
      userId,
      signal: c.req.raw.signal,
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
    if (node !== undefined && node !== '') {
      // A version's conversation (the versions answer names each one's leafNodeId).
      return c.json({ messages: await cycle.openVersion(c.req.param('id'), node, { userId }) });
    }
    const messages = await cycle.messages(c.req.param('id'), {
      userId,
      ...(leaf === undefined || leaf === '' ? {} : { leaf }),
    });
    return c.json({ messages });
  });

  app.get('/api/chat/:id/versions/:messageId', async (c) => {
    const versions = await cycle.versions(c.req.param('id'), c.req.param('messageId'), { userId });
    return c.json({ versions });
  });

  app.get('/api/chat/:id/stream', (c) => cycle.resume(c.req.param('id'), { userId }));

  if (options.clientDirectory) {
    app.use('/*', serveStatic({ root: options.clientDirectory }));
  }
  return app;
}
