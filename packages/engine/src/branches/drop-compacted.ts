import {
  type ContextStore,
  droppedMessage,
  EngineError,
  HeadConflictError,
  type MessageNodeRecord,
  readCompaction,
  readDropped,
} from '@ctxgraph/fragments-core';
import { utf8Length } from '@ctxgraph/fragments-core/store-kit';
import { readWholeChain } from '../compaction/compacted-view';

/** What `prune({ compacted: 'drop' })` dropped (or, with `dryRun`, would drop). */
export interface CompactedDropReport {
  /** The originals replaced by tombstones. */
  nodes: number;
  /** The UTF-8 bytes of the originals' stored message JSON (what goes). */
  bytes: number;
  /**
   * The UTF-8 bytes of the tombstones written in their place (about 150 each): the store shrinks
   * by `bytes - tombstoneBytes`.
   */
  tombstoneBytes: number;
  /** Their ids, oldest first per branch. */
  messageIds: string[];
}

/** Input of {@link dropCompactedOriginals}. */
export interface DropCompactedInput {
  /** The chat. */
  readonly chatId: string;
  /** Work out and report, write nothing. */
  readonly dryRun: boolean;
}

/** How many times the whole pass starts over after another writer moved a branch head. */
const ATTEMPTS = 5;

/**
 * The position of the boundary of the compaction a chain is shown through (the newest compaction
 * node whose boundary is an earlier node of the chain) and that node's id, or undefined.
 */
function coveredSpan(
  chain: readonly MessageNodeRecord[],
): { boundaryPosition: number; compactionId: string } | undefined {
  const positions = new Map(chain.map((node, index) => [node.id, index]));
  for (let index = chain.length - 1; index >= 0; index -= 1) {
    const node = chain[index] as MessageNodeRecord;
    const record = readCompaction(node);
    if (record === null) continue;
    const boundaryPosition = positions.get(record.boundaryId);
    if (boundaryPosition !== undefined && boundaryPosition < index)
      return { boundaryPosition, compactionId: node.id };
  }
  return undefined;
}

/** Every branch head and checkpoint of the chat, as one comparable string. */
async function pointers(store: ContextStore, chatId: string): Promise<string> {
  const branches = await store.listBranches(chatId);
  const checkpoints = await store.listCheckpoints(chatId);
  return JSON.stringify([
    branches.map((branch) => [branch.name, branch.headMessageId]),
    checkpoints.map((checkpoint) => [checkpoint.name, checkpoint.messageId]),
  ]);
}

/** One branch's share of the drop: the tombstones to commit on it at the head read. */
interface BranchDrop {
  readonly branch: string;
  readonly headId: string;
  readonly nodes: { readonly node: MessageNodeRecord; readonly compactionId: string }[];
}

/**
 * Works out, from every branch head and checkpoint of the chat, the originals every reader sees
 * only through a compaction's summary: a node is covered when each chain that reaches it shows
 * it behind a compaction (at or before that compaction's boundary). One branch, or a checkpoint,
 * that shows it in full keeps it.
 */
