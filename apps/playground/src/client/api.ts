import type { JsonValue, ValidationIssue } from '@ctxgraph/fragments-core';
import { type ClientResponse, hc } from 'hono/client';
import type { JSONValue as HonoJson, JSONParsed } from 'hono/utils/types';
// Types only from the server: the page bundles none of its code, only its routes' shapes.
import type { PlaygroundRoutes } from '../server/playground-app';
import type { ReplyEvent } from '../server/routes/messages';
import { type ErrorBody, type RendererName, USER_HEADER } from '../shared/wire';

export type { RendererName };

let currentUser = 'demo-user';

/** Every request is made as this user (sent in the x-ctxgraph-user header). */
export function setApiUser(userId: string): void {
  currentUser = userId;
}

/** The typed client: each route's request and answer as the server declares them. */
const client = hc<PlaygroundRoutes>('/', {
  headers: () => ({ [USER_HEADER]: currentUser }),
}).api;

const chatRoute = client.chats[':chatId'];

/**
 * A route's JSON answer as the page reads it. Hono stops following a recursive type such as
 * `JsonValue` and writes its own looser JSON type there; this reads that back as `JsonValue`.
 */
type Wire<T> = [T] extends [HonoJson] ? ([HonoJson] extends [T] ? JsonValue : Deep<T>) : Deep<T>;
type Deep<T> = T extends readonly (infer Item)[]
  ? Wire<Item>[]
  : T extends object
    ? { [K in keyof T]: Wire<T[K]> }
    : T;

/** The answer of a route that answers 200, as the page reads it. */
type Answer<Route> = Route extends (
  ...args: never[]
) => Promise<ClientResponse<infer T, 200, 'json'>>
  ? Wire<T>
  : never;

/** What `GET /api/info` answers. */
export type PlaygroundInfo = Answer<typeof client.info.$get>;
/** Everything the page shows about one chat (the answer of most chat routes). */
export type ChatView = Answer<(typeof chatRoute)['$get']>;
/** A message node as the page draws it. */
export type GraphNodeView = ChatView['graph']['nodes'][number];
/** What `GET /api/chats/:chatId/compare` answers: the engine's `compareBranches` report. */
export type BranchComparisonView = Answer<(typeof chatRoute)['compare']['$get']>;
/** What `GET /api/chats/:chatId/search` answers: a page of the engine's `search` hits. */
export type SearchResults = Answer<(typeof chatRoute)['search']['$get']>;
/** What `POST /api/chats/:chatId/budgeted-call` answers: the report of `resolve({ budget })`. */
export type BudgetedCall = Answer<(typeof chatRoute)['budgeted-call']['$post']>;

/** What `GET /api/chats/:chatId/cache-calls` answers: model calls predicted and confirmed. */
export type CacheCalls = Answer<(typeof chatRoute)['cache-calls']['$get']>;
/** What a model reply added (the last event of `POST /api/chats/:chatId/reply`). */
export type ExchangeAdded = Extract<Wire<JSONParsed<ReplyEvent>>, { type: 'done' }>['change'];
/** What `POST /api/chats/:chatId/messages` answers: the saved message and what it moved. */
export type MessageAdded = Answer<(typeof chatRoute)['messages']['$post']>;
/** What `GET /api/chats/:chatId/versions?nodeId=` answers: the engine's `versions()`. */
export type VersionsAnswer = Answer<(typeof chatRoute)['versions']['$get']>;
/** A serialized fragment as the page edits it: `{ type, ...fields }`. */
export type FlatFragment = { type: string; [field: string]: JsonValue };

/** A failed API call, with the server's error name and message. */
export class ApiError extends Error {
  readonly errorName: string;
  readonly status: number;
  /** Each problem with its path, for validation errors. */
  readonly issues: readonly ValidationIssue[];

  constructor(
    status: number,
    errorName: string,
    message: string,
    issues: readonly ValidationIssue[] = [],
  ) {
    super(message);
    this.status = status;
    this.errorName = errorName;
    this.issues = issues;
  }
}

async function failure(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    return new ApiError(
      response.status,
      body.error?.name ?? 'Error',
      body.error?.message ?? text,
      body.error?.issues ?? [],
    );
  } catch {
    return new ApiError(response.status, 'Error', text || response.statusText);
  }
}

/**
 * Waits for a typed client call and answers its JSON; a failed call becomes an {@link ApiError}
 * with the server's message, and no answer at all a NetworkError.
 */
async function answer<T>(call: Promise<ClientResponse<T, number, 'json'>>): Promise<Wire<T>> {
  let response: ClientResponse<T, number, 'json'>;
  try {
    response = await call;
  } catch (error) {
    throw new ApiError(
      0,
      'NetworkError',
      `The server did not answer (${String(error)}). Is it still running?`,
    );
  }
  if (!response.ok) throw await failure(response as unknown as Response);
  return (await response.json()) as Wire<T>;
}

/** The path parameter of a chat (hc puts it in the path as given). */
const at = (chatId: string) => ({ param: { chatId: encodeURIComponent(chatId) } });

