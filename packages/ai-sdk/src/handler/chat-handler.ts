// The reference HTTP contract of a chat app as one web-standard function: `(request) => response`.
// It mounts wherever a framework hands over a `Request` (Hono, a Next.js App Router route, a plain
// Node server through an adapter, a Worker's `fetch`). The app keeps what only it knows: who the
// user is, and the model call of a turn.
import { assertIdentifier } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { ChatCycle } from '../cycle/chat-cycle';
import { chatErrorResponse } from '../cycle/chat-error-response';
import type { ChatTurn } from '../cycle/chat-turn';
import type { BeginTurnOptions } from '../cycle/cycle-options';
import { ChatRequestError } from '../errors';
import { readChatBody } from '../request/read-chat-body';
import type { RespondOptions, StreamTextResultLike } from '../stream/reply-source';
import { readStopRequest } from './stop-request';

/** What a route of the handler knows about the request it answers. */
export interface ChatRequestContext {
  /** The request as the framework handed it over. */
  readonly request: Request;
  /** The user the request acts for (`ChatHandlerOptions.userId`). */
  readonly userId: string;
}

/** Options of {@link createChatHandler}. */
export interface ChatHandlerOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The request cycle the routes run on (`createChatCycle`). */
  readonly cycle: ChatCycle<UI_MESSAGE>;
  /**
   * The signed-in user of a request (from a session cookie, a token, …), or null when nobody is
   * signed in: every route then answers 401 JSON `{ error }` and reads nothing.
   */
  readonly userId: (request: Request) => string | null | Promise<string | null>;
  /**
   * The model call of a turn: hand the turn's `system`, `messages` and `abortSignal` to
   * `streamText` and return its result; the handler answers with `turn.respond(result)`. When
   * the provider refuses the call as too long for the model's context (before any output), it is
   * called once more with the same turn, whose `system` and `messages` are then the retry's
   * (less history: cut, or summarized with the engine's `autoCompact`).
   */
  readonly reply: (
    turn: ChatTurn<UI_MESSAGE>,
    context: ChatRequestContext,
  ) => StreamTextResultLike<UI_MESSAGE> | Promise<StreamTextResultLike<UI_MESSAGE>>;
  /**
   * The rest of a turn's `begin` options (its system context, a budget): everything but the user
   * and the signal, which the handler passes itself. The context route calls it too (with its
   * GET request), so the gauge counts the system context and plans with the budget turns use.
   */
  readonly turn?: (
    context: ChatRequestContext,
  ) =>
    | Omit<BeginTurnOptions, 'userId' | 'signal'>
    | Promise<Omit<BeginTurnOptions, 'userId' | 'signal'>>;
  /**
   * The id of the model the turns call (`'openai:gpt-4o'`, `'gpt-4.1-mini'`): the context route
   * prices the next call with it (with a budget). Without it, the budget's `model` does, if any.
   */
  readonly modelId?: string;
  /** Options of the reply's response (`turn.respond(result, respond)`). */
  readonly respond?: RespondOptions<UI_MESSAGE>;
  /**
   * The path the routes live under: `POST <basePath>`, `GET <basePath>/:id/messages`, … Only the
   * URL's path is matched, so the handler can sit behind any prefix a framework strips or keeps.
   * @default '/api/chat'
   */
  readonly basePath?: string;
  /**
   * Told of an error no route answers itself; the client gets a 500 JSON `{ error }` that does
   * not repeat it.
   * @default console.error
   */
  readonly onError?: (error: unknown) => void;
}

/** A JSON answer with the app's error shape. */
const fail = (status: number, error: string, headers?: Record<string, string>): Response =>
  Response.json({ error }, { status, ...(headers === undefined ? {} : { headers }) });

/** The routes under a chat id, and the methods each takes. */
const CHAT_ROUTES = {
  messages: 'GET',
  versions: 'GET',
  context: 'GET',
  stream: 'GET',
  stop: 'POST',
  events: 'GET',
} as const;

type Route =
  | { readonly kind: 'turn' }
  | {
      readonly kind: 'messages' | 'context' | 'stream' | 'stop' | 'events';
      readonly chatId: string;
    }
  | { readonly kind: 'versions'; readonly chatId: string; readonly messageId: string };

