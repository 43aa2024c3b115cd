import {
  type CompactionRecord,
  type ContextStore,
  EngineError,
  type MessageNodeRecord,
  readCompaction,
} from '@ctxgraph/fragments-core';
import type { ChainCache, ChainEntry } from './chain-cache';

/** The compaction a chain's conversation is shown through. */
export interface AppliedCompaction {
  /** The compaction node's entry (its message is the summary). */
  readonly entry: ChainEntry;
  /** Its record. */
  readonly record: CompactionRecord;
  /** Its position in the chain. */
  readonly position: number;
  /** The position of its boundary (the last node it covers) in the chain; -1 right before it. */
  readonly boundaryPosition: number;
}

/**
 * The compaction that shapes what a chain shows: the newest compaction node whose boundary is an
 * earlier node of the same chain. Undefined when none applies (then the chain shows every node).
 */
export function appliedCompaction(chain: ChainCache): AppliedCompaction | undefined {
  const positions = chain.compactionPositions;
  for (let index = positions.length - 1; index >= 0; index -= 1) {
    const position = positions[index] as number;
    const entry = chain.entries[position] as ChainEntry;
    const record = readCompaction(entry.node);
    if (record === null) continue;
    // A cold read stops right after the boundary: then it is the parent of the first entry.
    const boundaryPosition =
      chain.position(record.boundaryId) ??
      (chain.entries[0]?.node.parentId === record.boundaryId ? -1 : undefined);
    if (boundaryPosition !== undefined && boundaryPosition < position)
      return { entry, record, position, boundaryPosition };
    // The cache starts after some boundary: what lies before it is not here to judge.
    if (!chain.startsAtRoot) return undefined;
  }
  return undefined;
}

/**
 * True when the cache holds enough of the chain to show its conversation: the whole chain, or
 * everything after the boundary of the compaction that applies. A cold read stops at that
 * boundary; a rewind that cuts the compaction node off needs the older part again.
 */
export function holdsConversation(chain: ChainCache): boolean {
  return chain.startsAtRoot || appliedCompaction(chain) !== undefined;
}

/** A page of `getChain` a caller already read, to go on from. */
export interface ChainPageRead {
  readonly nodes: readonly MessageNodeRecord[];
  readonly nextCursor: string | null;
  readonly reachedUntil: boolean;
}

/**
 * Every node of the chain from `head` back to the root, oldest first: a store may page long
 * chains even without a limit, so this follows its cursor. With `first`, the walk goes on from a
 * page already read (whose `until` it met, or not) instead of reading `head` again.
 */
export async function readWholeChain(
  store: ContextStore,
  chatId: string,
  head: string,
  first?: ChainPageRead,
): Promise<MessageNodeRecord[]> {
  // Pages come newest first; collect them and join once (no quadratic copying on long chains).
  const pages: (readonly MessageNodeRecord[])[] = [];
  let cursor: string | null = head;
  if (first !== undefined) {
    pages.push(first.nodes);
    cursor = first.reachedUntil ? null : first.nextCursor;
  }
  while (cursor !== null) {
    const page = await store.getChain({ chatId, headMessageId: cursor });
    pages.push(page.nodes);
    cursor = page.nextCursor;
  }
  return pages.reverse().flat();
}

/**
 * Every stored node of the chain, root first, hidden ones included (for usage totals): the
 * cache, plus, when a cold read stopped at a boundary, the older part read now.
 */
export async function wholeChainNodes(
  store: ContextStore,
  chatId: string,
  chain: ChainCache,
): Promise<MessageNodeRecord[]> {
  const cached = chain.entries.map((entry) => entry.node);
  const from = chain.startsAtRoot ? null : (chain.entries[0]?.node.parentId ?? null);
  const older = from === null ? [] : await readWholeChain(store, chatId, from);
  return older.length === 0 ? cached : [...older, ...cached];
}

/** Page sizes of a cold read, newest first; after the last, the rest in one read. */
const COLD_PAGES = [64, 1024, 16_384] as const;

/**
 * Reads what a branch shows, cold: the chain from `head` back to the boundary of the newest
 * compaction node on it, or back to the root when there is none. The newest nodes come first in
 * pages (64, then 1,024, then 16,384, then the rest) until one holds a compaction node; then one
 * read with `until` takes exactly what lies between it and its boundary. A chain with a recent
 * compaction node costs a read of the kept messages, not of the history.
 */
export async function readConversationChain(
  store: ContextStore,
  chatId: string,
  head: string,
): Promise<MessageNodeRecord[]> {
  let nodes: MessageNodeRecord[] = [];
  let cursor: string | null = head;
  let page = 0;
  while (cursor !== null) {
    const limit: number | undefined = COLD_PAGES[page];
    page += 1;
    const read = await store.getChain({
      chatId,
      headMessageId: cursor,
      ...(limit === undefined ? {} : { limit }),
    });
    nodes = read.nodes.concat(nodes);
    cursor = read.nextCursor;
    const boundaryId = newestBoundary(read.nodes);
    if (boundaryId === undefined) continue;
    const boundaryIndex = nodes.findIndex((node) => node.id === boundaryId);
    if (boundaryIndex >= 0) {
      nodes = nodes.slice(boundaryIndex + 1);
      break;
    }
    // The boundary is older than this page: read back to it, and no further.
    while (cursor !== null) {
      const rest = await store.getChain({ chatId, headMessageId: cursor, until: boundaryId });
      nodes = rest.nodes.concat(nodes);
      cursor = rest.reachedUntil ? null : rest.nextCursor;
    }
    break;
  }
  if (nodes.length > 0 && nodes.at(-1)?.id !== head) {
    throw new EngineError(
      `The store returned a chain that does not end at head "${head}" of chat "${chatId}".`,
    );
  }
  return nodes;
}

/** The boundary of the newest compaction node among `nodes` (oldest first), if any. */
function newestBoundary(nodes: readonly MessageNodeRecord[]): string | undefined {
  for (let index = nodes.length - 1; index >= 0; index -= 1) {
    const record = readCompaction(nodes[index] as MessageNodeRecord);
    if (record !== null) return record.boundaryId;
  }
  return undefined;
}
