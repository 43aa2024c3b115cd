import {
  BranchNotFoundError,
  type ContextStore,
  type MessageNodeRecord,
  ValidationError,
} from '@ctxgraph/fragments-core';

// The engine's branch comparison, without tokens or prices: where two branches part and what
// each holds of its own, read over any ContextStore's `getChain` paging. It moved here from
// fragments-core (#24), where the layer rule had pushed it because the conformance kit tested it;
// the conformance kit now tests the `getChain` paging it relies on directly.

/** Input of {@link readBranchesApart}. */
export interface BranchesApartInput {
  /** The chat. */
  readonly chatId: string;
  /** One branch. */
  readonly left: string;
  /** The other branch (may be the same one). */
  readonly right: string;
}

/** One side of {@link BranchesApart}. */
export interface BranchApart {
  /** The branch name. */
  readonly branch: string;
  /** Its head, or null while it is empty. */
  readonly headMessageId: string | null;
  /** The nodes on this branch's chain and not on the other's, oldest first. */
  readonly messages: readonly MessageNodeRecord[];
}

/** What {@link readBranchesApart} returns. */
export interface BranchesApart {
  /** The chat. */
  readonly chatId: string;
  /**
   * The newest node on both chains (where they part), or null when they share none (a branch is
   * empty, or the two grew from different roots).
   */
  readonly commonAncestor: MessageNodeRecord | null;
  /** The left branch and its own messages. */
  readonly left: BranchApart;
  /** The right branch and its own messages. */
  readonly right: BranchApart;
  /** How many nodes were read from the store in all (the cost of the comparison). */
  readonly nodesRead: number;
}

// Pages grow from the first size to the last, so a comparison of two branches that parted a few
// turns ago reads a few nodes, and one of long chains makes few round trips.
const FIRST_PAGE = 8;
const LARGEST_PAGE = 512;

/** The chain of one branch, read newest first, page by page. */
class ChainReader {
  readonly newestFirst: MessageNodeRecord[] = [];
  readonly ids = new Set<string>();
  #cursor: string | null;
  #pageSize = FIRST_PAGE;

  constructor(
    private readonly store: ContextStore,
    private readonly chatId: string,
    head: string | null,
  ) {
    this.#cursor = head;
  }

  get done(): boolean {
    return this.#cursor === null;
  }

  /** The sequence of the oldest node read so far (infinity before the first page). */
  get frontier(): number {
    return this.newestFirst.at(-1)?.sequence ?? Number.POSITIVE_INFINITY;
  }

  /** Reads the next page; returns its nodes, newest first. */
  async next(): Promise<MessageNodeRecord[]> {
    if (this.#cursor === null) return [];
    const page = await this.store.getChain({
      chatId: this.chatId,
      headMessageId: this.#cursor,
      limit: this.#pageSize,
    });
    this.#cursor = page.nextCursor;
    this.#pageSize = Math.min(this.#pageSize * 2, LARGEST_PAGE);
    const nodes = page.nodes.slice().reverse();
    for (const node of nodes) {
      this.newestFirst.push(node);
      this.ids.add(node.id);
    }
    return nodes;
  }

  /** The nodes read that are newer than the node at `index` of `newestFirst`, oldest first. */
  before(index: number): MessageNodeRecord[] {
    return this.newestFirst.slice(0, index).reverse();
  }
}

/**
 * Reads two branches of a chat apart over any `ContextStore`: where they part (the common
 * ancestor) and the messages unique to each side, oldest first.
 *
 * It reads only the two chains back to their meeting point (and at most one page past it on each
 * side), never whole chains: sequences grow along every chain, so it always reads from the side
 * whose oldest node read is newer, and the first node it reads that the other side has read is
 * the common ancestor (an older shared node can only be read after it). Pages grow from 8 to 512
 * nodes. `BranchNotFoundError` for an unknown branch.
 *
 * @example
 * ```ts
 * const { commonAncestor, left, right } = await readBranchesApart(store, {
 *   chatId: 'chat-1',
 *   left: 'main',
 *   right: 'main-v2',
 * });
 * ```
 */
export async function readBranchesApart(
  store: ContextStore,
  input: BranchesApartInput,
): Promise<BranchesApart> {
  if (typeof input !== 'object' || input === null)
    throw new ValidationError('readBranchesApart(store, input): input must be an object.', {
      issues: [{ path: 'input', message: 'expected an object' }],
    });
  const { chatId, left, right } = input;
  const [leftBranch, rightBranch] = await Promise.all([
    store.getBranch({ chatId, name: left }),
    store.getBranch({ chatId, name: right }),
  ]);
  if (leftBranch === null) throw new BranchNotFoundError(chatId, left);
  if (rightBranch === null) throw new BranchNotFoundError(chatId, right);
  const sides = [
    new ChainReader(store, chatId, leftBranch.headMessageId),
    new ChainReader(store, chatId, rightBranch.headMessageId),
  ] as const;
  const [leftReader, rightReader] = sides;
  let meeting: { readonly side: 0 | 1; readonly index: number } | undefined;
  while (meeting === undefined && !(leftReader.done && rightReader.done)) {
    // The side whose oldest node read is newer (a finished side never reads again).
    const side: 0 | 1 =
      rightReader.done || (!leftReader.done && leftReader.frontier >= rightReader.frontier) ? 0 : 1;
    const reader = sides[side];
    const other = sides[side === 0 ? 1 : 0];
    const start = reader.newestFirst.length;
    const nodes = await reader.next();
    const found = nodes.findIndex((node) => other.ids.has(node.id));
    if (found !== -1) meeting = { side, index: start + found };
  }
  const nodesRead = leftReader.newestFirst.length + rightReader.newestFirst.length;
  if (meeting === undefined) {
    // No shared node: both chains were read whole, and all of each is its own.
    return {
      chatId,
      commonAncestor: null,
      left: {
        branch: left,
        headMessageId: leftBranch.headMessageId,
        messages: leftReader.before(leftReader.newestFirst.length),
      },
      right: {
        branch: right,
        headMessageId: rightBranch.headMessageId,
        messages: rightReader.before(rightReader.newestFirst.length),
      },
      nodesRead,
    };
  }
  const finder = sides[meeting.side];
  const ancestor = finder.newestFirst[meeting.index] as MessageNodeRecord;
  const uniqueOf = (reader: ChainReader): MessageNodeRecord[] => {
    const index = reader.newestFirst.findIndex((node) => node.id === ancestor.id);
    return reader.before(index);
  };
  return {
    chatId,
    commonAncestor: ancestor,
    left: {
      branch: left,
      headMessageId: leftBranch.headMessageId,
      messages: uniqueOf(leftReader),
    },
    right: {
      branch: right,
      headMessageId: rightBranch.headMessageId,
      messages: uniqueOf(rightReader),
    },
    nodesRead,
  };
}
