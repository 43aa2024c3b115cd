import type { BranchRecord, CheckpointRecord } from '@ctxgraph/fragments-core';
import type { GraphNodeView } from './api';

/** What {@link collapseGraph} needs to know about the chat's graph. */
export interface GraphInput {
  readonly nodes: readonly GraphNodeView[];
  readonly branches: readonly BranchRecord[];
  readonly checkpoints: readonly CheckpointRecord[];
  /** The messages of the active branch. */
  readonly activeIds: ReadonlySet<string>;
  /** The active branch's head, or null. */
  readonly headId: string | null;
}

/** How {@link collapseGraph} folds the graph. */
export interface CollapseOptions {
  /** Runs of at least this many plain messages fold into one item. @default 4 */
  readonly minimumRun?: number;
  /** The head and this many of its ancestors on the active branch always stay visible. @default 3 */
  readonly keepNearHead?: number;
  /** Runs (by the id of their first message) the user unfolded. */
  readonly expanded?: ReadonlySet<string>;
  /** Messages that must stay visible (the selected one, a search hit). */
  readonly pinned?: ReadonlySet<string>;
}

/** One message drawn as a node. */
export interface MessageItem {
  readonly kind: 'message';
  readonly id: string;
  readonly node: GraphNodeView;
  /** Branches whose head this message is. */
  readonly heads: readonly string[];
  /** Checkpoints on this message. */
  readonly checkpoints: readonly string[];
  /** On the active branch. */
  readonly onBranch: boolean;
  /** The active branch's head. */
  readonly isHead: boolean;
  /** Its place among its versions (see {@link versionPositions}), or null when it has none. */
  readonly version: VersionPosition | null;
}

/** A message's place among its versions: the `index`th (from 1) of `count`. */
export interface VersionPosition {
  readonly index: number;
  readonly count: number;
}

/**
 * Each message's place among its versions, for the messages that have some: the engine's
 * `versions()` rule, so the graph's "2/3" and the inspector's switch agree. The versions of a
 * message are the messages with the same parent and role (an edit, a regenerated reply), oldest
 * first; compaction nodes, branch summaries and dropped messages are never among them.
 */
export function versionPositions(
  nodes: readonly GraphNodeView[],
): ReadonlyMap<string, VersionPosition> {
  const groups = new Map<string, GraphNodeView[]>();
  for (const node of nodes) {
    if (node.compaction !== null || node.aside) continue;
    // JSON keeps a null parent (roots) apart from any id.
    const key = JSON.stringify([node.parentId, node.role]);
    const group = groups.get(key);
    if (group) group.push(node);
    else groups.set(key, [node]);
  }
  const positions = new Map<string, VersionPosition>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    group.sort((a, b) => a.sequence - b.sequence);
    group.forEach((node, at) => {
      positions.set(node.id, { index: at + 1, count: group.length });
    });
  }
  return positions;
}

/** A linear run of plain messages drawn as one node. */
export interface RunItem {
  readonly kind: 'run';
  /** `run:` and the id of its first message. */
  readonly id: string;
  /** Its messages, oldest first. */
  readonly messageIds: readonly string[];
  readonly onBranch: boolean;
}

/** A node of the drawn graph. */
export type GraphItem = MessageItem | RunItem;

/** An edge of the drawn graph. */
export interface GraphLink {
  readonly id: string;
  readonly source: string;
  readonly target: string;
  readonly onBranch: boolean;
}

/** The graph as drawn: messages, folded runs and the links between them. */
export interface DisplayGraph {
  readonly items: readonly GraphItem[];
  readonly links: readonly GraphLink[];
  /** The drawn item that holds each message (itself, or the run it was folded into). */
  readonly itemOf: ReadonlyMap<string, string>;
}

/** The id of the run item whose first message is `firstId`. */
export function runId(firstId: string): string {
  return `run:${firstId}`;
}

function groupBy<T>(entries: readonly T[], key: (entry: T) => string, value: (entry: T) => string) {
  const groups = new Map<string, string[]>();
  for (const entry of entries) {
    const list = groups.get(key(entry));
    if (list) list.push(value(entry));
    else groups.set(key(entry), [value(entry)]);
  }
  return groups;
}

/**
 * Folds the long linear stretches of a chat's graph so it stays readable from one message to
 * tens of thousands: a message stays visible when it is a root, a fork, a leaf, the first message
 * after a fork, a branch head, a compaction node, checkpointed, pinned or near the active head; every run of at least
 * `minimumRun` other messages in a row becomes one item ("… 37 messages"), unless unfolded.
 */
