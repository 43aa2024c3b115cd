import type { ChatGraph } from '@ctxgraph/fragments-core';
import type { UsageOptions } from './context-engine-options';
import { DEFAULT_MODEL_PRICES, type ModelPrices } from './model-prices';
import { wholeChainNodes } from './session/chain-reads';
import type { ChatSession } from './session/chat-session';
import { totalUsage, type UsageTotals } from './usage/usage-totals';

/** The prices a call uses: its own, over the engine's, over the built-in table. */
export function pricesFor(session: ChatSession, prices: ModelPrices | undefined): ModelPrices {
  return { ...DEFAULT_MODEL_PRICES, ...session.settings.prices, ...prices };
}

/**
 * The usage recorded on the view's branch (synced by the caller), hidden nodes included: a cache
 * read back to a compaction's boundary holds only part of the chain, so the rest is read.
 */
export async function branchUsage(session: ChatSession, prices: ModelPrices): Promise<UsageTotals> {
  const nodes = await wholeChainNodes(session.store, session.chatId, session.view.chain);
  return totalUsage(nodes, prices);
}

/** `usage()`: opens the chat, then adds up its recorded usage with the prices asked for. */
export async function chatUsageOf(
  session: ChatSession,
  options: UsageOptions | undefined,
): Promise<UsageTotals> {
  await session.open();
  return chatUsage(session, options?.scope ?? 'branch', pricesFor(session, options?.prices));
}

/** The usage recorded over the active branch's saved messages, or every message of the chat. */
async function chatUsage(
  session: ChatSession,
  scope: 'branch' | 'chat',
  prices: ModelPrices,
): Promise<UsageTotals> {
  if (scope === 'chat') {
    const graph: ChatGraph = await session.store.getGraph(session.chatId);
    return totalUsage(graph.nodes, prices);
  }
  await session.view.sync();
  return branchUsage(session, prices);
}
