// The reference chat app on Cloudflare Workers: one Durable Object per chat, running the same
// HTTP API as the Node server (src/server/chat-api.ts) over the object's own SQLite storage.
import { DurableObject } from 'cloudflare:workers';
import { chatErrorResponse } from '@ctxgraph/ai-sdk';
import type {
  ChatRecord,
  ListChatsInput,
  Page,
  SearchHit,
  SearchMessagesInput,
} from '@ctxgraph/fragments-core';
import {
  ChatListPublisher,
  type ChatListUpdate,
  DurableObjectChatList,
  DurableObjectContextStore,
  type StoreCallOutcome,
  searchUserChats,
  settleStoreCall,
  storeCallOutcome,
} from '@ctxgraph/store-durable-object';
import type { Hono } from 'hono';
import { createChatApi } from '../server/chat-api';
import {
  chatListAnswer,
  chatListRequest,
  searchAnswer,
  searchRequest,
} from '../server/list-routes';
import { chooseModel } from '../server/models';

/** The Worker's bindings and variables (wrangler.jsonc; `--var` on the command line). */
export interface ChatWorkerEnv {
  /** One object per chat, named by the chat id. */
  readonly CHATS: DurableObjectNamespace<ChatObject>;
  /** One object per user, named by the user id: the user's chat list. */
  readonly USERS: DurableObjectNamespace<UserObject>;
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
  #store!: DurableObjectContextStore;
  #publisher!: ChatListPublisher;

  constructor(ctx: DurableObjectState, env: ChatWorkerEnv) {
    super(ctx, env);
    // The tables exist before the first request reaches the object.
    void ctx.blockConcurrencyWhile(async () => {
      const { model } = chooseModel(modelEnvironment(env));
      this.#store = new DurableObjectContextStore(ctx.storage);
      // Every write to the chat updates its user's list (the user's object), by RPC.
      this.#publisher = new ChatListPublisher(ctx.storage, this.#store, {
        send: (update) => userObject(env, userOfUpdate(update)).applyChatUpdate(update),
        onError: (error, chatId) => {
          console.error(`chat list update of '${chatId}' failed; retried by the alarm`, error);
          // A failed send is retried by the object's alarm (which the platform retries too).
          void ctx.storage.setAlarm(Date.now() + 1_000);
        },
      });
      this.#api = createChatApi({ store: this.#store, model, userId: USER_ID });
    });
  }

  /**
   * Answers a request of this object's chat (the Worker routed it here by the chat id). The
   * answer ends once the chat list has heard of the request's writes: a client that got the
   * whole answer finds the chat in `GET /api/chats` as the answer left it.
   */
  override async fetch(request: Request): Promise<Response> {
    const response = await this.#api.fetch(request);
    // A streamed answer waits at its end (not before its first byte); an empty one here.
    if (response.body === null) {
      await this.#publisher.settled();
      return response;
    }
    const publisher = this.#publisher;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async flush() {
          await publisher.settled();
        },
      }),
    );
    return new Response(body, response);
  }

  /** The chat's search (`searchMessages` of its store), as an outcome the Worker settles. */
  searchMessages(input: SearchMessagesInput): Promise<StoreCallOutcome<Page<SearchHit>>> {
    return storeCallOutcome(() => this.#store.searchMessages(input));
  }

  /** Sends the chat list what a failed send left pending (and, on a new instance, every chat). */
  override async alarm(): Promise<void> {
    if (!(await this.#publisher.publish({ all: true })))
      throw new Error('chat list update still failing'); // the platform retries the alarm
  }
}

/**
 * One user: the user's chat list, kept current by the chat objects (`ChatListPublisher`). Each
 * update is applied once however often it comes, and an older one never replaces a newer.
 */
export class UserObject extends DurableObject<ChatWorkerEnv> {
  #chats!: DurableObjectChatList;

  constructor(ctx: DurableObjectState, env: ChatWorkerEnv) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.#chats = new DurableObjectChatList(ctx.storage);
    });
  }

  /** A chat object's update (idempotent): true when the list changed. */
  applyChatUpdate(update: ChatListUpdate): boolean {
    return this.#chats.apply(update);
  }

  /** A page of the user's chats, as `ContextStore.listChats` answers it. */
  listChats(input: ListChatsInput): Promise<StoreCallOutcome<Page<ChatRecord>>> {
    return storeCallOutcome(async () => this.#chats.list(input));
  }

  /** The user's chat ids, most recently updated first: what a search fans out to. */
  chatIds(userId: string): string[] {
    return this.#chats.chatIds(userId);
  }
}

function userOfUpdate(update: ChatListUpdate): string {
  return update.type === 'chat' ? update.chat.userId : update.userId;
}

function userObject(env: ChatWorkerEnv, userId: string): DurableObjectStub<UserObject> {
  return env.USERS.get(env.USERS.idFromName(userId));
}

/** How many chat objects a search asks at once. */
const SEARCH_CONCURRENCY = 6;

/** `GET /api/chats` and `GET /api/search`: the user's object, and the user's chat objects. */
async function userRoute(
  request: Request,
  env: ChatWorkerEnv,
  route: 'chats' | 'search',
): Promise<Response> {
  if (request.method !== 'GET') {
    return fail(405, `Method ${request.method} not allowed here: use GET.`, { allow: 'GET' });
  }
  const url = new URL(request.url);
  const user = userObject(env, USER_ID);
  try {
    if (route === 'chats') {
      // The stub's type of a `ChatRecord` page (its JSON metadata) is too deep for the compiler
      // to derive: the method's own signature, as the class declares it.
      const lists = user as unknown as Pick<UserObject, 'listChats'>;
      const page = settleStoreCall(await lists.listChats(chatListRequest(url, USER_ID)));
      return Response.json(chatListAnswer(page));
    }
    const search = searchRequest(url);
    const page = await searchUserChats({
      userId: USER_ID,
      ...search,
      chatIds: await user.chatIds(USER_ID),
      concurrency: SEARCH_CONCURRENCY,
      searchChat: async (chatId, input) =>
        settleStoreCall(await env.CHATS.get(env.CHATS.idFromName(chatId)).searchMessages(input)),
    });
    return Response.json(searchAnswer(page));
  } catch (error) {
    const answer = chatErrorResponse(error);
    if (answer) return answer;
    console.error(error);
    return fail(500, 'Internal error: the server could not answer this request.');
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
 * `POST /api/chat` by the body's `id`); the chat list to the user's object, and a search to the
 * user's chat objects, fanned out (`searchUserChats`); the page is served from the static assets before the
 * Worker runs.
 */
const worker: ExportedHandler<ChatWorkerEnv> = {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === '/api/chats') return userRoute(request, env, 'chats');
    if (pathname === '/api/search') return userRoute(request, env, 'search');
    const routed = await routeOf(request);
    if (routed instanceof Response) return routed;
    const chat = env.CHATS.get(env.CHATS.idFromName(routed.chatId));
    return chat.fetch(routed.request);
  },
};

export default worker;