async function planDrop(
  store: ContextStore,
  chatId: string,
): Promise<{ drops: BranchDrop[]; pointers: string }> {
  const allBranches = await store.listBranches(chatId);
  const checkpoints = await store.listCheckpoints(chatId);
  const branches = allBranches.filter((branch) => branch.headMessageId !== null);
  // Per node: the compaction that covers it, or null once some reader shows it in full.
  const cover = new Map<string, string | null>();
  const judge = (chain: readonly MessageNodeRecord[]): void => {
    const span = coveredSpan(chain);
    chain.forEach((node, index) => {
      if (span !== undefined && index <= span.boundaryPosition) {
        if (!cover.has(node.id)) cover.set(node.id, span.compactionId);
      } else {
        cover.set(node.id, null);
      }
    });
  };
  const chains: { branch: string; headId: string; chain: MessageNodeRecord[] }[] = [];
  for (const branch of branches) {
    const headId = branch.headMessageId as string;
    const chain = await readWholeChain(store, chatId, headId);
    chains.push({ branch: branch.name, headId, chain });
    judge(chain);
  }
  for (const checkpoint of checkpoints)
    judge(await readWholeChain(store, chatId, checkpoint.messageId));
  // Each node is rewritten on the first branch that shows it (nodes only checkpoints reach stay).
  const assigned = new Set<string>();
  const drops: BranchDrop[] = [];
  for (const { branch, headId, chain } of chains) {
    const nodes: BranchDrop['nodes'] = [];
    for (const node of chain) {
      const compactionId = cover.get(node.id);
      if (typeof compactionId !== 'string' || assigned.has(node.id)) continue;
      if (readDropped(node) !== null) continue;
      assigned.add(node.id);
      nodes.push({ node, compactionId });
    }
    if (nodes.length > 0) drops.push({ branch, headId, nodes });
  }
  return {
    drops,
    pointers: JSON.stringify([
      allBranches.map((branch) => [branch.name, branch.headMessageId]),
      checkpoints.map((checkpoint) => [checkpoint.name, checkpoint.messageId]),
    ]),
  };
}

/** The stored size of a node's message and engine record. */
function recordBytes(node: { readonly message: unknown; readonly engineRecord?: unknown }): number {
  const record = node.engineRecord ?? null;
  return (
    utf8Length(JSON.stringify(node.message)) +
    (record === null ? 0 : utf8Length(JSON.stringify(record)))
  );
}

/**
 * Replaces, in place, the originals of a chat that every branch and checkpoint reaching them
 * shows only through a compaction's summary with tombstones (same id, parent and sequence; no
 * parts; an engine record whose `dropped` names the compaction). Each branch's share is one `commit`
 * of the existing ids at the head read (the v1 replace-in-place). Right before each commit the
 * branch heads and checkpoints are listed again: when any changed (a new branch or checkpoint
 * may need a node in full), or the commit meets a moved head, the whole pass starts over from
 * fresh reads (at most 5 times, then an `EngineError`); no turn is ever lost, and tombstones
 * already written stay.
 */
export async function dropCompactedOriginals(
  store: ContextStore,
  input: DropCompactedInput,
): Promise<CompactedDropReport> {
  const droppedAt = Date.now();
  // Summed over the attempts: what one attempt committed is a tombstone the next one skips.
  const report: CompactedDropReport = { nodes: 0, bytes: 0, tombstoneBytes: 0, messageIds: [] };
  let conflict: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const plan = await planDrop(store, input.chatId);
    let moved = false;
    for (const drop of plan.drops) {
      const tombstones = drop.nodes.map(({ node, compactionId }) => ({
        original: node,
        tombstone: droppedMessage(node, { version: 1, compactionId, droppedAt }),
      }));
      if (!input.dryRun) {
        if ((await pointers(store, input.chatId)) !== plan.pointers) {
          moved = true;
          break;
        }
        try {
          await store.commit({
            chatId: input.chatId,
            branch: drop.branch,
            expectedHeadId: drop.headId,
            messages: tombstones.map(({ tombstone }) => tombstone),
          });
        } catch (error) {
          if (!HeadConflictError.isInstance(error)) throw error;
          conflict = error;
          moved = true;
          break;
        }
      }
      for (const { original, tombstone } of tombstones) {
        report.nodes += 1;
        report.bytes += recordBytes(original);
        report.tombstoneBytes += recordBytes(tombstone);
        report.messageIds.push(original.id);
      }
    }
    if (!moved) return report;
  }
  throw new EngineError(
    `prune({ compacted: 'drop' }): the branches or checkpoints of chat "${input.chatId}" changed during each of ${ATTEMPTS} attempts; ${report.nodes} originals were dropped before that, and no message was lost. Call prune again when writers are quieter.`,
    { cause: conflict },
  );
}
