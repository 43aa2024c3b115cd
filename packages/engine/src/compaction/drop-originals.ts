import {
  type BranchRecord,
  type CheckpointRecord,
  type ContextStore,
  droppedMessage,
  EngineError,
  type MessageNodeRecord,
  readCompaction,
  readDropped,
  utf8Length,
} from '@ctxgraph/fragments-core';
import type { ChatSession } from '../session/chat-session';
import { conflictBehind, writeMessages } from '../session/write-messages';

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

/** Input of {@link dropCompactedOriginals} (the chat is the session's). */
export interface DropCompactedInput {
  /** Work out and report, write nothing. */
  readonly dryRun: boolean;
}

/** How many times the whole pass starts over after another writer moved a branch head. */
const ATTEMPTS = 5;

/** Every branch head and checkpoint of the chat, as one comparable string. */
function pointerKey(
  branches: readonly BranchRecord[],
  checkpoints: readonly CheckpointRecord[],
): string {
  return JSON.stringify([
    branches.map((branch) => [branch.name, branch.headMessageId]),
    checkpoints.map((checkpoint) => [checkpoint.name, checkpoint.messageId]),
  ]);
}

/** Every branch head and checkpoint of the chat as they are now, as one comparable string. */
async function pointers(store: ContextStore, chatId: string): Promise<string> {
  const branches = await store.listBranches(chatId);
  const checkpoints = await store.listCheckpoints(chatId);
  return pointerKey(branches, checkpoints);
}

/** One branch's share of the drop: the tombstones to commit on it at the head read. */
interface BranchDrop {
  readonly branch: string;
  readonly headId: string;
  readonly nodes: { readonly node: MessageNodeRecord; readonly compactionId: string }[];
}

/**
 * The chat's nodes as a forest, by position in `nodes`: each node's parent (-1 for a root) and
 * depth, a pre-order (a parent before its children, each subtree in one run) and each node's
 * place in it with its subtree's size, so "is a an ancestor of b" is two comparisons.
 */
interface Forest {
  readonly index: ReadonlyMap<string, number>;
  readonly parent: Int32Array;
  readonly depth: Int32Array;
  readonly preorder: Int32Array;
  readonly place: Int32Array;
  readonly size: Int32Array;
}

/** The forest of `nodes`, or undefined when it is not whole (a parent or a node missing). */
function forestOf(chatId: string, nodes: readonly MessageNodeRecord[]): Forest | undefined {
  const count = nodes.length;
  const index = new Map<string, number>();
  nodes.forEach((node, position) => {
    if (index.has(node.id))
      throw new EngineError(
        `prune({ compacted: 'drop' }): the store returned two nodes with id "${node.id}" in the graph of chat "${chatId}".`,
      );
    index.set(node.id, position);
  });
  const parent = new Int32Array(count);
  // Children as linked lists (first child, next sibling): no array per node.
  const firstChild = new Int32Array(count).fill(-1);
  const nextSibling = new Int32Array(count).fill(-1);
  const roots: number[] = [];
  for (let position = 0; position < count; position += 1) {
    const parentId = (nodes[position] as MessageNodeRecord).parentId;
    const parentPosition = parentId === null ? -1 : index.get(parentId);
    // A parent the read did not hold: the graph came from more than one moment.
    if (parentPosition === undefined) return undefined;
    parent[position] = parentPosition;
    if (parentPosition === -1) roots.push(position);
    else {
      nextSibling[position] = firstChild[parentPosition] as number;
      firstChild[parentPosition] = position;
    }
  }
  const depth = new Int32Array(count);
  const preorder = new Int32Array(count);
  const place = new Int32Array(count).fill(-1);
  let placed = 0;
  const stack: number[] = [];
  for (const root of roots) {
    stack.push(root);
    while (stack.length > 0) {
      const position = stack.pop() as number;
      place[position] = placed;
      preorder[placed] = position;
      placed += 1;
      for (
        let child = firstChild[position] as number;
        child !== -1;
        child = nextSibling[child] as number
      ) {
        depth[child] = (depth[position] as number) + 1;
        stack.push(child);
      }
    }
  }
  // Nodes no root leads to would form a cycle: not a graph any store writes.
  if (placed !== count) return undefined;
  const size = new Int32Array(count).fill(1);
  for (let at = count - 1; at >= 0; at -= 1) {
    const position = preorder[at] as number;
    const up = parent[position] as number;
    if (up !== -1) size[up] = (size[up] as number) + (size[position] as number);
  }
  return { index, parent, depth, preorder, place, size };
}

