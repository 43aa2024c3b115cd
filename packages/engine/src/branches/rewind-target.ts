import type { MessageNodeRecord } from '@ctxgraph/fragments-core';
import type { ChatSession } from '../session/chat-session';

/** The most nodes of one message id the store's index is asked for (the contract's cap). */
const MOST_VERSIONS = 100;

/** The first page of the walk back along the path; each next page is four times larger. */
const FIRST_PAGE = 16;

/**
 * The node an id names for `rewind()`: the node of the engine's path with that id, else the
 * node of that path holding that message id; else, as a message id, its newest node; else the id
 * itself, as a node id (the store then says when it is missing).
 *
 * It costs what the id needs, never a read of the whole chain, so a rewind costs the same
 * whatever the history. A path the engine holds is looked up in memory. Otherwise the store's
 * index says which nodes the id can name; the usual answer is a single node. Only when the id can
 * name several nodes is the path read, from its head back to the oldest of them (a node's
 * ancestors all have lower sequences), and no further.
 */
export async function rewindTarget(session: ChatSession, id: string): Promise<string> {
  const { view, chatId, store } = session;
  if (view.loaded) {
    if (view.pathHas(id)) return id;
    const onPath = view.pathNodeIdOf(id);
    if (onPath !== undefined) return onPath;
    return (await store.findMessageNodes({ chatId, messageId: id, limit: 1 }))[0]?.id ?? id;
  }
  const holders = await store.findMessageNodes({ chatId, messageId: id, limit: MOST_VERSIONS });
  const newest = holders[0];
  // No node holds message `id`: it can only be a node id.
  if (newest === undefined) return id;
  const holdsItsOwn = holders.some((node) => node.id === id);
  if (holders.length === 1 && holdsItsOwn) return id;
  // A node whose id is `id` but whose message is another one is a candidate too (it comes first).
  const named = holdsItsOwn ? null : await store.getMessage({ chatId, messageId: id });
  if (holders.length === 1 && named === null) return newest.id;
  if (holders.length === MOST_VERSIONS) {
    // The index's answer may not hold them all: look on the whole path, as it is now.
    await view.sync();
    return rewindTarget(session, id);
  }
  const candidates = named === null ? holders : [named, ...holders];
  const onPath = await candidatesOnPath(session, candidates);
  if (named !== null && onPath.has(named.id)) return id;
  return holders.find((node) => onPath.has(node.id))?.id ?? newest.id;
}

/**
 * Which of `candidates` lie on the engine's path (the view's branch head as it is now, or the
 * engine's own position when pinned): read back from its head in growing pages until a node
 * older than every candidate, or the root.
 */
async function candidatesOnPath(
  session: ChatSession,
  candidates: readonly MessageNodeRecord[],
): Promise<Set<string>> {
  const { view, store, chatId } = session;
  const found = new Set<string>();
  const head = view.pinned
    ? view.headMessageId
    : (await store.getHead({ chatId, branch: view.branch })).headMessageId;
  const wanted = new Set(candidates.map((node) => node.id));
  const oldest = Math.min(...candidates.map((node) => node.sequence));
  let cursor = head;
  for (let limit = FIRST_PAGE; cursor !== null; limit *= 4) {
    const page = await store.getChain({ chatId, headMessageId: cursor, limit });
    for (let index = page.nodes.length - 1; index >= 0; index -= 1) {
      const node = page.nodes[index] as MessageNodeRecord;
      if (node.sequence < oldest) return found;
      if (wanted.has(node.id)) found.add(node.id);
    }
    cursor = page.nextCursor;
  }
  return found;
}
