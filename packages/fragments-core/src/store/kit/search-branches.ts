/** A node of a chat's graph as {@link branchesHolding} reads it. */
export interface SkeletonNode {
  /** The node id. */
  readonly id: string;
  /** Its parent's id, or null for a root. */
  readonly parentId: string | null;
}

/** A branch as {@link branchesHolding} reads it. */
export interface BranchHead {
  /** The branch name. */
  readonly name: string;
  /** Its head node, or null while the branch is empty. */
  readonly headId: string | null;
}

/**
 * For each of `ids`, the branches whose chain holds it (the node is the branch's head or one of
 * its ancestors), in the order of `heads`. One pass numbers the nodes in depth-first order, so
 * each node's descendants are the interval from its own number to the last number in its
 * subtree; a branch holds a node when its head falls in that interval. O(nodes + ids × branches),
 * with no chain walked per branch, so a search's cost grows linearly with the chat however many
 * branches it has.
 *
 * `nodes` may be any part of the graph that is closed under descendants, such as every node from
 * some sequence on (a parent's sequence is always lower than its child's): a node whose parent is
 * not among them counts as a root, and a head not among them holds none of `ids`.
 */
export function branchesHolding(
  nodes: Iterable<SkeletonNode>,
  heads: readonly BranchHead[],
  ids: Iterable<string>,
): Map<string, string[]> {
  const children = new Map<string, string[]>();
  const present = new Set<string>();
  const parents: [string, string | null][] = [];
  for (const node of nodes) {
    present.add(node.id);
    parents.push([node.id, node.parentId]);
  }
  const roots: string[] = [];
  for (const [id, parentId] of parents) {
    if (parentId === null || !present.has(parentId)) {
      roots.push(id);
      continue;
    }
    const siblings = children.get(parentId);
    if (siblings === undefined) children.set(parentId, [id]);
    else siblings.push(id);
  }
  const entry = new Map<string, number>();
  const exit = new Map<string, number>();
  let counter = 0;
  // Iterative depth-first walk: a chat may be far deeper than the call stack.
  const stack: [string, boolean][] = roots.map((id): [string, boolean] => [id, false]);
  while (stack.length > 0) {
    const [id, done] = stack.pop() as [string, boolean];
    if (done) {
      exit.set(id, counter - 1);
      continue;
    }
    if (entry.has(id)) continue;
    entry.set(id, counter);
    counter += 1;
    stack.push([id, true]);
    for (const child of children.get(id) ?? []) stack.push([child, false]);
  }
  const result = new Map<string, string[]>();
  for (const id of ids) {
    const low = entry.get(id);
    const high = exit.get(id);
    const names: string[] = [];
    if (low !== undefined && high !== undefined) {
      for (const head of heads) {
        const at = head.headId === null ? undefined : entry.get(head.headId);
        if (at !== undefined && at >= low && at <= high) names.push(head.name);
      }
    }
    result.set(id, names);
  }
  return result;
}