/**
 * Works out, from one read of the chat's graph, the originals every reader sees only through a
 * compaction's summary: a node is covered when each branch head and checkpoint at or below it
 * shows it behind a compaction (at or before the boundary of the compaction that chain is shown
 * through); one branch, or a checkpoint, that shows it in full keeps it.
 *
 * One pass down the forest and one back up, so the cost is the chat's nodes plus its branches
 * and checkpoints, however much their chains share. The compaction a chain is shown through is
 * the newest compaction node on it whose boundary is an earlier node of it; since the boundary
 * must be an ancestor of that node, it depends only on the node, and each node inherits its
 * parent's unless it is such a compaction itself. A pointer shows in full the nodes below its
 * boundary's depth; a node is shown when some pointer below it has its boundary above the node
 * (or has none), so only the shallowest boundary under each node matters.
 *
 * Returns undefined when the graph is not whole (a head, checkpoint or parent it does not hold):
 * a store that reads it from more than one moment; the caller starts over.
 */
async function planDrop(
  store: ContextStore,
  chatId: string,
): Promise<{ drops: BranchDrop[]; pointers: string } | undefined> {
  const graph = await store.getGraph(chatId);
  const { nodes, branches, checkpoints } = graph;
  const forest = forestOf(chatId, nodes);
  if (forest === undefined) return undefined;
  const { index, parent, depth, preorder, place, size } = forest;
  const count = nodes.length;
  const isAncestor = (above: number, below: number): boolean =>
    (place[above] as number) <= (place[below] as number) &&
    (place[below] as number) < (place[above] as number) + (size[above] as number);
  // Per node: the compaction its chain is shown through (-1: none), and that compaction's boundary.
  const through = new Int32Array(count).fill(-1);
  const boundary = new Int32Array(count).fill(-1);
  for (const position of preorder) {
    const record = readCompaction(nodes[position] as MessageNodeRecord);
    const boundaryPosition = record === null ? undefined : index.get(record.boundaryId);
    if (
      boundaryPosition !== undefined &&
      boundaryPosition !== position &&
      isAncestor(boundaryPosition, position)
    ) {
      through[position] = position;
      boundary[position] = boundaryPosition;
    } else {
      const up = parent[position] as number;
      through[position] = up === -1 ? -1 : (through[up] as number);
    }
  }
  // Per node, over the pointers at or below it: the shallowest depth of the boundary their
  // chains are shown through (-1 when one shows its whole chain, +Infinity when none reaches
  // it), the compaction behind that boundary, and the first branch (in listing order) reaching it.
  const shallowest = new Float64Array(count).fill(Number.POSITIVE_INFINITY);
  const coveredBy = new Int32Array(count).fill(-1);
  const firstBranch = new Int32Array(count).fill(branches.length);
  const point = (id: string): number | undefined => {
    const position = index.get(id);
    if (position === undefined) return undefined;
    const compaction = through[position] as number;
    const boundaryDepth =
      compaction === -1 ? -1 : (depth[boundary[compaction] as number] as number);
    if (boundaryDepth < (shallowest[position] as number)) {
      shallowest[position] = boundaryDepth;
      coveredBy[position] = compaction;
    }
    return position;
  };
  for (const [order, branch] of branches.entries()) {
    if (branch.headMessageId === null) continue;
    const position = point(branch.headMessageId);
    if (position === undefined) return undefined;
    firstBranch[position] = Math.min(firstBranch[position] as number, order);
  }
  for (const checkpoint of checkpoints)
    if (point(checkpoint.messageId) === undefined) return undefined;
  for (let at = count - 1; at >= 0; at -= 1) {
    const position = preorder[at] as number;
    const up = parent[position] as number;
    if (up === -1) continue;
    if ((shallowest[position] as number) < (shallowest[up] as number)) {
      shallowest[up] = shallowest[position] as number;
      coveredBy[up] = coveredBy[position] as number;
    }
    firstBranch[up] = Math.min(firstBranch[up] as number, firstBranch[position] as number);
  }
  // Each covered node is rewritten on the first branch that reaches it (nodes only checkpoints
  // reach stay: a commit needs a branch), oldest first.
  const perBranch = new Map<number, BranchDrop['nodes']>();
  const covered: number[] = [];
  for (let position = 0; position < count; position += 1) {
    const reach = shallowest[position] as number;
    if (reach === Number.POSITIVE_INFINITY || reach < (depth[position] as number)) continue;
    if ((firstBranch[position] as number) === branches.length) continue;
    if (readDropped(nodes[position] as MessageNodeRecord) !== null) continue;
    covered.push(position);
  }
  covered.sort(
    (left, right) =>
      (nodes[left] as MessageNodeRecord).sequence - (nodes[right] as MessageNodeRecord).sequence,
  );
  for (const position of covered) {
    const order = firstBranch[position] as number;
    const compaction = nodes[coveredBy[position] as number] as MessageNodeRecord;
    let share = perBranch.get(order);
    if (share === undefined) {
      share = [];
      perBranch.set(order, share);
    }
    share.push({ node: nodes[position] as MessageNodeRecord, compactionId: compaction.id });
  }
  const drops: BranchDrop[] = [...perBranch.entries()]
    .sort(([left], [right]) => left - right)
    .map(([order, share]) => {
      const branch = branches[order] as BranchRecord;
      return { branch: branch.name, headId: branch.headMessageId as string, nodes: share };
    });
  return { drops, pointers: pointerKey(branches, checkpoints) };
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
 * parts; an engine record whose `dropped` names the compaction). Each attempt reads the chat once
 * (`getGraph`: nodes, branches and checkpoints) and works out every node in one pass over it, so
 * it costs the chat's size, not branches times chain length. Each branch's share is one `commit`
 * of the existing ids at the head read (the v1 replace-in-place). Right before each commit the
 * branch heads and checkpoints are listed again: when any changed (a new branch or checkpoint
 * may need a node in full), or the commit meets a moved head, the whole pass starts over from
 * fresh reads (at most 5 times, then an `EngineError`); no turn is ever lost, and tombstones
 * already written stay.
 */
