import {
  assertIdentifier,
  type BranchRecord,
  type MessageNodeRecord,
  MessageNotFoundError,
  readBranchSummary,
  readCompaction,
  readDropped,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { visibleConversation } from '../compaction/compacted-view';
import { ChainCache } from '../session/chain-cache';
import { readConversationChain } from '../session/chain-reads';
import type { ChatSession } from '../session/chat-session';

// Writes addressed by what the caller saw (issue #26): position the engine at a node
// (`continueFrom`), find where a chat client's messages are in the graph (`locate`), and look
// messages up by the id the client uses (`findMessage`, `versions`, `nodeIdOf`). A message id is
// unique along a path, not across the chat: an edited message keeps its id on its new branch, as
// a node of its own (a version).

/** Options of {@link ContextEngine.continueFrom}. */
export interface ContinueFromOptions {
  /**
   * Make the branch the engine continues on the chat's active one: now, when the node is a
   * branch's head; otherwise in the same store transaction as the save that starts the branch.
   * @default false
   */
  readonly activate?: boolean;
  /**
   * When no branch has the node as its head but a compaction node the engine wrote follows it
   * directly as the head of the most recently written branch (a deferred compaction, run after
   * the reply a chat client continues from; the client never sees that node), continue after the
   * compaction instead of starting a branch at the node. Costs one read of that head, only when
   * the node is no branch's head.
   * @default false
   */
  readonly pastCompaction?: boolean;
}

/** What {@link ContextEngine.continueFrom} returns. */
export interface ContinueFromResult {
  /** The node the engine is positioned at (null: before the first message). */
  readonly nodeId: string | null;
  /**
   * The branch whose head it is, which the next save extends; null when no branch has it as its
   * head, so the next save starts one there.
   */
  readonly branch: string | null;
}

/** What {@link ContextEngine.locate} returns. */
export interface LocateResult {
  /** How many leading client messages are stored unchanged on one path. */
  readonly matched: number;
  /** Node ids of those messages, in order (length = matched). */
  readonly nodeIds: readonly string[];
  /**
   * When client message `matched` has a stored node with the same id at that position whose
   * content differs (an edited user message, an assistant message with a client-side tool
   * result): that node. Else null.
   */
  readonly changed: { readonly index: number; readonly nodeId: string } | null;
}

/**
 * One version of a message (what a chat shows as "2 / 3"): see {@link ContextEngine.versions}.
 * `UI_MESSAGE` is the app's UI message type (`@ctxgraph/ai-sdk` reads versions with it).
 */
export interface MessageVersion<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The node of this version (open it, or its newest leaf, with `continueFrom`). */
  readonly nodeId: string;
  /** Its message id (versions of an edited message share it; regenerated replies do not). */
  readonly messageId: string;
  /** The message as stored (without the engine's record). */
  readonly message: UI_MESSAGE;
  /** The newest node below it (itself when it has none): `continueFrom(leafNodeId)` opens it. */
  readonly leafNodeId: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
}