/** The path's segments under the base path, each decoded; a segment that does not decode is a 400. */
function segmentsUnder(pathname: string, basePath: string): string[] | null {
  if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return null;
  const rest = pathname.slice(basePath.length).split('/').slice(1);
  if (rest.length > 0 && rest.at(-1) === '') rest.pop();
  return rest.map((segment, index) => {
    try {
      return decodeURIComponent(segment);
    } catch (error) {
      throw new ChatRequestError(
        `Chat request refused: path segment ${index + 1} (${JSON.stringify(segment.slice(0, 40))}) is not valid percent-encoding.`,
        {
          issues: [{ path: `path.${index}`, message: 'expected percent-encoded UTF-8' }],
          cause: error,
        },
      );
    }
  });
}

/** The route a method and path name, or a 404 / 405 answer. */
function routeOf(method: string, pathname: string, segments: string[]): Route | Response {
  const [chatId, name, messageId, ...extra] = segments;
  const miss = fail(404, `Not found: ${method} ${pathname} is no chat route.`);
  if (chatId === undefined) {
    return method === 'POST'
      ? { kind: 'turn' }
      : fail(405, `Method ${method} not allowed here: a turn is a POST.`, { allow: 'POST' });
  }
  if (name === undefined || extra.length > 0 || !Object.hasOwn(CHAT_ROUTES, name)) return miss;
  const route = name as keyof typeof CHAT_ROUTES;
  if ((route === 'versions') !== (messageId !== undefined)) return miss;
  const allowed = CHAT_ROUTES[route];
  if (method !== allowed) {
    return fail(405, `Method ${method} not allowed on …/${route}: use ${allowed}.`, {
      allow: allowed,
    });
  }
  return route === 'versions'
    ? { kind: 'versions', chatId, messageId: messageId as string }
    : { kind: route, chatId };
}

/** A query parameter, absent when missing or empty. */
function queryOf(url: URL, name: string): string | undefined {
  const value = url.searchParams.get(name);
  return value === null || value === '' ? undefined : value;
}

/**
 * The `after` of a turn's body: the node id of the message a last-message body (`{ message }`)
 * follows, null for a chat's first message, undefined when the body has none. Anything else is a
 * 400, and so is `after` beside a body with all the messages (those say where they continue).
 */
function afterOf(body: unknown): string | null | undefined {
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, 'after')) return undefined;
  const { after, messages } = body as { after?: unknown; messages?: unknown };
  if (after !== null && typeof after !== 'string') {
    throw new ChatRequestError(
      `Chat request refused: body.after must be the node id of the message the new one follows (a string), or null for a chat's first message; received ${after === undefined ? 'undefined' : typeof after}.`,
      { issues: [{ path: 'after', message: 'expected a node id or null' }] },
    );
  }
  if (messages !== undefined) {
    throw new ChatRequestError(
      'Chat request refused: body.after places a last-message body ({ id, message, after }); a body with all the messages says where it continues, so send it without after.',
      { issues: [{ path: 'after', message: 'expected only with a last-message body' }] },
    );
  }
  if (after !== null) assertIdentifier('Chat request refused', 'body.after', after);
  return after;
}

/**
 * The whole reference chat contract as one web-standard handler, `(request: Request) =>
 * Promise<Response>`, over a {@link ChatCycle}:
 *
 * - `POST <base>`: a turn (the AI SDK's `DefaultChatTransport` body, all the messages or only the
 *   last one); the reply's UI message stream. A last-message body `{ id, message, trigger,
 *   messageId?, after }` names in `after` the node id of the message the new one follows (from
 *   `nodeIds`; null for a chat's first message), so a tab's question follows the reply that tab
 *   shows, not another tab's newer question (`BeginTurnOptions.after`).
 * - `GET <base>/:id/messages`: `{ messages, outcomes, nodeIds, versions }` of the newest path,
 *   `?leaf=<message id>` to a message, or `?node=<node id>` to a version's `leafNodeId`
 *   (`StoredConversation`).
 * - `GET <base>/:id/versions/:messageId`: `{ versions }` of a message, oldest first.
 * - `GET <base>/:id/context`: the chat's context use and cost for a gauge (`ContextGauge`:
 *   `{ tokens, maxInputTokens, exceeded, tokenizer, usage, nextCall }`), of the newest path or
 *   `?node=<node id>`.
 * - `GET <base>/:id/stream`: the chat's live reply to resume, or 204.
 * - `POST <base>/:id/stop`: stops the chat's live replies (or `{ "messageId" }`); 200
 *   `{ messageId }` once saved, 204 when none was live.
 * - `GET <base>/:id/events`: the chat's changes as server-sent events.
 *
 * Input the cycle refuses is a 400 and an unknown chat (or another user's) a 404, both JSON
 * `{ error }` with nothing written; a path that is no route is a 404 and a wrong method a 405
 * (with `Allow`), JSON too.
 *
 * @example
 * ```ts
 * const handler = createChatHandler({
 *   cycle,
 *   userId: (request) => request.headers.get('x-user-id'),
 *   reply: (turn) => streamText({ model, system: turn.system, messages: turn.messages, abortSignal: turn.abortSignal }),
 * });
 * // Hono: app.all('/api/chat/*', (c) => handler(c.req.raw)); app.post('/api/chat', (c) => handler(c.req.raw));
 * // Next.js (app/api/chat/[[...path]]/route.ts): export { handler as GET, handler as POST };
 * // A Worker: export default { fetch: handler };
 * ```
 */
