// The reference chat app on Cloudflare Workers: one Durable Object per chat, running the same
// HTTP API as the Node server (src/server/chat-api.ts) over the object's own SQLite storage.
import { DurableObject } from 'cloudflare:workers';
import { DurableObjectContextStore } from '@ctxgraph/store-durable-object';
import type { Hono } from 'hono';
import { createChatApi } from '../server/chat-api';
import { chooseModel } from '../server/models';

/** The Worker's bindings and variables (wrangler.jsonc; `--var` on the command line). */
export interface ChatWorkerEnv {
  /** One object per chat, named by the chat id. */
  readonly CHATS: DurableObjectNamespace<ChatObject>;
  /** `mock` for the built-in mock model; otherwise a model name (see src/server/models.ts). */
  readonly CHAT_MODEL?: string;
  /** The mock model's delay between words. */
  readonly MOCK_CHUNK_DELAY_MS?: string;
  readonly OPENAI_API_KEY?: string;
  readonly AI_GATEWAY_API_KEY?: string;
  readonly ANTHROPIC_API_KEY?: string;
}

/** The user every request acts as: the app has no sign-in (the same as the Node server's). */
const USER_ID = 'chat-app-user';

/** A JSON answer with the app's error shape. */
const fail = (status: number, error: string, headers?: Record<string, string>): Response =>
  Response.json({ error }, { status, ...(headers === undefined ? {} : { headers }) });

/** The environment's variables as the model chooser reads them (the names the Node app reads). */
function modelEnvironment(env: ChatWorkerEnv): Record<string, string | undefined> {
  return {
    CHAT_MODEL: env.CHAT_MODEL,
    MOCK_CHUNK_DELAY_MS: env.MOCK_CHUNK_DELAY_MS,
    OPENAI_API_KEY: env.OPENAI_API_KEY,
    AI_GATEWAY_API_KEY: env.AI_GATEWAY_API_KEY,
    ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
  };
}

/**
 * One chat: its store is the object's own SQLite storage (`DurableObjectContextStore`, live
 * replies included), and it answers every request of its chat with the app's HTTP API, the same
 * module as the Node server's. Every request for the chat reaches this one single-threaded
 * object, so a reply's chunks, its stop and the chat's events are the store's, as on Node, and
 * its change feed never leaves the object.
 */
export class ChatObject extends DurableObject<ChatWorkerEnv> {
  #api!: Hono;

  constructor(ctx: DurableObjectState, env: ChatWorkerEnv) {
    super(ctx, env);
    // The tables exist before the first request reaches the object.
    void ctx.blockConcurrencyWhile(async () => {
      const { model } = chooseModel(modelEnvironment(env));
      this.#api = createChatApi({
        store: new DurableObjectContextStore(ctx.storage),
        model,
        userId: USER_ID,
      });
    });
  }

  /** Answers a request of this object's chat (the Worker routed it here by the chat id). */
  override fetch(request: Request): Promise<Response> {
    return Promise.resolve(this.#api.fetch(request));
  }
}

/** The chat id a request is for, or the Worker's own answer when it names none. */
async function routeOf(request: Request): Promise<{ chatId: string; request: Request } | Response> {
  const { pathname } = new URL(request.url);
  const under = /^\/api\/chat\/([^/]+)(?:\/.*)?$/.exec(pathname);
  if (under?.[1] !== undefined) {
    let chatId: string;
    try {
      chatId = decodeURIComponent(under[1]);
    } catch {
      return fail(
        400,
        `Chat request refused: the chat id in ${pathname} is not valid percent-encoding.`,
      );
    }
    return { chatId, request };
  }
  if (pathname !== '/api/chat' && pathname !== '/api/chat/') {
    return fail(404, `Not found: ${request.method} ${pathname} is no route of this app.`);
  }
  if (request.method !== 'POST') {
    return fail(405, `Method ${request.method} not allowed here: a turn is a POST.`, {
      allow: 'POST',
    });
  }
  // A turn names its chat in the body's `id`; the body is passed on as it came.
  const text = await request.text();
  let id: unknown;
  try {
    id = (JSON.parse(text) as { id?: unknown } | null)?.id;
  } catch {
    return fail(400, 'Chat request refused: the body is not JSON.');
  }
  if (typeof id !== 'string' || id === '') {
    return fail(400, 'Chat request refused: body.id must name the chat (a string).');
  }
  return {
    chatId: id,
    request: new Request(request.url, { method: 'POST', headers: request.headers, body: text }),
  };
}

/**
 * The Worker: every chat request goes to its chat's object (`/api/chat/:id/…` by the path's id,
 * `POST /api/chat` by the body's `id`); the page is served from the static assets before the
 * Worker runs.
 */
const worker: ExportedHandler<ChatWorkerEnv> = {
  async fetch(request, env) {
    const routed = await routeOf(request);
    if (routed instanceof Response) return routed;
    const chat = env.CHATS.get(env.CHATS.idFromName(routed.chatId));
    return chat.fetch(routed.request);
  },
};

export default worker;
