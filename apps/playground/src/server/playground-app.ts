import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { createChatCycle } from '@ctxgraph/ai-sdk';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { serveStatic } from '@hono/node-server/serve-static';
import type { LanguageModel } from 'ai';
import { Hono } from 'hono';
import type { ErrorBody } from '../shared/wire';
import { chatAccess } from './chat-access';
import { createEchoModel } from './echo-model';
import { toErrorResponse } from './http-errors';
import type { StoreDescription } from './open-backend';
import type { ModelChoice } from './playground-config';
import { rendererFor } from './renderers';
import { branchToolRoutes } from './routes/branch-tools';
import { branchRoutes } from './routes/branches';
import { chatRoutes } from './routes/chats';
import { compactionRoutes } from './routes/compaction';
import { contextRoutes } from './routes/context';
import { infoRoutes } from './routes/info';
import { inspectRoutes } from './routes/inspect';
import { messageRoutes } from './routes/messages';
import type { RouteDependencies } from './routes/route-dependencies';

/** Options of {@link createPlaygroundApp}. */
export interface PlaygroundAppOptions {
  /** The conversation store; each chat's context lives in its context lane. */
  readonly store: ContextStore;
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
  /**
   * How many chats keep a warm engine between requests (least recently used ones go first; 0:
   * a new engine for every request). The chat cycle's `warmEngines`.
   * @default 200
   */
  readonly maxOpenChats?: number;
}

/**
 * Every API route under /api, chained so that its type is the whole API: the page's client is
 * `hc<PlaygroundRoutes>()`, and takes each request's and answer's shape from here. (That is why
 * the playground turns off `isolatedDeclarations`: these types are inferred, never written out.)
 */
function apiRoutes(dependencies: RouteDependencies) {
  return new Hono()
    .basePath('/api')
    .route('/', infoRoutes(dependencies))
    .route('/', chatRoutes(dependencies))
    .route('/', contextRoutes(dependencies))
    .route('/', messageRoutes(dependencies))
    .route('/', branchRoutes(dependencies))
    .route('/', branchToolRoutes(dependencies))
    .route('/', compactionRoutes(dependencies))
    .route('/', inspectRoutes(dependencies));
}

/** The type of the playground's API, for `hc<PlaygroundRoutes>('/')` on the page. */
export type PlaygroundRoutes = ReturnType<typeof apiRoutes>;

/**
 * The playground's HTTP API (under /api) and, when `clientDirectory` is given, the built page.
 * The routes live in `routes/`, one module per resource; this only wires them. Every chat route
 * works through the chat's warm `ContextEngine`, read through an `@ctxgraph/ai-sdk` chat cycle
 * ({@link chatAccess}), so a request on a chat the server has seen reads only what changed.
 *
 * @example
 * ```ts
 * const app = createPlaygroundApp({ store, storeDescription, model: null, defaultUserId: 'demo-user' });
 * serve({ fetch: app.fetch, port: 5173 });
 * ```
 */
export function createPlaygroundApp(options: PlaygroundAppOptions): Hono {
  const dependencies: RouteDependencies = {
    store: options.store,
    chats: chatAccess(
      createChatCycle({
        store: options.store,
        engine: { renderer: rendererFor('xml'), tokenizer: o200kTokenizer },
        warmEngines: options.maxOpenChats ?? 200,
      }),
    ),
    defaultUserId: options.defaultUserId,
    storeDescription: options.storeDescription,
    model: options.model,
    languageModel:
      options.languageModel ??
      (options.model?.kind === 'echo'
        ? createEchoModel()
        : options.model
          ? createOpenAI({ apiKey: options.model.apiKey, baseURL: options.model.baseURL }).chat(
              options.model.modelId,
            )
          : null),
    logError: options.logError ?? ((message, error) => console.error(message, error)),
  };

  const app = new Hono();
  app.onError((error, context) => {
    const response = toErrorResponse(error);
    if (response.unexpected) {
      dependencies.logError(`${context.req.method} ${context.req.path} failed:`, error);
    }
    return context.json(response.body, response.status);
  });

  app.route('/', apiRoutes(dependencies));
  app.all('/api/*', (context) => {
    const body: ErrorBody = {
      error: {
        name: 'NotFound',
        message: `No API route ${context.req.method} ${context.req.path}.`,
      },
    };
    return context.json(body, 404);
  });

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
