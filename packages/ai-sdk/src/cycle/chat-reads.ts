// The cycle's reads by message id: the conversation to a message or a node, a message's versions,
// and the chat's most recently written node. Each positions the engine it is given itself
// (`continueFrom`, never the chat's active branch), so it reads the same on any engine of the chat.
import { type ContextEngine, type MessageVersion, usageOf } from '@ctxgraph/engine';
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
  const node =
    leaf === undefined ? await newestNode(store, engine.chatId) : await nodeOf(engine, leaf);
  if (node === null) return [];
  return conversationToNode(engine, node);
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
 * whose process died, by message id: one read of the path's nodes, with their engine records.
 */
export async function outcomesOf(
  engine: ContextEngine,
  store: ContextStore,
  messages: readonly UIMessage[],
): Promise<Record<string, 'aborted' | 'interrupted'>> {
  const outcomes: Record<string, 'aborted' | 'interrupted'> = Object.create(null);
  const last = messages.at(-1);
  const head = last === undefined ? undefined : engine.nodeIdOf(last.id);
  if (head === undefined) return outcomes;
  const { nodes } = await store.getChain({ chatId: engine.chatId, headMessageId: head });
  for (const node of nodes) {
    const outcome = usageOf(node)?.outcome;
    if (outcome === 'aborted' || outcome === 'interrupted') outcomes[node.message.id] = outcome;
  }
  // A plain object for the app's JSON (spread defines every key as its own, `__proto__` too).
  return { ...outcomes };
}
