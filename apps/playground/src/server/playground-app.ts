import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import {
  type BranchRecord,
  ChatNotFoundError,
  type ChatRecord,
  type CheckpointRecord,
  type ContextStore,
  type JsonValue,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import { serveStatic } from '@hono/node-server/serve-static';
import { type LanguageModel, streamText, type UIMessage } from 'ai';
import { type Context, Hono } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import { decodeContext, encodeContext } from './context-codec';
import type { ContextRepository } from './context-repository';
import { fromZodError, PlaygroundRequestError, toErrorResponse } from './http-errors';
import type { ModelChoice } from './playground-config';
import { type PromptPreview, RENDERER_NAMES, rendererFor, renderPreviews } from './renderers';

/** What the page shows about the store in use. */
export interface StoreDescription {
  /** `sqlite`, `memory` or `postgres`. */
  readonly kind: 'sqlite' | 'memory' | 'postgres';
  /** The file, the database (password hidden), or where memory lives. */
  readonly location: string;
}

/** Options of {@link createPlaygroundApp}. */
export interface PlaygroundAppOptions {
  /** The conversation store. */
  readonly store: ContextStore;
  /** Where each chat's context fragments are kept. */
  readonly contexts: ContextRepository;
  /** Shown on the page. */
  readonly storeDescription: StoreDescription;
  /** The model that answers, or null (replies are written by hand). */
  readonly model: ModelChoice | null;
  /** The user the page starts as. */
  readonly defaultUserId: string;
  /** The built client (vite build output) to serve; no static files when omitted. */
  readonly clientDirectory?: string;
  /** Where unexpected errors are reported. @default console.error */
  readonly logError?: (message: string, error: unknown) => void;
  /** A language model to use instead of building one from `model` (tests pass a stand-in). */
  readonly languageModel?: LanguageModel;
}

/** A message node as the page draws it. */
export interface GraphNodeView {
  id: string;
  parentId: string | null;
  role: string;
  sequence: number;
  text: string;
}

/** Everything the page shows about one chat. */
export interface ChatView {
  chat: ChatRecord;
  branch: string;
  headMessageId: string | null;
  messages: UIMessage[];
  graph: { nodes: GraphNodeView[]; branches: BranchRecord[]; checkpoints: CheckpointRecord[] };
  context: JsonValue[];
  prompts: PromptPreview[];
}

const USER_HEADER = 'x-ctxgraph-user';

const userIdSchema = z
  .string()
  .trim()
  .min(1, 'the user id must not be empty')
  .max(200, 'the user id is longer than 200 characters');
const nameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'longer than 200 characters');
const rendererSchema = z.enum(RENDERER_NAMES);

const schemas = {
  createChat: z.object({ title: z.string().trim().max(200).optional() }).strict(),
  renameChat: z.object({ title: z.string().trim().max(200).nullable() }).strict(),
  context: z.object({ fragments: z.array(z.unknown()) }).strict(),
  message: z
    .object({ role: z.enum(['user', 'assistant']), text: z.string().min(1, 'must not be empty') })
    .strict(),
  reply: z
    .object({ text: z.string().min(1, 'must not be empty'), renderer: rendererSchema.optional() })
    .strict(),
  rewind: z.object({ messageId: nameSchema }).strict(),
  checkpoint: z.object({ name: nameSchema, replace: z.boolean().optional() }).strict(),
  restore: z.object({ name: nameSchema }).strict(),
  switchBranch: z.object({ branch: nameSchema }).strict(),
  empty: z.object({}).strict(),
  listQuery: z.object({
    cursor: z.string().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
  }),
  inspectQuery: z.object({
    renderer: rendererSchema.optional(),
    modelId: z.string().min(1).max(200).optional(),
  }),
};

function textOf(message: { parts: readonly unknown[] }): string {
  return message.parts
    .flatMap((part) =>
      typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text'
        ? [String((part as { text?: unknown }).text ?? '')]
        : [],
    )
    .join('');
}

/** Reads and checks a JSON body; malformed JSON and wrong fields become a ValidationError. */
async function readBody<T extends z.ZodType>(context: Context, schema: T): Promise<z.infer<T>> {
  const text = await context.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new PlaygroundRequestError(`The request body is not valid JSON: ${reason}.`, {
        issues: [{ path: 'body', message: 'malformed JSON' }],
      });
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZodError('request body', parsed.error);
  return parsed.data;
}

function readQuery<T extends z.ZodType>(context: Context, schema: T): z.infer<T> {
  const parsed = schema.safeParse(context.req.query());
  if (!parsed.success) throw fromZodError('query', parsed.error);
  return parsed.data;
}

