import type { UIMessage } from 'ai';
import type { ChainCache, ChainEntry } from '../session/chain-cache';
import { type AppliedCompaction, appliedCompaction } from '../session/chain-reads';

/**
 * The message id of the newest node with `role` among those the chain shows (a message hidden
 * behind a compaction's summary is never the target of a lazy correction, warm or cold), or
 * undefined. (The node's own id may differ from it: message versions.)
 */
export function lastShownIdWithRole(chain: ChainCache, role: string): string | undefined {
  const id = chain.lastIdWithRole(role);
  if (id === undefined) return undefined;
  const compaction = appliedCompaction(chain);
  if (compaction !== undefined && (chain.position(id) ?? -1) <= compaction.boundaryPosition)
    return undefined;
  return chain.node(id)?.message.id ?? id;
}

/** The conversation a chain shows, entry by entry. */
export interface VisibleConversation {
  /** The compaction it is shown through, if any. */
  readonly compaction: AppliedCompaction | undefined;
  /** The entries shown, in order (the summary first when a compaction applies). */
  readonly entries: readonly ChainEntry[];
  /** Their valid messages, in order (a fresh array the caller may change). */
  readonly messages: UIMessage[];
  /** The position of a message among `messages`, by message id. */
  position(id: string): number | undefined;
  /** The first entry shown that no longer validates, if any. */
  readonly invalid: ChainEntry | undefined;
}

/**
 * What a chain shows: without a compaction, every node; through one, its summary in place of the
 * span, then the kept messages (after the boundary), then what came after the compaction node.
 * Older compaction nodes after the boundary are covered by the newer summary and not shown.
 */
export function visibleConversation(chain: ChainCache): VisibleConversation {
  const compaction = appliedCompaction(chain);
  if (compaction === undefined) {
    return {
      compaction,
      entries: chain.entries,
      messages: chain.messages.slice(),
      position: (id) => {
        const nodeId = chain.nodeIdOf(id);
        return nodeId === undefined ? undefined : chain.messagePosition(nodeId);
      },
      invalid:
        chain.invalidCount > 0
          ? chain.entries.find((entry) => entry.message === null && entry.error !== null)
          : undefined,
    };
  }
  const entries: ChainEntry[] = [compaction.entry];
  const compactions = chain.compactionPositions;
  let next = compactions.findIndex((position) => position > compaction.boundaryPosition);
  for (let index = compaction.boundaryPosition + 1; index < chain.entries.length; index += 1) {
    if (next >= 0 && compactions[next] === index) {
      next = next + 1 < compactions.length ? next + 1 : -1;
      continue;
    }
    entries.push(chain.entries[index] as ChainEntry);
  }
  const messages: UIMessage[] = [];
  const positions = new Map<string, number>();
  let invalid: ChainEntry | undefined;
  for (const entry of entries) {
    if (entry.message === null) {
      if (entry.error !== null) invalid ??= entry;
      continue;
    }
    positions.set(entry.message.id, messages.length);
    messages.push(entry.message);
  }
  return { compaction, entries, messages, position: (id) => positions.get(id), invalid };
}

/** How many valid messages the chain shows (what `visibleConversation(chain).messages` holds). */
export function shownMessageCount(chain: ChainCache): number {
  const compaction = appliedCompaction(chain);
  if (compaction === undefined) return chain.messages.length;
  const compactions = new Set(chain.compactionPositions);
  let count = compaction.entry.message === null ? 0 : 1;
  for (let index = compaction.boundaryPosition + 1; index < chain.entries.length; index += 1) {
    if (!compactions.has(index) && chain.entries[index]?.message) count += 1;
  }
  return count;
}
