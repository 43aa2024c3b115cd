// The reference chat app on Cloudflare Workers: one Durable Object per chat, running the same
// HTTP API as the Node server (src/server/chat-api.ts) over the object's own SQLite storage.
import { DurableObject } from 'cloudflare:workers';
import { chatErrorResponse, createMemoryResumableStreams } from '@ctxgraph/ai-sdk';
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

/** A reply being generated in this object: how to stop it, and its save. */
interface RunningReply {
  readonly controller: AbortController;
  readonly saved: Promise<void>;
  readonly settle: () => void;
}

/**
 * One chat: its store is the object's own SQLite storage (`DurableObjectContextStore`), and it
 * answers every request of its chat with the app's HTTP API. Every request for the chat reaches
 * this one single-threaded object, so a reply's resumable stream and its stop are kept in the
 * object's memory (`createChatCycle({ streams })`) while the store has no live replies; once it
 * has them, the cycle uses them (its `live` default) and this object adds nothing of its own.
 */
export class ChatObject extends DurableObject<ChatWorkerEnv> {
  #store!: DurableObjectContextStore;
  #api!: Hono;
  /** Whether replies are kept here (the store has no live replies) rather than in the store. */
  #inObject = true;
  /** The replies being generated in this object, by reply id, oldest first. */
  readonly #running = new Map<string, RunningReply>();
  /** Each turn's stop controller, by the request the API sees. */
  readonly #controllers = new WeakMap<Request, AbortController>();
  /** Each turn's reply id, by the request the API sees (once its reply started). */
  readonly #replyIds = new WeakMap<Request, string>();

  constructor(ctx: DurableObjectState, env: ChatWorkerEnv) {
    super(ctx, env);
    // The tables exist before the first request reaches the object.
    void ctx.blockConcurrencyWhile(async () => {
      this.#store = new DurableObjectContextStore(ctx.storage);
      this.#inObject = this.#store.capabilities.liveReplies !== true;
      const { model } = chooseModel(modelEnvironment(env));
      this.#api = createChatApi({
        store: this.#store,
        model,
        userId: USER_ID,
        ...(this.#inObject
          ? {
              streams: createMemoryResumableStreams(),
              onReplyStarted: ({ request, replyId }) => this.#started(request, replyId),
              onReplySaved: ({ replyId }) => this.#running.get(replyId)?.settle(),
            }
          : {}),
      });
    });
  }

  /** Answers a request of this object's chat (the Worker routed it here by the chat id). */
  override async fetch(request: Request): Promise<Response> {
    if (!this.#inObject) return this.#api.fetch(request);
    const { pathname } = new URL(request.url);
    if (request.method === 'POST' && pathname === '/api/chat') {
      // The turn's signal is this object's: a stop aborts it (and, as without live replies on
      // Node, a client that goes away stops its reply).
      const controller = new AbortController();
      const turn = new Request(request, {
        signal: AbortSignal.any([request.signal, controller.signal]),
      });
      this.#controllers.set(turn, controller);
      return this.#endsReply(turn, await this.#api.fetch(turn));
    }
    const stop = /^\/api\/chat\/([^/]+)\/stop\/?$/.exec(pathname);
    if (request.method === 'POST' && stop?.[1] !== undefined) {
      return this.#stop(decodeURIComponent(stop[1]), request);
    }
    // A reply still being written would be saved into a chat that is gone: the Node app's 409.
    const deleted = /^\/api\/chat\/([^/]+)\/?$/.exec(pathname);
    if (request.method === 'DELETE' && deleted?.[1] !== undefined && this.#running.size > 0) {
      return fail(
        409,
        `Chat '${decodeURIComponent(deleted[1])}' has a reply being written: stop it (POST /api/chat/${deleted[1]}/stop), then delete.`,
      );
    }
    if (request.method === 'GET' && /^\/api\/chat\/[^/]+\/events\/?$/.test(pathname)) {
      return fail(
        501,
        "Not implemented on Workers yet: a chat's events need live replies, which the Durable Object store does not serve yet.",
      );
    }
    return this.#api.fetch(request);
  }

  /** A turn's reply started: it can be stopped until it is saved. */
  #started(request: Request, replyId: string): void {
    const controller = this.#controllers.get(request);
    if (controller === undefined) return;
    let settle!: () => void;
    const saved = new Promise<void>((resolve) => {
      settle = () => {
        this.#running.delete(replyId);
        resolve();
      };
    });
    this.#running.set(replyId, { controller, saved, settle });
    this.#replyIds.set(request, replyId);
  }

  /**
   * The turn's response, whose end (or its client's going away) also ends the reply here: a
   * reply is usually ended by its save (`onReplySaved`), but one that failed, or had nothing to
   * save, must not be waited on by a stop or block a delete. The stream's end comes after the
   * save: the cycle holds the reply's `finish` until it is saved.
   */
  #endsReply(turn: Request, response: Response): Response {
    const ended = (): void => {
      const replyId = this.#replyIds.get(turn);
      if (replyId !== undefined) this.#running.get(replyId)?.settle();
    };
    if (response.body === null) {
      ended();
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            ended();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          ended();
          controller.error(error);
        }
      },
      async cancel(reason) {
        ended();
        await reader.cancel(reason);
      },
    });
    return new Response(body, response);
  }

  /**
   * `POST /api/chat/:id/stop` with the replies kept in this object: stops the chat's replies (or
   * the one `{ "messageId" }` names) and answers once they are saved (`aborted`): 200
   * `{ messageId }` of the most recently started one, 204 when none was being generated, 404 for
   * a chat this user does not have. The same answers as the cycle's stop over live replies.
   */
  async #stop(chatId: string, request: Request): Promise<Response> {
    const text = await request.text();
    let messageId: string | undefined;
    if (text.trim() !== '') {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return fail(400, 'Stop request refused: the body must be JSON ({} or { "messageId" }).');
      }
      const named = (body as { messageId?: unknown } | null)?.messageId;
      if (named !== undefined && typeof named !== 'string') {
        return fail(400, 'Stop request refused: body.messageId must be a string.');
      }
      messageId = named;
    }
    let chat: Awaited<ReturnType<DurableObjectContextStore['getChat']>>;
    try {
      chat = await this.#store.getChat(chatId);
    } catch (error) {
      // A malformed id is a 400, as the handler answers it.
      const answer = chatErrorResponse(error);
      if (answer !== undefined) return answer;
      throw error;
    }
    if (chat === null || chat.userId !== USER_ID) {
      return fail(404, `No chat '${chatId}' for this user.`);
    }
    const stopping = [...this.#running].filter(
      ([id]) => messageId === undefined || id === messageId,
    );
    const newest = stopping.at(-1);
    if (newest === undefined) return new Response(null, { status: 204 });
    for (const [, reply] of stopping) reply.controller.abort();
    await Promise.all(stopping.map(([, reply]) => reply.saved));
    return Response.json({ messageId: newest[0] });
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