/** `continueFrom()`: positions the view at a node of the chat (see `ContextEngine.continueFrom`). */
export async function continueFrom(
  session: ChatSession,
  requested: string | null,
  activate: boolean,
  pastCompaction = false,
): Promise<ContinueFromResult> {
  let nodeId = requested;
  const method = 'continueFrom(nodeId)';
  if (nodeId !== null) assertIdentifier(method, 'nodeId', nodeId);
  await session.open();
  const { store, chatId, view } = session;
  const own = session.ownPosition;
  session.ownPosition = undefined;
  let branch: { readonly name: string } | undefined;
  if (nodeId !== null && nodeId === own && view.knowsHeadAt(nodeId)) {
    // Where `locate()` just placed the request, by the caller's snapshot: the node is the head of
    // the engine's branch, as its own last write left it. Nothing to read: the request's write
    // that follows is compare-and-set on that head, so a head another writer moved since is
    // caught there (the write starts its own branch at the node), and a node removed since (its
    // branch deleted, which moves no revision) is refused there, nothing written.
    branch = { name: view.branch };
  } else {
    if (nodeId !== null && (await store.getMessage({ chatId, messageId: nodeId })) === null)
      throw new MessageNotFoundError(chatId, nodeId);
    const branches = await store.listBranches(chatId);
    branch = branchWithHead(branches, nodeId, view.branch);
    if (branch === undefined && pastCompaction && nodeId !== null) {
      const after = await compactionAfter(session, branches, nodeId);
      if (after !== undefined) {
        nodeId = after.headMessageId;
        branch = after;
      }
    }
  }
  // A fork is named after the branch the engine was on (it always exists: `main` at first).
  view.pinAt(nodeId, branch?.name ?? null, view.branch, activate);
  // The path `locate()` just read (usually to this very node): taken as the cache instead of
  // reading and validating it again; `sync()` below still checks it against the chat's revision.
  const located = session.located;
  session.located = undefined;
  if (located !== undefined && !view.loaded) view.adopt(located);
  if (activate && branch !== undefined) await store.setActiveBranch({ chatId, name: branch.name });
  await view.sync();
  return { nodeId, branch: branch?.name ?? null };
}

/**
 * The most recently written branch when its head is a compaction node whose parent is `nodeId`
 * (one read: that head), else undefined.
 */
async function compactionAfter(
  session: ChatSession,
  branches: readonly BranchRecord[],
  nodeId: string,
): Promise<(BranchRecord & { headMessageId: string }) | undefined> {
  let newest: BranchRecord | undefined;
  for (const branch of branches)
    if (newest === undefined || branch.updatedAt >= newest.updatedAt) newest = branch;
  const headId = newest?.headMessageId;
  if (newest === undefined || headId === null || headId === undefined) return undefined;
  const head = await session.store.getMessage({ chatId: session.chatId, messageId: headId });
  if (head === null || head.parentId !== nodeId || readCompaction(head) === null) return undefined;
  return { ...newest, headMessageId: headId };
}

/**
 * The branch whose head is `nodeId`: the engine's own when it is one of them, else the most
 * recently updated (the newest on a tie); undefined when no branch has it as its head.
 */
function branchWithHead(
  branches: readonly BranchRecord[],
  nodeId: string | null,
  current: string,
): BranchRecord | undefined {
  let found: BranchRecord | undefined;
  for (const branch of branches) {
    if (branch.headMessageId !== nodeId) continue;
    if (branch.name === current) return branch;
    if (found === undefined || branch.updatedAt >= found.updatedAt) found = branch;
  }
  return found;
}

/** The message ids a client sent, checked: an array of objects with a string `id`. */
function clientIds(messages: unknown): string[] {
  const method = 'locate(messages)';
  if (!Array.isArray(messages)) {
    throw new ValidationError(`${method}: messages must be an array of UI messages.`, {
      issues: [{ path: 'messages', message: 'expected an array' }],
    });
  }
  return messages.map((message, index) => {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof message !== 'object' || message === null || typeof id !== 'string') {
      throw new ValidationError(
        `${method}: messages[${index}] must be a UI message with a string id.`,
        {
          issues: [{ path: `messages[${index}]`, message: 'expected a message with a string id' }],
        },
      );
    }
    return id;
  });
}

/** Whether `id` could be a stored message id (one the stores accept). */
function isStorableId(id: string): boolean {
  try {
    assertIdentifier('locate(messages)', 'id', id);
    return true;
  } catch {
    return false;
  }
}

/** The nodes holding a message id, newest first, through the store's index. */
function nodesOfMessage(
  session: ChatSession,
  messageId: string,
): Promise<readonly MessageNodeRecord[]> {
  return session.store.findMessageNodes({ chatId: session.chatId, messageId, limit: 100 });
}