export function collapseGraph(input: GraphInput, options: CollapseOptions = {}): DisplayGraph {
  const minimumRun = options.minimumRun ?? 4;
  const keepNearHead = options.keepNearHead ?? 3;
  const expanded = options.expanded ?? new Set<string>();
  const pinned = options.pinned ?? new Set<string>();
  const byId = new Map(input.nodes.map((node) => [node.id, node]));
  const children = new Map<string, string[]>();
  for (const node of input.nodes) {
    if (node.parentId === null) continue;
    const list = children.get(node.parentId);
    if (list) list.push(node.id);
    else children.set(node.parentId, [node.id]);
  }
  const heads = groupBy(
    input.branches.filter((branch) => branch.headMessageId !== null),
    (branch) => branch.headMessageId as string,
    (branch) => branch.name,
  );
  const checkpoints = groupBy(
    input.checkpoints,
    (checkpoint) => checkpoint.messageId,
    (checkpoint) => checkpoint.name,
  );
  const nearHead = new Set<string>();
  for (
    let id = input.headId, left = keepNearHead + 1;
    id !== null && left > 0;
    id = byId.get(id)?.parentId ?? null, left -= 1
  ) {
    nearHead.add(id);
  }
  const childCount = (id: string) => children.get(id)?.length ?? 0;
  const isAnchor = (node: GraphNodeView): boolean =>
    node.parentId === null ||
    !byId.has(node.parentId) ||
    childCount(node.parentId) !== 1 ||
    childCount(node.id) !== 1 ||
    heads.has(node.id) ||
    node.compaction !== null ||
    checkpoints.has(node.id) ||
    nearHead.has(node.id) ||
    pinned.has(node.id);

  const versions = versionPositions(input.nodes);
  const itemOf = new Map<string, string>();
  const items: GraphItem[] = [];
  const ordered = [...input.nodes].sort((a, b) => a.sequence - b.sequence);
  for (const node of ordered) {
    if (itemOf.has(node.id)) continue;
    if (isAnchor(node)) {
      itemOf.set(node.id, node.id);
      items.push({
        kind: 'message',
        id: node.id,
        node,
        heads: heads.get(node.id) ?? [],
        checkpoints: checkpoints.get(node.id) ?? [],
        onBranch: input.activeIds.has(node.id),
        isHead: node.id === input.headId,
        version: versions.get(node.id) ?? null,
      });
      continue;
    }
    // The start of a run: follow the single child while it is plain too.
    const run: GraphNodeView[] = [node];
    for (;;) {
      const next = children.get(run[run.length - 1]!.id);
      const child = next?.length === 1 ? byId.get(next[0]!) : undefined;
      if (child === undefined || isAnchor(child)) break;
      run.push(child);
    }
    const id = runId(node.id);
    if (run.length >= minimumRun && !expanded.has(id)) {
      for (const member of run) itemOf.set(member.id, id);
      items.push({
        kind: 'run',
        id,
        messageIds: run.map((member) => member.id),
        onBranch: input.activeIds.has(node.id),
      });
    } else {
      for (const member of run) {
        itemOf.set(member.id, member.id);
        items.push({
          kind: 'message',
          id: member.id,
          node: member,
          heads: [],
          checkpoints: [],
          onBranch: input.activeIds.has(member.id),
          isHead: false,
          version: versions.get(member.id) ?? null,
        });
      }
    }
  }

  const links: GraphLink[] = [];
  for (const node of input.nodes) {
    if (node.parentId === null) continue;
    const source = itemOf.get(node.parentId);
    const target = itemOf.get(node.id);
    if (source === undefined || target === undefined || source === target) continue;
    links.push({
      id: `${source}->${target}`,
      source,
      target,
      onBranch: input.activeIds.has(node.id),
    });
  }
  return { items, links, itemOf };
}

/**
 * The messages a compaction node's summary replaces, oldest first: from its boundary up to the
 * previous compaction (whose summary opens the span) or the root. At most `limit` of them.
 */
export function compactedSpan(
  nodes: readonly GraphNodeView[],
  compaction: NonNullable<GraphNodeView['compaction']>,
  limit = 500,
): GraphNodeView[] {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const span: GraphNodeView[] = [];
  for (
    let node = byId.get(compaction.boundaryId);
    node !== undefined && span.length < limit;
    node = node.parentId === null ? undefined : byId.get(node.parentId)
  ) {
    span.push(node);
    if (node.id === compaction.previousCompactionId) break;
  }
  return span.reverse();
}
