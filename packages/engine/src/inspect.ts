import {
  type BranchRecord,
  type ChatGraph,
  type ChatRecord,
  type CheckpointRecord,
  type CompactionRecord,
  type ContextFragment,
  type ContextRenderer,
  isFragment,
  type JsonValue,
  type MessageNodeRecord,
  readCompaction,
  type ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { DEFAULT_MODEL_PRICES, findModelPrice, type ModelPrices } from './model-prices';

/** Options of `ContextEngine.inspect`. */
export interface InspectOptions {
  /** The model the prompt is meant for (`'openai:gpt-4o'`, `'gpt-4.1-mini'`), for the cost estimate. */
  modelId?: string;
  /** How to render the context fragments; defaults to the engine's renderer. */
  renderer?: ContextRenderer;
  /** Prices (USD per million input tokens) for this call, over the engine's and the built-in ones. */
  prices?: ModelPrices;
}

/** The token and cost estimate of what `resolve()` would send. */
export interface InspectEstimate {
  /** The model asked about, if any. */
  modelId: string | null;
  /** The tokenizer used (OpenAI's o200k_base; other vendors' counts differ somewhat). */
  tokenizer: 'o200k_base';
  /** Tokens of the system prompt plus every message's text and parts. */
  tokens: number;
  /** The split of `tokens`. */
  breakdown: { systemPrompt: number; persisted: number; pending: number };
  /** Input cost in USD, or null when the model's price is not known (see `note`). */
  cost: number | null;
  /** The price used, USD per million input tokens, or null. */
  pricePerMillionInputTokens: number | null;
  /** Why there is no cost, or what the figure covers. */
  note: string;
}

/** A node of the inspected graph. */
export interface InspectNode {
  id: string;
  parentId: string | null;
  role: string;
  sequence: number;
  /** The message's text parts, joined (a preview; the full message is in the lanes). */
  text: string;
  createdAt: number;
}

/** A compaction node of the inspected graph: the span it replaces and what that saved. */
export interface InspectCompaction {
  /** The compaction node's id. */
  id: string;
  /** The last node the span covers. */
  boundaryId: string;
  /** The compaction whose view the span starts with, or null (from the root). */
  previousCompactionId: string | null;
  /** How many messages the summary replaces. */
  coveredMessages: number;
  /** Tokens of the span, of the summary, and saved (`covered - summary`). */
  tokens: CompactionRecord['tokens'];
  /** When it was made. */
  createdAt: number;
  /** True when it shapes what the active branch sends now (the newest on its chain). */
  applied: boolean;
}

/** The JSON-safe snapshot `ContextEngine.inspect` returns. */
export interface InspectSnapshot {
  estimate: InspectEstimate;
  /** The rendered system prompt. */
  rendered: string;
  /** The three lanes. */
  fragments: {
    /** The context fragments as plain JSON (codecs and functions left out). */
    context: JsonValue[];
    /** Messages waiting for `save()`, encoded. */
    pending: UIMessage[];
    /** The branch's saved messages, oldest first. */
    persisted: UIMessage[];
    /** Saved messages that no longer validate, with the reason. */
    invalid: Array<{ id: string; error: string }>;
  };
  /** The chat's whole graph. */
  graph: { nodes: InspectNode[]; branches: BranchRecord[]; checkpoints: CheckpointRecord[] };
  /** Every compaction node of the chat, oldest first. */
  compactions: InspectCompaction[];
  /** Where the engine stands. */
  meta: {
    chatId: string;
    userId: string;
    branch: string;
    headMessageId: string | null;
    renderer: string;
    timestamp: number;
    chat: ChatRecord;
  };
}

/** Everything {@link buildSnapshot} needs from the engine. */
export interface SnapshotInput {
  options: InspectOptions;
  prices: ModelPrices | undefined;
  rendererFormat: string;
  rendered: string;
  context: readonly ContextFragment[];
  pending: readonly UIMessage[];
  persisted: ReadonlyArray<{
    node: MessageNodeRecord;
    message: UIMessage | null;
    error: ValidationError | null;
  }>;
  graph: ChatGraph;
  chatId: string;
  userId: string;
  branch: string;
  headMessageId: string | null;
  /** The compaction node that shapes the active branch's conversation, if any. */
  appliedCompactionId: string | null;
}

/** Builds the snapshot; loads the tokenizer on first use so `resolve()` never pays for it. */
export async function buildSnapshot(input: SnapshotInput): Promise<InspectSnapshot> {
  const { countTokens, messageTokens } = await loadTokenCounter();
  const persisted = input.persisted.flatMap((entry) => (entry.message ? [entry.message] : []));
  const breakdown = {
    systemPrompt: input.rendered === '' ? 0 : countTokens(input.rendered),
    persisted: messageTokens(persisted),
    pending: messageTokens(input.pending),
  };
  const tokens = breakdown.systemPrompt + breakdown.persisted + breakdown.pending;
  return {
    estimate: estimate(tokens, breakdown, input.options.modelId ?? null, {
      ...DEFAULT_MODEL_PRICES,
      ...input.prices,
      ...input.options.prices,
    }),
    rendered: input.rendered,
    fragments: {
      context: input.context.map((fragment) => toJson(fragment, 0)),
      pending: input.pending.slice(),
      persisted,
      invalid: input.persisted.flatMap((entry) =>
        entry.error ? [{ id: entry.node.id, error: entry.error.message }] : [],
      ),
    },
    graph: {
      nodes: input.graph.nodes.map((node) => ({
        id: node.id,
        parentId: node.parentId,
        role: node.message.role,
        sequence: node.sequence,
        text: messageText(node.message as unknown as UIMessage),
        createdAt: node.createdAt,
      })),
      branches: input.graph.branches.slice(),
      checkpoints: input.graph.checkpoints.slice(),
    },
    compactions: input.graph.nodes.flatMap((node) => {
      const record = readCompaction(node.message);
      if (record === null) return [];
      return [
        {
          id: node.id,
          boundaryId: record.boundaryId,
          previousCompactionId: record.previousCompactionId,
          coveredMessages: record.coveredMessages,
          tokens: record.tokens,
          createdAt: record.createdAt,
          applied: node.id === input.appliedCompactionId,
        },
      ];
    }),
    meta: {
      chatId: input.chatId,
      userId: input.userId,
      branch: input.branch,
      headMessageId: input.headMessageId,
      renderer: input.rendererFormat,
      timestamp: Date.now(),
      chat: input.graph.chat,
    },
  };
}

/** Counts tokens the way `inspect()` estimates them (o200k, loaded on first use). */
export interface TokenCounter {
  /** The tokenizer's name. */
  readonly tokenizer: 'o200k_base';
  /** Tokens of a text. */
  countTokens(text: string): number;
  /** Tokens of messages: their text parts, and other parts as JSON. */
  messageTokens(messages: readonly UIMessage[]): number;
}

/** Loads the counter `inspect()` uses; `resolve()` never pays for it. */
export async function loadTokenCounter(): Promise<TokenCounter> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  return {
    tokenizer: 'o200k_base',
    countTokens,
    messageTokens: (messages) =>
      messages.reduce((total, message) => total + countTokens(messageText(message)), 0),
  };
}