/** A path as the engine shows it, from the root, and the chain it was read from. */
interface ShownPath {
  readonly shown: readonly { readonly nodeId: string; readonly message: UIMessage }[];
  /** The chain read for it; undefined when the engine's own (synced) cache held it. */
  readonly read: ChainCache | undefined;
}

/**
 * The path to `nodeId` as the engine shows it (a compaction's summary in place of its span):
 * from the engine's cached chain when it holds the node (a warm engine: no read, once the cache
 * was synced with the chat's revision in this call), else read and validated.
 */
async function shownPath(
  session: ChatSession,
  nodeId: string,
  state: { synced: boolean },
): Promise<ShownPath> {
  const view = session.view;
  if (view.loaded) {
    if (!state.synced) {
      await view.sync();
      state.synced = true;
    }
    const cached = view.chainThrough(nodeId);
    if (cached !== undefined) return { shown: shownEntries(cached), read: undefined };
  }
  const nodes = await readConversationChain(session.store, session.chatId, nodeId);
  const cache = new ChainCache();
  cache.reset(await session.validator.entries(nodes));
  return { shown: shownEntries(cache), read: cache };
}

function shownEntries(chain: ChainCache): { nodeId: string; message: UIMessage }[] {
  const shown: { nodeId: string; message: UIMessage }[] = [];
  for (const entry of visibleConversation(chain).entries)
    if (entry.message !== null) shown.push({ nodeId: entry.node.id, message: entry.message });
  return shown;
}

/** `locate()`: see `ContextEngine.locate`. */
export async function locate(
  session: ChatSession,
  messages: readonly UIMessage[],
): Promise<LocateResult> {
  const ids = clientIds(messages);
  await session.open();
  const own = await locateOnOwnPath(session, messages);
  session.ownPosition = own === undefined ? undefined : (session.view.headMessageId ?? undefined);
  if (own !== undefined) {
    session.located = undefined;
    return own;
  }
  const state = { synced: false };
  // The chat revision known before any chain is read: what a chain read from here reflects at least.
  const revision = session.view.revision;
  let best: LocateResult = { matched: 0, nodeIds: [], changed: null };
  let bestRead: ChainCache | undefined;
  // Anchor at the newest client message the chat holds (usually the last or the one before it)
  // and compare the client's list with the path to each of its nodes: one index lookup and one
  // chain read in the usual case, whatever the length of the conversation.
  for (let anchor = ids.length - 1; anchor >= 0 && best.matched < anchor + 1; anchor -= 1) {
    const id = ids[anchor] as string;
    if (!isStorableId(id)) continue;
    const candidates = await nodesOfMessage(session, id);
    for (const candidate of candidates) {
      const path = await shownPath(session, candidate.id, state);
      const result = align(path.shown, messages);
      if (isBetter(result, best)) {
        best = result;
        bestRead = path.read;
      }
      if (best.matched === anchor + 1) break;
    }
    if (candidates.length > 0 && best.matched >= anchor) break;
  }
  // Kept for a `continueFrom()` to a node of the matched path (what a request cycle does next).
  session.located = bestRead === undefined ? undefined : { chain: bestRead, revision };
  return best;
}

/**
 * `locate()` without a read, when the engine's own path settles it: by the caller's snapshot the
 * engine is at the chat's newest node (its own last write, the chat's revision unmoved since) and
 * the client's messages are that path's whole conversation and more (so the request writes after
 * it, and that write finds a node removed since). The lookup by message id would find the same:
 * of the nodes holding the path's last message, the engine's position is the newest, and no node
 * is below it. (It could differ only through an older, identical copy of the whole conversation
 * with one of the client's later messages below it; the engine keeps to its own path then.)
 * Undefined when the lookup must decide.
 */