/**
 * The playground's HTTP API (under /api) and, when `clientDirectory` is given, the built page.
 * It owns no state of its own: every request opens a `ContextEngine` on the store, with the
 * chat's context fragments loaded from the context repository.
 *
 * @example
 * ```ts
 * const app = createPlaygroundApp({ store, contexts, storeDescription, model: null, defaultUserId: 'demo-user' });
 * serve({ fetch: app.fetch, port: 5173 });
 * ```
 */
export function createPlaygroundApp(options: PlaygroundAppOptions): Hono {
  const { store, contexts } = options;
  const logError = options.logError ?? ((message, error) => console.error(message, error));
  const languageModel: LanguageModel | null =
    options.languageModel ??
    (options.model
      ? createOpenAI({ apiKey: options.model.apiKey, baseURL: options.model.baseURL }).chat(
          options.model.modelId,
        )
      : null);

  const app = new Hono();

  app.onError((error, context) => {
    const response = toErrorResponse(error);
    if (response.unexpected) logError(`${context.req.method} ${context.req.path} failed:`, error);
    return context.json(response.body, response.status);
  });

  function userOf(context: Context): string {
    const header = context.req.header(USER_HEADER);
    if (header === undefined) return options.defaultUserId;
    const parsed = userIdSchema.safeParse(header);
    if (!parsed.success) throw fromZodError(`${USER_HEADER} header`, parsed.error);
    return parsed.data;
  }

  /** Checks the chat exists and is the user's, then opens an engine with its context set. */
  async function openEngine(chatId: string, userId: string): Promise<ContextEngine> {
    const chat = await store.getChat(chatId);
    if (chat === null) throw new ChatNotFoundError(chatId);
    if (chat.userId !== userId) throw new OwnershipError(chatId, userId);
    const fragments = decodeContext(await contexts.load(chatId));
    const engine = new ContextEngine({ store, chatId, userId, renderer: rendererFor('xml') });
    engine.set(...fragments);
    return engine;
  }

  async function viewOf(engine: ContextEngine): Promise<ChatView> {
    const { messages } = await engine.resolve({ renderer: rendererFor('xml') });
    const graph = await store.getGraph(engine.chatId);
    const serialized = await contexts.load(engine.chatId);
    return {
      chat: engine.chat ?? graph.chat,
      branch: engine.branch,
      headMessageId: engine.headMessageId ?? null,
      messages: messages as UIMessage[],
      graph: {
        nodes: graph.nodes.map((node) => ({
          id: node.id,
          parentId: node.parentId,
          role: node.message.role,
          sequence: node.sequence,
          text: textOf(node.message),
        })),
        branches: [...graph.branches],
        checkpoints: [...graph.checkpoints],
      },
      context: serialized,
      prompts: renderPreviews(decodeContext(serialized)),
    };
  }

  app.get('/api/info', (context) =>
    context.json({
      defaultUserId: options.defaultUserId,
      store: options.storeDescription,
      model: options.model
        ? { modelId: options.model.modelId, baseURL: options.model.baseURL ?? null }
        : null,
      renderers: RENDERER_NAMES,
    }),
  );

  app.get('/api/chats', async (context) => {
    const userId = userOf(context);
    const query = readQuery(context, schemas.listQuery);
    const page = await store.listChats({ userId, limit: query.limit ?? 20, cursor: query.cursor });
    return context.json(page);
  });

  app.post('/api/chats', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.createChat);
    const chatId = `chat-${randomUUID()}`;
    const title = body.title === undefined || body.title === '' ? 'Untitled chat' : body.title;
    await store.openChat({ chatId, userId, title });
    const engine = await openEngine(chatId, userId);
    return context.json(await viewOf(engine), 201);
  });

  app.get('/api/chats/:chatId', async (context) => {
    const engine = await openEngine(context.req.param('chatId'), userOf(context));
    return context.json(await viewOf(engine));
  });

  app.patch('/api/chats/:chatId', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.renameChat);
    const engine = await openEngine(context.req.param('chatId'), userId);
    await engine.updateChat({ title: body.title === '' ? null : body.title });
    return context.json(await viewOf(engine));
  });

  app.delete('/api/chats/:chatId', async (context) => {
    const chatId = context.req.param('chatId');
    await openEngine(chatId, userOf(context));
    await store.deleteChat(chatId);
    await contexts.remove(chatId);
    return context.json({ deleted: chatId });
  });

  app.put('/api/chats/:chatId/context', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.context);
    const chatId = context.req.param('chatId');
    await openEngine(chatId, userId);
    // Decode first: a bad fragment is refused before anything is stored.
    const fragments = decodeContext(body.fragments);
    await contexts.save(chatId, encodeContext(fragments));
    return context.json(await viewOf(await openEngine(chatId, userId)));
  });

  app.post('/api/preview', async (context) => {
    const body = await readBody(context, schemas.context);
    const fragments = decodeContext(body.fragments);
    return context.json({
      fragments: encodeContext(fragments),
      prompts: renderPreviews(fragments),
    });
  });

  app.post('/api/chats/:chatId/messages', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.message);
    const engine = await openEngine(context.req.param('chatId'), userId);
    engine.set(body.role === 'user' ? user(body.text) : assistantText(body.text));
    await engine.save();
    return context.json(await viewOf(engine));
  });

  app.post('/api/chats/:chatId/reply', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.reply);
    if (languageModel === null) {
      throw new PlaygroundRequestError(
        'No model is configured: start the playground with OPENAI_API_KEY, or OPENAI_BASE_URL and OPENAI_MODEL, or write the reply by hand.',
      );
    }
    const engine = await openEngine(context.req.param('chatId'), userId);
    // The user's message is saved before the model is asked, so a failing model loses nothing.
    engine.set(user(body.text));
    await engine.save();
    const renderer = rendererFor(body.renderer ?? 'xml');
    const { systemPrompt, messages } = await engine.resolve({ renderer, format: 'model' });
    context.header('Content-Type', 'application/x-ndjson; charset=utf-8');
    return stream(context, async (output) => {
      const send = (value: unknown) => output.write(`${JSON.stringify(value)}\n`);
      let reply = '';
      try {
        const result = streamText({
          model: languageModel,
          system: systemPrompt,
          messages,
          // One retry keeps a person waiting seconds, not the SDK's default minute of back-off.
          maxRetries: 1,
          // Errors arrive as stream parts and are reported below; this only stops the SDK's own console print.
          onError: () => {},
        });
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') {
            reply += part.text;
            await send({ type: 'delta', text: part.text });
          } else if (part.type === 'error') {
            throw part.error;
          }
        }
        if (reply === '') throw new Error('the model returned no text');
        engine.set(assistantText(reply));
        await engine.save();
        await send({ type: 'done', view: await viewOf(engine) });
      } catch (error) {
        const response = toErrorResponse(error);
        logError('The model reply failed:', error);
        await send({
          type: 'error',
          message: `The model reply failed: ${response.body.error.message}`,
        });
      }
    });
  });

  app.post('/api/chats/:chatId/rewind', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.rewind);
    const engine = await openEngine(context.req.param('chatId'), userId);
    const result = await engine.rewind(body.messageId);
    return context.json({ result, view: await viewOf(engine) });
  });

  app.post('/api/chats/:chatId/checkpoints', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.checkpoint);
    const engine = await openEngine(context.req.param('chatId'), userId);
    await engine.resolve();
    const result = await engine.checkpoint(body.name, { replace: body.replace ?? false });
    return context.json({ result, view: await viewOf(engine) }, 201);
  });

  app.post('/api/chats/:chatId/restore', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.restore);
    const engine = await openEngine(context.req.param('chatId'), userId);
    const result = await engine.restore(body.name);
    return context.json({ result, view: await viewOf(engine) });
  });

  app.post('/api/chats/:chatId/btw', async (context) => {
    const userId = userOf(context);
    await readBody(context, schemas.empty);
    const engine = await openEngine(context.req.param('chatId'), userId);
    const result = await engine.btw();
    return context.json({ result, view: await viewOf(engine) });
  });

  app.post('/api/chats/:chatId/switch', async (context) => {
    const userId = userOf(context);
    const body = await readBody(context, schemas.switchBranch);
    const engine = await openEngine(context.req.param('chatId'), userId);
    const result = await engine.switchBranch(body.branch);
    return context.json({ result, view: await viewOf(engine) });
  });

  app.get('/api/chats/:chatId/inspect', async (context) => {
    const userId = userOf(context);
    const query = readQuery(context, schemas.inspectQuery);
    const engine = await openEngine(context.req.param('chatId'), userId);
    const snapshot = await engine.inspect({
      modelId: query.modelId ?? options.model?.modelId ?? 'gpt-4o',
      renderer: rendererFor(query.renderer ?? 'xml'),
    });
    return context.json(snapshot);
  });

  app.all('/api/*', (context) =>
    context.json(
      {
        error: {
          name: 'NotFound',
          message: `No API route ${context.req.method} ${context.req.path}.`,
        },
      },
      404,
    ),
  );

  const clientDirectory = options.clientDirectory;
  if (clientDirectory !== undefined) {
    app.use('/*', serveStatic({ root: clientDirectory }));
    // Any other path is the single page app.
    app.get('*', async (context) =>
      context.html(await readFile(join(clientDirectory, 'index.html'), 'utf8')),
    );
  }

  return app;
}