function estimate(
  tokens: number,
  breakdown: InspectEstimate['breakdown'],
  modelId: string | null,
  prices: ModelPrices,
): InspectEstimate {
  const base = { modelId, tokenizer: 'o200k_base' as const, tokens, breakdown };
  if (modelId === null) {
    return {
      ...base,
      cost: null,
      pricePerMillionInputTokens: null,
      note: 'No modelId given, so no cost estimate.',
    };
  }
  const found = findModelPrice(modelId, prices);
  if (found === undefined) {
    return {
      ...base,
      cost: null,
      pricePerMillionInputTokens: null,
      note: `The price of "${modelId}" is not known; pass prices: { "${modelId}": <USD per million input tokens> } for a cost.`,
    };
  }
  return {
    ...base,
    cost: (tokens * found.price) / 1_000_000,
    pricePerMillionInputTokens: found.price,
    note: `Input tokens only, at ${found.price} USD per million (${found.model}).`,
  };
}

/** The text a message contributes to a prompt: its text parts, and other parts as JSON. */
function messageText(message: UIMessage): string {
  return message.parts
    .map((part) =>
      part.type === 'text' || part.type === 'reasoning' ? part.text : JSON.stringify(part),
    )
    .join('\n');
}

function toJson(value: unknown, depth: number): JsonValue {
  if (depth > 64) return '[too deep]';
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value))
    return value.filter((item) => item !== undefined).map((item) => toJson(item, depth + 1));
  if (isFragment(value)) {
    const result: { [key: string]: JsonValue } = {
      name: value.name,
      data: toJson(value.data, depth + 1),
    };
    if (value.id !== undefined) result.id = value.id;
    if (value.type !== undefined) result.type = value.type;
    return result;
  }
  if (typeof value === 'object') {
    const result: { [key: string]: JsonValue } = {};
    for (const [key, entry] of Object.entries(value)) {
      if (entry !== undefined && typeof entry !== 'function')
        result[key] = toJson(entry, depth + 1);
    }
    return result;
  }
  return String(value);
}