async function locateOnOwnPath(
  session: ChatSession,
  messages: readonly UIMessage[],
): Promise<LocateResult | undefined> {
  const view = session.view;
  if (!view.atNewestNode) return undefined;
  // By the snapshot: no read, unless it shows a rewrite the cache has not seen.
  await view.sync();
  const shown = shownEntries(view.chain);
  if (!view.atNewestNode || shown.at(-1)?.nodeId !== view.headMessageId) return undefined;
  if (messages.length <= shown.length) return undefined;
  const result = align(shown, messages);
  return result.matched === shown.length && result.changed === null ? result : undefined;
}

/** The client's messages against one stored path, from the root. */
function align(
  path: readonly { readonly nodeId: string; readonly message: UIMessage }[],
  messages: readonly UIMessage[],
): LocateResult {
  const nodeIds: string[] = [];
  const length = Math.min(path.length, messages.length);
  for (let index = 0; index < length; index += 1) {
    const stored = path[index] as { nodeId: string; message: UIMessage };
    const sent = messages[index] as UIMessage;
    if (stored.message.id !== sent.id) break;
    if (!sameContent(stored.message, sent))
      return { matched: index, nodeIds, changed: { index, nodeId: stored.nodeId } };
    nodeIds.push(stored.nodeId);
  }
  return { matched: nodeIds.length, nodeIds, changed: null };
}

/** More matched messages win; on a tie, a found change beats none; else the earlier (newer). */
function isBetter(result: LocateResult, best: LocateResult): boolean {
  if (result.matched !== best.matched) return result.matched > best.matched;
  return best.changed === null && result.changed !== null;
}

/** Equal role, parts and metadata, as JSON (key order aside, an undefined key as no key). */
function sameContent(stored: UIMessage, sent: UIMessage): boolean {
  return (
    stored.role === sent.role &&
    jsonEqual(stored.parts, sent.parts) &&
    jsonEqual(stored.metadata, sent.metadata)
  );
}

function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null)
    return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  if (Array.isArray(left)) {
    const other = right as unknown[];
    return (
      left.length === other.length && left.every((item, index) => jsonEqual(item, other[index]))
    );
  }
  const a = left as Record<string, unknown>;
  const b = right as Record<string, unknown>;
  const keys = (record: Record<string, unknown>): string[] =>
    Object.keys(record).filter((key) => record[key] !== undefined);
  const aKeys = keys(a);
  if (aKeys.length !== keys(b).length) return false;
  return aKeys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

/** `findMessage()`: the node ids holding a message id, newest first. */
export async function findMessage(
  session: ChatSession,
  messageId: string,
): Promise<readonly string[]> {
  assertIdentifier('findMessage(messageId)', 'messageId', messageId);
  await session.open();
  return (await nodesOfMessage(session, messageId)).map((node) => node.id);
}

/**
 * The newest node below each node of a graph (itself when it has none). Children always come
 * after their parent in sequence order, so one pass from the newest node back carries each
 * subtree's newest node up to its root. `nodes` sorted by sequence.
 */
function newestBelow(nodes: readonly MessageNodeRecord[]): Map<string, MessageNodeRecord> {
  const newest = new Map<string, MessageNodeRecord>();
  for (let index = nodes.length - 1; index >= 0; index -= 1) {
    const each = nodes[index] as MessageNodeRecord;
    const below = newest.get(each.id) ?? each;
    newest.set(each.id, below);
    if (each.parentId === null) continue;
    const parentBest = newest.get(each.parentId);
    if (parentBest === undefined || below.sequence > parentBest.sequence)
      newest.set(each.parentId, below);
  }
  return newest;
}

/**
 * Whether `each` is a version of `node`: same parent and role, and not an engine node
 * (compaction, branch summary, dropped) unless it is the node itself.
 */
function isVersionOf(each: MessageNodeRecord, node: MessageNodeRecord): boolean {
  return (
    each.parentId === node.parentId &&
    each.message.role === node.message.role &&
    (each.id === node.id ||
      (readCompaction(each) === null &&
        readBranchSummary(each) === null &&
        readDropped(each) === null))
  );
}

