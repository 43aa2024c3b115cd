// The cycle's reads by message id: the conversation to a message or a node, a message's versions,
// and the chat's most recently written node. Each positions the engine it is given itself
// (`continueFrom`, never the chat's active branch), so it reads the same on any engine of the chat.
import {
  type ContextEngine,
  type MessageVersion,
  type OverflowRetry,
  type PathVersions,
  usageOf,
} from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { ChatNotFoundForUserError } from '../errors';

/** The newest node holding `messageId`; a chat without it is refused as unknown. */
async function nodeOf(engine: ContextEngine, messageId: string): Promise<string> {
  const node = (await engine.findMessage(messageId))[0];
  if (node === undefined) {
    throw new ChatNotFoundForUserError(
      `Chat '${engine.chatId}' has no message '${messageId}': ask for a message id the chat holds.`,
    );
  }
  return node;
}

/**
 * The conversation from the root to `leaf` (a message id; the newest node holding it), or to the
 * most recently written message; [] for a chat without messages.
 */
export async function conversationTo<UI_MESSAGE extends UIMessage>(
  engine: ContextEngine,
  store: ContextStore,
  leaf: string | undefined,
): Promise<UI_MESSAGE[]> {
  const node = await leafNodeOf(engine, store, leaf);
  if (node === null) return [];
  return conversationToNode(engine, node);
}

/**
 * The node the conversation to `leaf` ends at (a message id; the newest node holding it), or the
 * most recently written node; null for a chat without messages.
 */
export async function leafNodeOf(
  engine: ContextEngine,
  store: ContextStore,
  leaf: string | undefined,
): Promise<string | null> {
  return leaf === undefined ? newestNode(store, engine.chatId) : nodeOf(engine, leaf);
}

/** The conversation from the root to a node (a version's `leafNodeId`). */
export async function conversationToNode<UI_MESSAGE extends UIMessage>(
  engine: ContextEngine,
  nodeId: string,
): Promise<UI_MESSAGE[]> {
  await engine.continueFrom(nodeId, { activate: false });
  return (await engine.resolve()).messages as UI_MESSAGE[];
}

/** The versions of a message (siblings holding its position), oldest first. */
export async function versionsOf<UI_MESSAGE extends UIMessage>(
  engine: ContextEngine,
  messageId: string,
): Promise<MessageVersion<UI_MESSAGE>[]> {
  return (await engine.versions(await nodeOf(engine, messageId))) as MessageVersion<UI_MESSAGE>[];
}

/**
 * The node written last in the chat (highest sequence), or null when it has none. A commit
 * moves a head to its last new node, a child comes after its parent, and a node outlives its
 * branch only when a checkpoint (or another branch) still reaches it: so the newest node is a
 * branch head or a checkpoint, and those are read (a few point reads), not the whole graph.
 */
export async function newestNode(store: ContextStore, chatId: string): Promise<string | null> {
  const heads = new Set<string>();
  for (const branch of await store.listBranches(chatId))
    if (branch.headMessageId !== null) heads.add(branch.headMessageId);
  for (const checkpoint of await store.listCheckpoints(chatId)) heads.add(checkpoint.messageId);
  let newest: { id: string; sequence: number } | null = null;
  for (const id of heads) {
    const node = await store.getMessage({ chatId, messageId: id });
    if (node !== null && (newest === null || node.sequence > newest.sequence)) newest = node;
  }
  return newest?.id ?? null;
}

/**
 * The outcome of each reply of `messages` (a path the engine just resolved) that was stopped or
 * whose process died, and the overflow retry of each reply whose first call the provider refused
 * as too long, by message id: one read of the path's nodes, with their engine records.
 */
