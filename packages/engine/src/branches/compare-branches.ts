import {
  assertIdentifier,
  type ContextStore,
  type MessageNodeRecord,
  type StoredMessage,
  type Tokenizer,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { messageText } from '../budget/token-counter';
import { DEFAULT_MODEL_PRICES, type ModelPrices } from '../model-prices';
import type { ChatSession } from '../session/chat-session';
import { totalUsage, type UsageTotals } from '../usage/usage-totals';
import { readBranchesApart } from './common-ancestor';

/** Options of `ContextEngine.compareBranches`. */
export interface CompareBranchesOptions {
  /** Prices (USD per million tokens) for this call, over the engine's and the built-in ones. */
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
  /** Tokens of those messages' text, by the engine's tokenizer. */
  tokens: number;
  /**
   * The model usage recorded on those messages (`withUsage`, kept in each node's engine record): what
   * the calls that produced this side's replies consumed, and what they cost.
   */
  usage: UsageTotals;
  /** `usage.cost`: USD spent on this side's recorded calls, or null when none is priced. */
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
  /** The tokenizer behind `tokens` (`Tokenizer.id`). */
  tokenizer: string;
}

/** `compareBranches()`: see `ContextEngine.compareBranches`, with the engine's tokenizer and prices. */
export async function compareBranchesOf(
  session: ChatSession,
  left: string,
  right: string,
  options: CompareBranchesOptions | undefined,
): Promise<BranchComparisonReport> {
  assertIdentifier('compareBranches(left, right)', 'left', left);
  assertIdentifier('compareBranches(left, right)', 'right', right);
  await session.open();
  const { tokenizer, prices } = session.settings;
  return compareBranches(session.store, session.chatId, { left, right }, tokenizer, {
    ...prices,
    ...options?.prices,
  });
}

/**
 * Compares two branches: `readBranchesApart` (the meeting point and each side's own nodes,
 * read only back to where they part), then each side's tokens and recorded usage and cost.
 */
async function compareBranches(
  store: ContextStore,
  chatId: string,
  names: { readonly left: string; readonly right: string },
  tokenizer: Tokenizer,
  prices: ModelPrices,
): Promise<BranchComparisonReport> {
  const comparison = await readBranchesApart(store, { chatId, ...names });
  const side = (
    branch: string,
    headMessageId: string | null,
    nodes: readonly MessageNodeRecord[],
  ): BranchSideReport => {
    const messages = nodes.map((node) => node.message);
    const usage = totalUsage(nodes, { ...DEFAULT_MODEL_PRICES, ...prices });
    return {
      branch,
      headMessageId,
      messages,
      tokens: messages.reduce(
        (total, message) => total + tokenizer.count(messageText(message as unknown as UIMessage)),
        0,
      ),
      usage,
      cost: usage.cost,
    };
  };
  return {
    chatId,
    commonAncestor: comparison.commonAncestor?.message ?? null,
    left: side(names.left, comparison.left.headMessageId, comparison.left.messages),
    right: side(names.right, comparison.right.headMessageId, comparison.right.messages),
    nodesRead: comparison.nodesRead,
    tokenizer: tokenizer.id,
  };
}