/** The playground's HTTP API. */
export const api = {
  info: () => answer(client.info.$get()),
  listChats: (cursor?: string) =>
    answer(client.chats.$get({ query: { limit: '20', ...(cursor ? { cursor } : {}) } })),
  createChat: (title: string) => answer(client.chats.$post({ json: { title } })),
  chat: (chatId: string) => answer(chatRoute.$get(at(chatId))),
  rename: (chatId: string, title: string) =>
    answer(chatRoute.$patch({ ...at(chatId), json: { title } })),
  deleteChat: (chatId: string) => answer(chatRoute.$delete(at(chatId))),
  saveContext: (chatId: string, fragments: readonly unknown[]) =>
    answer(chatRoute.context.$put({ ...at(chatId), json: { fragments: [...fragments] } })),
  preview: (fragments: readonly unknown[]) =>
    answer(client.preview.$post({ json: { fragments: [...fragments] } })),
  say: (chatId: string, role: 'user' | 'assistant', text: string) =>
    answer(chatRoute.messages.$post({ ...at(chatId), json: { role, text } })),
  rewind: (chatId: string, messageId: string) =>
    answer(chatRoute.rewind.$post({ ...at(chatId), json: { messageId } })),
  checkpoint: (chatId: string, name: string, messageId: string | null) =>
    answer(
      chatRoute.checkpoints.$post({
        ...at(chatId),
        json: messageId === null ? { name } : { name, messageId },
      }),
    ),
  restore: (chatId: string, name: string) =>
    answer(chatRoute.restore.$post({ ...at(chatId), json: { name } })),
  btw: (chatId: string) => answer(chatRoute.btw.$post({ ...at(chatId), json: {} })),
  switchBranch: (chatId: string, branch: string) =>
    answer(chatRoute.switch.$post({ ...at(chatId), json: { branch } })),
  renameBranch: (chatId: string, from: string, to: string) =>
    answer(chatRoute['rename-branch'].$post({ ...at(chatId), json: { from, to } })),
  compare: (chatId: string, left: string, right: string) =>
    answer(chatRoute.compare.$get({ ...at(chatId), query: { left, right } })),
  search: (chatId: string, q: string, scope: 'branch' | 'chat', cursor?: string) =>
    answer(
      chatRoute.search.$get({
        ...at(chatId),
        query: { q, scope, match: 'prefix', ...(cursor === undefined ? {} : { cursor }) },
      }),
    ),
  versions: (chatId: string, nodeId: string) =>
    answer(chatRoute.versions.$get({ ...at(chatId), query: { nodeId } })),
  deleteBranch: (chatId: string, branch: string, options: { activate?: string; dryRun: boolean }) =>
    answer(chatRoute['delete-branch'].$post({ ...at(chatId), json: { branch, ...options } })),
  compact: (chatId: string, keepTurns: number, summary: string | undefined) =>
    answer(
      chatRoute.compact.$post({
        ...at(chatId),
        json: { keepTurns, ...(summary === undefined ? {} : { summary }) },
      }),
    ),
  inspect: (chatId: string, renderer: RendererName, modelId: string, maxInputTokens?: number) =>
    answer(
      chatRoute.inspect.$get({
        ...at(chatId),
        query: {
          renderer,
          modelId,
          ...(maxInputTokens === undefined ? {} : { maxInputTokens: String(maxInputTokens) }),
        },
      }),
    ),
  cacheCalls: (chatId: string) => answer(chatRoute['cache-calls'].$get(at(chatId))),
  budgetedCall: (
    chatId: string,
    options: { maxInputTokens: number; renderer: RendererName; modelId: string },
  ) => answer(chatRoute['budgeted-call'].$post({ ...at(chatId), json: options })),
  /** Stops the reply streaming under `stopId` (see {@link streamReply}); false when it had ended. */
  stopReply: (chatId: string, stopId: string) =>
    answer(chatRoute.reply.stop.$post({ ...at(chatId), json: { stopId } })),
};

/**
 * Sends a user message and streams the model's reply (through the server's AI SDK chat cycle,
 * within the page's budget): `onDelta` gets each piece of text; the promise resolves with what
 * changed once both messages are saved.
 */
export async function streamReply(
  chatId: string,
  text: string,
  options: {
    renderer: RendererName;
    maxInputTokens: number;
    /** An id to stop the reply with (`api.stopReply`): it then ends saved, marked stopped. */
    stopId?: string;
  },
  onDelta: (text: string) => void,
): Promise<ExchangeAdded> {
  const response = await chatRoute.reply.$post({
    ...at(chatId),
    json: {
      text,
      renderer: options.renderer,
      maxInputTokens: options.maxInputTokens,
      ...(options.stopId === undefined ? {} : { stopId: options.stopId }),
    },
  });
  if (!response.ok || response.body === null) throw await failure(response as Response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += value;
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      // The stream's events are the server's own type, as JSON carries them.
      const event = JSON.parse(line) as Wire<JSONParsed<ReplyEvent>>;
      if (event.type === 'delta') onDelta(event.text);
      else if (event.type === 'done') return event.change;
      else throw new ApiError(502, 'ModelError', event.message);
    }
    if (done) break;
  }
  throw new ApiError(502, 'ModelError', 'The reply stream ended before the model finished.');
}