/** `versions()`: the siblings of a node with its role, oldest first, each with its newest leaf. */
export async function versions(
  session: ChatSession,
  nodeId: string,
): Promise<readonly MessageVersion[]> {
  assertIdentifier('versions(nodeId)', 'nodeId', nodeId);
  await session.open();
  const { store, chatId } = session;
  const graph = await store.getGraph(chatId);
  const node = graph.nodes.find((each) => each.id === nodeId);
  if (node === undefined) throw new MessageNotFoundError(chatId, nodeId);
  const nodes = [...graph.nodes].sort((left, right) => left.sequence - right.sequence);
  const newest = newestBelow(nodes);
  return nodes
    .filter((each) => isVersionOf(each, node))
    .map((each) => ({
      nodeId: each.id,
      messageId: each.message.id,
      message: each.message as unknown as UIMessage,
      leafNodeId: (newest.get(each.id) ?? each).id,
      createdAt: each.createdAt,
    }));
}

/**
 * A message on a path that has more than one version (what a chat shows as "2 / 3" beside it):
 * see {@link ContextEngine.versionsOnPath}.
 */
export interface PathVersions {
  /** The node on the path. */
  readonly nodeId: string;
  /** Its message id. */
  readonly messageId: string;
  /** Its 0-based position on the path, counted in nodes from the root. */
  readonly position: number;
  /** The 0-based index of the path's node in `versions` (the "2" of "2 / 3", less one). */
  readonly index: number;
  /**
   * The message's versions, oldest first (the path's node included): each node and the newest
   * node below it (`continueFrom(leafNodeId)` opens that version).
   */
  readonly versions: readonly { readonly nodeId: string; readonly leafNodeId: string }[];
}

/**
 * `versionsOnPath()`: for each node from the root to `nodeId` that has more than one version
 * (the rule of `versions()`), its versions, from one read of the graph.
 */
export async function versionsOnPath(
  session: ChatSession,
  nodeId: string,
): Promise<readonly PathVersions[]> {
  assertIdentifier('versionsOnPath(nodeId)', 'nodeId', nodeId);
  await session.open();
  const { store, chatId } = session;
  const graph = await store.getGraph(chatId);
  const byId = new Map<string, MessageNodeRecord>();
  for (const each of graph.nodes) byId.set(each.id, each);
  const leaf = byId.get(nodeId);
  if (leaf === undefined) throw new MessageNotFoundError(chatId, nodeId);
  const path: MessageNodeRecord[] = [];
  // A parent always has a lower sequence than its child, so the walk ends (the check guards a
  // store that broke that rule from looping).
  for (
    let at: MessageNodeRecord | undefined = leaf;
    at !== undefined && path.length <= graph.nodes.length;
    at = at.parentId === null ? undefined : byId.get(at.parentId)
  )
    path.push(at);
  path.reverse();
  const nodes = [...graph.nodes].sort((left, right) => left.sequence - right.sequence);
  const newest = newestBelow(nodes);
  // The children of each parent on the path, oldest first: siblings are looked at once.
  const onPath = new Set<string | null>(path.map((each) => each.parentId));
  const children = new Map<string | null, MessageNodeRecord[]>();
  for (const each of nodes) {
    if (!onPath.has(each.parentId)) continue;
    const list = children.get(each.parentId);
    if (list === undefined) children.set(each.parentId, [each]);
    else list.push(each);
  }
  const found: PathVersions[] = [];
  path.forEach((node, position) => {
    const siblings = (children.get(node.parentId) ?? []).filter((each) => isVersionOf(each, node));
    if (siblings.length < 2) return;
    found.push({
      nodeId: node.id,
      messageId: node.message.id,
      position,
      index: siblings.findIndex((each) => each.id === node.id),
      versions: siblings.map((each) => ({
        nodeId: each.id,
        leafNodeId: (newest.get(each.id) ?? each).id,
      })),
    });
  });
  return found;
}
