import {
  type ContextStore,
  compareBranchChains,
  type MessageNodeRecord,
  type StoredMessage,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { messageText } from '../inspect';
import { DEFAULT_MODEL_PRICES, findModelPrice, type ModelPrices } from '../model-prices';

/** Options of `ContextEngine.compareBranches`. */
export interface CompareBranchesOptions {
  /** The model whose input price turns each side's tokens into a cost (`'openai:gpt-4o'`). */
  modelId?: string;
  /** Prices (USD per million input tokens) for this call, over the engine's and the built-in ones. */
  prices?: ModelPrices;
}

/** One branch of a {@link BranchComparisonReport}. */
export interface BranchSideReport {
  /** The branch name. */
  branch: string;
  /** Its head, or null while it is empty. */
  headMessageId: string | null;
  /** The messages on this branch and not on the other, oldest first, as stored. */
  messages: StoredMessage[];
  /** Tokens of those messages (o200k_base, like `inspect()`). */
  tokens: number;
  /** `tokens` at the model's input price in USD, or null without a known `modelId`. */
  cost: number | null;
}

/** What `ContextEngine.compareBranches` returns. */
export interface BranchComparisonReport {
  /** The chat. */
  chatId: string;
  /** The newest message on both branches (where they part), or null when they share none. */
  commonAncestor: StoredMessage | null;
  /** The first branch asked about. */
  left: BranchSideReport;
  /** The second branch asked about. */
  right: BranchSideReport;
  /** Nodes read from the store: the two chains back to their meeting point, never the shared history. */
  nodesRead: number;
  /** The tokenizer behind `tokens`. */
  tokenizer: 'o200k_base';
  /** The model asked about, if any. */
  modelId: string | null;
  /** The price used, USD per million input tokens, or null. */
  pricePerMillionInputTokens: number | null;
}

/**
 * Compares two branches: `compareBranchChains` (the meeting point and each side's own nodes,
 * read only back to where they part), then the tokens and cost of each side's own messages.
 */
export async function compareBranches(
  store: ContextStore,
  chatId: string,
  left: string,
  right: string,
  options: CompareBranchesOptions,
  enginePrices: ModelPrices | undefined,
): Promise<BranchComparisonReport> {
  const comparison = await compareBranchChains(store, { chatId, left, right });
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const modelId = options.modelId ?? null;
  const price =
    modelId === null
      ? undefined
      : findModelPrice(modelId, { ...DEFAULT_MODEL_PRICES, ...enginePrices, ...options.prices });
  const side = (
    branch: string,
    headMessageId: string | null,
    nodes: readonly MessageNodeRecord[],
  ): BranchSideReport => {
    const tokens = nodes.reduce(
      (total, node) => total + countTokens(messageText(node.message as unknown as UIMessage)),
      0,
    );
    return {
      branch,
      headMessageId,
      messages: nodes.map((node) => node.message),
      tokens,
      cost: price === undefined ? null : (tokens * price.price) / 1_000_000,
    };
  };
  return {
    chatId,
    commonAncestor: comparison.commonAncestor?.message ?? null,
    left: side(left, comparison.left.headMessageId, comparison.left.messages),
    right: side(right, comparison.right.headMessageId, comparison.right.messages),
    nodesRead: comparison.nodesRead,
    tokenizer: 'o200k_base',
    modelId,
    pricePerMillionInputTokens: price?.price ?? null,
  };
}
