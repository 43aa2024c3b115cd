import { BranchNotFoundError, ValidationError } from '../../errors/errors';
import { assertIdentifier } from '../../rules/identifiers';
import type { PruneInput } from '../retention';
import { assertInputObject, assertOptionalBoolean } from './input-checks';

// The shared half of `prune`: the input checks, the rules for deleting branches (never the
// active one without naming the next, never every branch) and reachability, so a store keeps
// only the atomic read-and-delete.

/** `prune` input, checked. */
export interface PreparedPrune {
  /** The chat. */
  readonly chatId: string;
  /** Branches to delete, each once, in the order asked. */
  readonly deleteBranches: readonly string[];
  /** The branch to make active when the active one is deleted, or undefined. */
  readonly activate: string | undefined;
  /** Report only. */
  readonly dryRun: boolean;
}

function pruneProblem(field: string, problem: string): ValidationError {
  return new ValidationError(`prune(input): ${field} ${problem}. Nothing was changed.`, {
    issues: [{ path: field, message: problem }],
  });
}

/** Checks `prune` input: ids, `deleteBranches` an array of distinct names, `dryRun` a boolean. */
export function preparePrune(input: PruneInput): PreparedPrune {
  const method = 'prune(input)';
  assertInputObject(method, input);
  const { chatId, deleteBranches, activate, dryRun } = input;
  assertIdentifier(method, 'chatId', chatId);
  const names: string[] = [];
  if (deleteBranches !== undefined) {
    if (!Array.isArray(deleteBranches))
      throw pruneProblem('deleteBranches', 'must be an array of branch names');
    deleteBranches.forEach((name: unknown, index) => {
      assertIdentifier(method, `deleteBranches[${index}]`, name);
      if (names.includes(name))
        throw pruneProblem(`deleteBranches[${index}]`, `names "${name}" a second time`);
      names.push(name);
    });
  }
  if (activate !== undefined) {
    assertIdentifier(method, 'activate', activate);
    if (names.includes(activate))
      throw pruneProblem('activate', `names "${activate}", a branch being deleted`);
  }
  assertOptionalBoolean(method, 'dryRun', dryRun);
  return { chatId, deleteBranches: names, activate, dryRun: dryRun === true };
}

/**
 * The active branch after deleting `prune.deleteBranches` from a chat whose branches are
 * `branchNames` and whose active branch is `activeBranch`. Throws `BranchNotFoundError` for a
 * branch to delete (or to activate) that does not exist, and `ValidationError` when the active
 * branch goes without `activate`, when `activate` is given though the active branch stays, or
 * when no branch would be left. Call it inside the write, on the state the write sees.
 */
export function activeBranchAfterPrune(
  prune: PreparedPrune,
  activeBranch: string,
  branchNames: readonly string[],
): string {
  for (const name of prune.deleteBranches) {
    if (!branchNames.includes(name)) throw new BranchNotFoundError(prune.chatId, name);
  }
  if (prune.deleteBranches.length === 0 || !prune.deleteBranches.includes(activeBranch)) {
    if (prune.activate !== undefined)
      throw pruneProblem(
        'activate',
        `is only for deleting the active branch ("${activeBranch}"), which stays; use setActiveBranch`,
      );
    return activeBranch;
  }
  if (branchNames.length === prune.deleteBranches.length)
    throw pruneProblem(
      'deleteBranches',
      'names every branch of the chat; a chat keeps at least one (delete the chat instead)',
    );
  if (prune.activate === undefined)
    throw pruneProblem(
      'activate',
      `is required: "${activeBranch}" is the active branch, so say which branch becomes active`,
    );
  if (!branchNames.includes(prune.activate))
    throw new BranchNotFoundError(prune.chatId, prune.activate);
  return prune.activate;
}

/** A node as reachability needs it. */
export interface LinkedNode {
  /** The node id. */
  readonly id: string;
  /** Its parent, or null for a root. */
  readonly parentId: string | null;
}

/**
 * The ids of the nodes that none of `pointers` (branch heads and checkpoint nodes; null for an
 * empty branch) reaches: a pointer reaches its node and every ancestor. The set is closed under
 * descendants (a node's child is never reachable when the node is not), so removing it leaves no
 * node without its parent. O(nodes).
 */
export function unreachableNodes(
  nodes: ReadonlyMap<string, LinkedNode>,
  pointers: Iterable<string | null>,
): Set<string> {
  const reachable = new Set<string>();
  for (const pointer of pointers) {
    let current = pointer;
    while (current !== null && !reachable.has(current)) {
      reachable.add(current);
      current = nodes.get(current)?.parentId ?? null;
    }
  }
  const unreachable = new Set<string>();
  for (const id of nodes.keys()) if (!reachable.has(id)) unreachable.add(id);
  return unreachable;
}
