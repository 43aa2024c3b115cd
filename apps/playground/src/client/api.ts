import type { BranchRecord, CheckpointRecord, ValidationIssue } from '@ctxgraph/fragments-core';
import type {
  BranchComparisonView,
  BranchDeletion,
  BudgetedCall,
  ChatOperation,
  ChatPage,
  ChatView,
  Compaction,
  DeletedChat,
  ErrorBody,
  PlaygroundInfo,
  PreviewResult,
  RendererName,
  ReplyEvent,
  SearchResults,
  SerializedFragment,
} from '../shared/wire';
import { USER_HEADER } from '../shared/wire';

export type {
  BranchComparisonView,
  BranchDeletion,
  ChatView,
  PlaygroundInfo,
  RendererName,
  SearchResults,
};

/** A serialized fragment as the page edits it: `{ type, ...fields }`. */
export type FlatFragment = SerializedFragment;

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

let currentUser = 'demo-user';

/** Every request is made as this user (sent in the x-ctxgraph-user header). */
export function setApiUser(userId: string): void {
  currentUser = userId;
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

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: { 'content-type': 'application/json', [USER_HEADER]: currentUser },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(
      0,
      'NetworkError',
      `The server did not answer (${String(error)}). Is it still running?`,
    );
  }
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** The playground's HTTP API. */
export const api = {
  info: (): Promise<PlaygroundInfo> => request('GET', '/api/info'),
  listChats: (cursor?: string): Promise<ChatPage> =>
    request('GET', `/api/chats?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
  createChat: (title: string): Promise<ChatView> => request('POST', '/api/chats', { title }),
  chat: (chatId: string): Promise<ChatView> =>
    request('GET', `/api/chats/${encodeURIComponent(chatId)}`),
  rename: (chatId: string, title: string): Promise<ChatView> =>
    request('PATCH', `/api/chats/${encodeURIComponent(chatId)}`, { title }),
  deleteChat: (chatId: string): Promise<DeletedChat> =>
    request('DELETE', `/api/chats/${encodeURIComponent(chatId)}`),
  saveContext: (chatId: string, fragments: readonly unknown[]): Promise<ChatView> =>
    request('PUT', `/api/chats/${encodeURIComponent(chatId)}/context`, { fragments }),
  preview: (fragments: readonly unknown[]): Promise<PreviewResult> =>
    request('POST', '/api/preview', { fragments }),
  say: (chatId: string, role: 'user' | 'assistant', text: string): Promise<ChatView> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/messages`, { role, text }),
  rewind: (chatId: string, messageId: string): Promise<ChatOperation<BranchRecord>> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/rewind`, { messageId }),
  checkpoint: (
    chatId: string,
    name: string,
    messageId: string | null,
  ): Promise<ChatOperation<CheckpointRecord>> =>
    request(
      'POST',
      `/api/chats/${encodeURIComponent(chatId)}/checkpoints`,
      messageId === null ? { name } : { name, messageId },
    ),
  restore: (chatId: string, name: string): Promise<ChatOperation<BranchRecord>> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/restore`, { name }),
  btw: (chatId: string): Promise<ChatOperation<BranchRecord>> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/btw`, {}),
  switchBranch: (chatId: string, branch: string): Promise<ChatOperation<BranchRecord>> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/switch`, { branch }),
  compare: (chatId: string, left: string, right: string): Promise<BranchComparisonView> =>
    request(
      'GET',
      `/api/chats/${encodeURIComponent(chatId)}/compare?${new URLSearchParams({ left, right })}`,
    ),
  search: (chatId: string, q: string, scope: 'branch' | 'chat'): Promise<SearchResults> =>
    request(
      'GET',
      `/api/chats/${encodeURIComponent(chatId)}/search?${new URLSearchParams({ q, scope })}`,
    ),
  deleteBranch: (
    chatId: string,
    branch: string,
    options: { activate?: string; dryRun: boolean },
  ): Promise<BranchDeletion> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/delete-branch`, {
      branch,
      ...options,
    }),
  compact: (chatId: string, keepTurns: number, summary: string | undefined): Promise<Compaction> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/compact`, {
      keepTurns,
      ...(summary === undefined ? {} : { summary }),
    }),
  inspect: (
    chatId: string,
    renderer: RendererName,
    modelId: string,
    maxInputTokens?: number,
  ): Promise<Record<string, unknown>> =>
    request(
      'GET',
      `/api/chats/${encodeURIComponent(chatId)}/inspect?${new URLSearchParams({
        renderer,
        modelId,
        ...(maxInputTokens === undefined ? {} : { maxInputTokens: String(maxInputTokens) }),
      })}`,
    ),
  budgetedCall: (
    chatId: string,
    maxInputTokens: number,
    renderer: RendererName,
  ): Promise<BudgetedCall> =>
    request('POST', `/api/chats/${encodeURIComponent(chatId)}/budgeted-call`, {
      maxInputTokens,
      renderer,
    }),
};

/**
 * Sends a user message and streams the model's reply: `onDelta` gets each piece of text; the
 * promise resolves with the chat after both messages are saved.
 */
export async function streamReply(
  chatId: string,
  text: string,
  renderer: RendererName,
  onDelta: (text: string) => void,
): Promise<ChatView> {
  const response = await fetch(`/api/chats/${encodeURIComponent(chatId)}/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [USER_HEADER]: currentUser },
    body: JSON.stringify({ text, renderer }),
  });
  if (!response.ok || response.body === null) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += value;
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      const event = JSON.parse(line) as ReplyEvent;
      if (event.type === 'delta') onDelta(event.text);
      else if (event.type === 'done') return event.view;
      else throw new ApiError(502, 'ModelError', event.message);
    }
    if (done) break;
  }
  throw new ApiError(502, 'ModelError', 'The reply stream ended before the model finished.');
}