export async function dropCompactedOriginals(
  session: ChatSession,
  input: DropCompactedInput,
): Promise<CompactedDropReport> {
  const { store, chatId } = session;
  const droppedAt = Date.now();
  // Summed over the attempts: what one attempt committed is a tombstone the next one skips.
  const report: CompactedDropReport = { nodes: 0, bytes: 0, tombstoneBytes: 0, messageIds: [] };
  let conflict: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const plan = await planDrop(store, chatId);
    // A graph that is not whole (read from more than one moment) counts as a moved head.
    if (plan === undefined) continue;
    let restart = false;
    for (const drop of plan.drops) {
      const tombstones = drop.nodes.map(({ node, compactionId }) => ({
        original: node,
        tombstone: droppedMessage(node, { version: 1, compactionId, droppedAt }),
      }));
      if (!input.dryRun) {
        if ((await pointers(store, chatId)) !== plan.pointers) {
          restart = true;
          break;
        }
        try {
          await writeMessages(session, {
            method: "prune({ compacted: 'drop' })",
            branch: drop.branch,
            batch: tombstones.map(({ tombstone }) => tombstone),
            // The pass starts over on a moved head (it re-plans), so one attempt per commit.
            attach: { from: drop.headId },
            maxAttempts: 1,
          });
        } catch (error) {
          const moved = conflictBehind(error);
          if (moved === undefined) throw error;
          conflict = moved;
          restart = true;
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
    if (!restart) return report;
  }
  throw new EngineError(
    `prune({ compacted: 'drop' }): the branches or checkpoints of chat "${chatId}" changed during each of ${ATTEMPTS} attempts; ${report.nodes} originals were dropped before that, and no message was lost. Call prune again when writers are quieter.`,
    { cause: conflict },
  );
}
