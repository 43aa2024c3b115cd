/**
 * What travels between the playground's server and its page: the JSON of every API answer, the
 * events of the streamed reply and the error body. Both sides import these types from here (the
 * page imports nothing from `src/server`), so a change to a shape is a compile error on both.
 * Type imports only, apart from the renderer names: nothing here runs a library.
 */
import type {
  BranchComparisonReport,
  BudgetReport,
  CompactionResult,
  InspectSnapshot,
} from '@ctxgraph/engine';
import type {
  BranchRecord,
  ChatRecord,
  CheckpointRecord,
  JsonValue,
  Page,
  PruneResult,
  SearchHit,
  ValidationIssue,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';

/** The renderers the playground offers, by the name the page uses. */
export const RENDERER_NAMES: readonly ['xml', 'markdown', 'toon'] = ['xml', 'markdown', 'toon'];

/** One of {@link RENDERER_NAMES}. */
export type RendererName = (typeof RENDERER_NAMES)[number];

/** The header that names the user a request is made for. */
export const USER_HEADER = 'x-ctxgraph-user';

/** What the page shows about the store in use. */
export interface StoreDescription {
  /** `sqlite`, `memory` or `postgres`. */
  readonly kind: 'sqlite' | 'memory' | 'postgres';
  /** The file, the database (password hidden), or where memory lives. */
  readonly location: string;
}

/** What `GET /api/info` answers. */
export interface PlaygroundInfo {
  /** The user the page starts as. */
  defaultUserId: string;
  /** The store in use. */
  store: StoreDescription;
  /** The model that answers, or null when replies are written by hand. */
  model: { modelId: string; baseURL: string | null } | null;
  /** The renderers `renderer` parameters accept. */
  renderers: RendererName[];
  /** Models whose input price the engine knows (for the cost estimates' model picker). */
  pricedModels: string[];
  /** The model estimates are for unless the page picks another: the configured one, or gpt-4o-mini. */
  defaultModelId: string;
}

/** A serialized context fragment (the JSON of `fromFragment`, or a named group): `{ type, … }`. */
export type SerializedFragment = { type: string; [field: string]: JsonValue };

/** A system prompt as one renderer writes it, with its size. */
export interface PromptPreview {
  /** The renderer. */
  readonly renderer: RendererName;
  /** The rendered system prompt ('' when rendering failed). */
  readonly prompt: string;
  /** Its length in tokens (OpenAI o200k_base). */
  readonly tokens: number;
  /** Characters in the prompt. */
  readonly characters: number;
  /** Why rendering failed, or null. */
  readonly error: string | null;
}

/** A message node as the page draws it. */
export interface GraphNodeView {
  /** The message id. */
  id: string;
  /** The node it follows, or null for a root. */
  parentId: string | null;
  /** `user`, `assistant`, … */
  role: string;
  /** Its place in the chat (the store's per-chat sequence). */
  sequence: number;
  /** Its text parts, joined. */
  text: string;
  /** What it replaces, when it is a compaction node (the engine's `compact()`), or null. */
  compaction: {
    /** The last message of the span it summarizes. */
    boundaryId: string;
    /** The compaction whose view the span starts from, or null from the root. */
    previousCompactionId: string | null;
    /** How many messages the summary replaces. */
    coveredMessages: number;
    /** Tokens each resolve after it no longer sends. */
    savedTokens: number;
  } | null;
}

/** Everything the page shows about one chat (the answer of most chat routes). */
export interface ChatView {
  /** The chat as stored. */
  chat: ChatRecord;
  /** The active branch. */
  branch: string;
  /** Its head, or null while it has no message. */
  headMessageId: string | null;
  /** The active branch's messages, oldest first. */
  messages: UIMessage[];
  /** The whole message graph, with every branch and checkpoint. */
  graph: { nodes: GraphNodeView[]; branches: BranchRecord[]; checkpoints: CheckpointRecord[] };
  /** The chat's context fragments, serialized. */
  context: JsonValue[];
  /** The context rendered by every renderer. */
  prompts: PromptPreview[];
}

/** What `GET /api/chats` answers. */
export type ChatPage = Page<ChatRecord>;

/** What `DELETE /api/chats/:id` answers. */
export interface DeletedChat {
  /** The chat that was deleted. */
  deleted: string;
}

/** What `POST /api/preview` answers: the draft as the server reads it, and its prompts. */
export interface PreviewResult {
  fragments: SerializedFragment[];
  prompts: PromptPreview[];
}

/** What a graph operation (rewind, checkpoints, restore, btw, switch) answers. */
export interface ChatOperation<T> {
  /** The branch or checkpoint the operation made or moved to. */
  result: T;
  /** The chat afterwards. */
  view: ChatView;
}

/**
 * One line of the NDJSON stream `POST /api/chats/:id/reply` answers: pieces of the reply, then
 * either the chat with both messages saved, or why the reply failed.
 */
export type ReplyEvent =
  | { type: 'delta'; text: string }
  | { type: 'done'; view: ChatView }
  | { type: 'error'; message: string };

/** The JSON body of every error response. */
export interface ErrorBody {
  error: {
    /** The error class name (`ValidationError`, `OwnershipError`, …) or `InternalError`. */
    name: string;
    /** What went wrong, for a person. */
    message: string;
    /** Each problem with its path, for validation errors. */
    issues?: readonly ValidationIssue[];
  };
}

/** What `POST /api/chats/:id/budgeted-call` answers: the report of `resolve({ budget })`. */
export interface BudgetedCall {
  /** The head the call was made at (one call per turn). */
  headMessageId: string | null;
  /** What was kept, left out, and how much of the prefix repeats the previous budgeted call. */
  budget: BudgetReport;
}

/** What `GET /api/chats/:id/inspect` answers: the engine's `inspect()` snapshot. */
export type InspectView = InspectSnapshot;

/** The report of a budgeted resolve, as the page shows it. */
export type BudgetView = BudgetReport;
/** What `GET /api/chats/:id/compare` answers: the engine's `compareBranches` report. */
export type BranchComparisonView = BranchComparisonReport;

/** What `GET /api/chats/:id/search` answers: a page of the engine's `search` hits. */
export type SearchResults = Page<SearchHit>;

/** What `POST /api/chats/:id/delete-branch` answers: what went (or would go), and the chat after. */
export interface BranchDeletion {
  /** The engine's `deleteBranch` result (`dryRun: true` when nothing changed). */
  result: PruneResult;
  /** The chat afterwards. */
  view: ChatView;
}

/** What `POST /api/chats/:id/compact` answers: what was written (null: nothing to compact), and the chat after. */
export interface Compaction {
  /** The engine's `compact()` result. */
  result: CompactionResult | null;
  /** The chat afterwards. */
  view: ChatView;
}