export function createChatHandler<UI_MESSAGE extends UIMessage = UIMessage>(
  options: ChatHandlerOptions<UI_MESSAGE>,
): (request: Request) => Promise<Response> {
  const { cycle } = options;
  const basePath = (options.basePath ?? '/api/chat').replace(/\/+$/, '');
  const answer = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const segments = segmentsUnder(url.pathname, basePath);
    if (segments === null) {
      return fail(404, `Not found: ${url.pathname} is outside the chat routes (${basePath}).`);
    }
    const route = routeOf(request.method, url.pathname, segments);
    if (route instanceof Response) return route;
    const userId = await options.userId(request);
    if (userId === null) return fail(401, 'Not signed in: this route needs a user.');
    const context: ChatRequestContext = { request, userId };
    const signal = request.signal;
    switch (route.kind) {
      case 'turn': {
        const body = await readChatBody(request);
        const after = afterOf(body);
        const extra = options.turn === undefined ? {} : await options.turn(context);
        const turn = await cycle.begin(body, {
          ...extra,
          ...(after === undefined ? {} : { after }),
          userId,
          signal,
        });
        // The first call is made here (an app's error in it is a 500, as before); the cycle calls
        // `reply` again only to retry a call the provider refused as too long for the model's
        // context, with the turn's `system` and `messages` then the retry's.
        const first = await options.reply(turn, context);
        let calls = 0;
        return turn.respond(
          () => (calls++ === 0 ? first : options.reply(turn, context)),
          options.respond,
        );
      }
      case 'messages': {
        const leaf = queryOf(url, 'leaf');
        const node = queryOf(url, 'node');
        if (leaf !== undefined && node !== undefined) {
          throw new ChatRequestError('Chat request refused: give ?leaf= or ?node=, not both.', {
            issues: [{ path: 'node', message: 'expected only one of leaf and node' }],
          });
        }
        return Response.json(
          await cycle.conversation(route.chatId, {
            userId,
            ...(leaf === undefined ? {} : { leaf }),
            ...(node === undefined ? {} : { node }),
          }),
        );
      }
      case 'context': {
        const node = queryOf(url, 'node');
        const turn = options.turn === undefined ? {} : await options.turn(context);
        return Response.json(
          await cycle.contextGauge(route.chatId, {
            userId,
            ...(node === undefined ? {} : { node }),
            ...(turn.context === undefined ? {} : { context: turn.context }),
            ...(turn.budget === undefined ? {} : { budget: turn.budget }),
            ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
          }),
        );
      }
      case 'versions':
        return Response.json({
          versions: await cycle.versions(route.chatId, route.messageId, { userId }),
        });
      case 'stream':
        return cycle.resume(route.chatId, { userId, signal });
      case 'stop': {
        const stop = await readStopRequest(request);
        const stopped = await cycle.stop(route.chatId, { userId, ...stop });
        return stopped === null ? new Response(null, { status: 204 }) : Response.json(stopped);
      }
      case 'events':
        return cycle.events(route.chatId, { userId, signal });
    }
  };
  return async (request) => {
    try {
      return await answer(request);
    } catch (error) {
      const known = chatErrorResponse(error);
      if (known !== undefined) return known;
      (options.onError ?? console.error)(error);
      return fail(500, 'Internal error: the server could not answer this chat request.');
    }
  };
}