export async function outcomesOf(
  engine: ContextEngine,
  store: ContextStore,
  messages: readonly UIMessage[],
): Promise<Pick<StoredConversation, 'outcomes' | 'retries'>> {
  const outcomes: Record<string, 'aborted' | 'interrupted'> = Object.create(null);
  const retries: Record<string, OverflowRetry> = Object.create(null);
  const last = messages.at(-1);
  const head = last === undefined ? undefined : engine.nodeIdOf(last.id);
  if (head === undefined) return { outcomes: { ...outcomes }, retries: { ...retries } };
  const { nodes } = await store.getChain({ chatId: engine.chatId, headMessageId: head });
  for (const node of nodes) {
    const usage = usageOf(node);
    const outcome = usage?.outcome;
    if (outcome === 'aborted' || outcome === 'interrupted') outcomes[node.message.id] = outcome;
    if (usage?.overflowRetry !== undefined) retries[node.message.id] = usage.overflowRetry;
  }
  // Plain objects for the app's JSON (spread defines every key as its own, `__proto__` too).
  return { outcomes: { ...outcomes }, retries: { ...retries } };
}

/**
 * A stored conversation as `cycle.conversation()` answers it: the path's messages, the outcome of
 * each stopped or interrupted reply, the node of each message, and the versions of each message
 * that has more than one. Plain JSON: the records are plain objects keyed by message id (any id,
 * `__proto__` included, is an own key).
 */
export interface StoredConversation<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The conversation from the root, oldest first. */
  messages: UI_MESSAGE[];
  /** By message id: each reply on the path that was stopped or whose process died. */
  outcomes: Record<string, 'aborted' | 'interrupted'>;
  /**
   * By message id: each reply on the path whose first call the provider refused as too long for
   * the model's context, answered by a retry with less history (`OverflowRetry`: the error's
   * `limit` and `sent`, the retry's `maxInputTokens`, `strategy` `'cut'` or `'compacted'`).
   */
  retries: Record<string, OverflowRetry>;
  /**
   * By message id: the node holding each message of the path. A message's versions share its
   * id and differ by node: this is the one shown, and what a new message that follows it names
   * as the body's `after`.
   */
  nodeIds: Record<string, string>;
  /** By message id: the messages of the path with more than one version. */
  versions: Record<string, ConversationVersions>;
}

/** The versions of one message of a {@link StoredConversation} (what a chat shows as "2 / 3"). */
export interface ConversationVersions {
  /** The 0-based position of the version on this path among `nodes`. */
  index: number;
  /**
   * Every version, oldest first: its node, and the newest node below it (`?node=` of the
   * messages route, or `cycle.conversation(chatId, { node })`, opens that version).
   */
  nodes: readonly { readonly nodeId: string; readonly leafNodeId: string }[];
}

/**
 * The node of each message of `messages` (a path the engine just resolved, so its cache holds
 * it) and the versions of those that have several, from one read of the chat's graph.
 */
export async function versionsAlong(
  engine: ContextEngine,
  messages: readonly UIMessage[],
): Promise<Pick<StoredConversation, 'nodeIds' | 'versions'>> {
  const nodeIds: Record<string, string> = Object.create(null);
  const byNode = new Map<string, string>();
  for (const message of messages) {
    const nodeId = engine.nodeIdOf(message.id);
    if (nodeId === undefined) continue;
    nodeIds[message.id] = nodeId;
    byNode.set(nodeId, message.id);
  }
  const versions: Record<string, ConversationVersions> = Object.create(null);
  const last = messages.at(-1);
  const head = last === undefined ? undefined : nodeIds[last.id];
  if (head !== undefined) {
    const points: readonly PathVersions[] = await engine.versionsOnPath(head);
    for (const point of points) {
      // Only the messages shown (a compaction's span is not).
      const messageId = byNode.get(point.nodeId);
      if (messageId === undefined) continue;
      versions[messageId] = {
        index: point.index,
        nodes: point.versions.map((each) => ({ nodeId: each.nodeId, leafNodeId: each.leafNodeId })),
      };
    }
  }
  // Plain objects for the app's JSON (spread defines every key as its own, `__proto__` too).
  return { nodeIds: { ...nodeIds }, versions: { ...versions } };
}
