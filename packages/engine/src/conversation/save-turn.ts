import {
  assertIdentifier,
  type CommitMessage,
  type CompactionRecord,
  EngineError,
  type EngineRecord,
  MessageIdConflictError,
  type MessageNodeRecord,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { messageText } from '../budget/token-counter';
import { visibleConversation } from '../compaction/compacted-view';
import type { ChatSession } from '../session/chat-session';
import { type AttachPoint, writeMessages } from '../session/write-messages';
import { addUsage, PENDING_PROVIDER_COMPACTION } from '../usage/message-usage';
import type { PendingProviderCompaction } from '../usage/provider-compaction';
import { bindLazy } from './conversation';

/** How often a save picks another node id for a message version before it gives up. */
const MAX_VERSION_ATTEMPTS = 8;

/**
 * `save()`: the messages pending before `ticket`, lazy corrections bound, validated (a turn of
 * plain text messages at once, anything else by the AI SDK), written after the head in one store
 * call. On failure nothing was written and the messages stay pending.
 */
export async function saveTurn(session: ChatSession, ticket: number): Promise<void> {
  const { pending, view, validator } = session;
  const opened = session.isOpen ? undefined : await session.open();
  if (pending.before(ticket).length === 0) return;
  if (pending.hasUnbound(ticket)) {
    await view.sync(opened);
    bindLazy(session, ticket);
  }
  const messages =
    pending.messagesNow(ticket, validator) ?? (await pending.messages(ticket, validator));
  const records = pending.engineRecords(ticket);
  const adds = pending.usageAdds(ticket);
  // Node ids: a message already on the path replaces its node there (whatever that node's id);
  // any other is a new node under its own id, or, when that id is taken elsewhere in the chat
  // (an edited message keeps its id on its new branch), under a version id (below).
  const nodeIds = new Map<string, string>();
  // A message whose own id is the node id of another message of the path (a version's node id
  // used as a message id) must not replace that node: it gets a version id of its own.
  for (const message of messages) {
    const node = view.chain.node(message.id);
    if (
      node !== undefined &&
      node.message.id !== message.id &&
      view.chain.nodeIdOf(message.id) === undefined &&
      session.abilities.findMessageNodes !== undefined
    )
      nodeIds.set(message.id, await freeVersionId(session, message.id, new Set([message.id])));
  }
  const batchOf = (): CommitMessage[] => {
    const batch: CommitMessage[] = [];
    for (const message of messages) {
      const id = nodeIds.get(message.id) ?? view.chain.nodeIdOf(message.id) ?? message.id;
      const kept = keptRecord(
        view.chain.node(id),
        records?.get(message.id),
        adds?.has(message.id) === true,
      );
      const engineRecord =
        kept === undefined ? undefined : placeProviderCompaction(session, kept, id, batch);
      batch.push(engineRecord === undefined ? { id, message } : { id, message, engineRecord });
    }
    return batch;
  };
  for (let attempt = 1; ; attempt += 1) {
    const batch = batchOf();
    try {
      await writeMessages(session, {
        method: 'save()',
        branch: view.branch,
        batch,
        validated: messages,
        attach: attachPoint(session),
        gaveUpNote: '; the messages are still pending',
        explain: (error) => explainSaveError(session, error),
      });
      break;
    } catch (error) {
      const version = await versionFor(session, error, batch, messages, attempt);
      if (version === undefined) throw error;
      nodeIds.set(version.messageId, version.nodeId);
    }
  }
  pending.drop(ticket);
}

/**
 * Where a save attaches: on top of whatever head the branch has (the engine follows its branch),
 * or, after `continueFrom()`, right after the engine's position (extending the branch while its
 * head is still there, else starting a branch there).
 */
function attachPoint(session: ChatSession): AttachPoint {
  const { view } = session;
  if (!view.pinned) return 'any-head';
  return { after: view.headMessageId, extend: !view.detached, activate: view.activateOnFork };
}

/**
 * After a save refused for an id taken off the path (`MessageIdConflictError`): the node id the
 * message gets instead, or undefined when the refusal stands (the store keeps no message
 * versions, the message is a lazy correction whose target left the path, or it is not ours).
 *
 * The view is read again first: when the message is on the path after all (another writer put it
 * there), it replaces that node. Otherwise it is a **version**: a new node holding the same
 * message id, with the node id `<messageId>~<n>`, the smallest n ≥ 2 that no node of the message
 * and no node of the path has (when that would not be a valid id, `~<n>~<random>`); an id some
 * unrelated node took is refused again by the store and the next n is tried.
 */
async function versionFor(
  session: ChatSession,
  error: unknown,
  batch: readonly CommitMessage[],
  messages: readonly UIMessage[],
  attempt: number,
): Promise<{ messageId: string; nodeId: string } | undefined> {
  const find = session.abilities.findMessageNodes;
  if (!MessageIdConflictError.isInstance(error) || find === undefined) return undefined;
  const index = batch.findIndex((entry) => entry.id === error.messageId);
  const message = messages[index];
  if (message === undefined || session.pending.isLazyTarget(message.id)) return undefined;
  if (attempt >= MAX_VERSION_ATTEMPTS) {
    throw new EngineError(
      `save(): could not find a free node id for a new version of message "${message.id}" after ${attempt} attempts. Nothing was written; the messages are still pending.`,
      { cause: error },
    );
  }
  const { view } = session;
  await view.sync();
  const onPath = view.chain.nodeIdOf(message.id);
  if (onPath !== undefined && onPath !== error.messageId)
    return { messageId: message.id, nodeId: onPath };
  const taken = new Set([error.messageId, ...batch.map((entry) => entry.id)]);
  return { messageId: message.id, nodeId: await freeVersionId(session, message.id, taken) };
}

/**
 * A node id for a new version of `messageId`: `<messageId>~<n>` with the smallest n ≥ 2 that no
 * node holding the message, no node of the path and nothing in `taken` has.
 */
async function freeVersionId(
  session: ChatSession,
  messageId: string,
  taken: Set<string>,
): Promise<string> {
  const { view, chatId } = session;
  const find = session.abilities.findMessageNodes;
  if (find !== undefined)
    for (const node of await find({ chatId, messageId, limit: 100 })) taken.add(node.id);
  for (let n = 2; ; n += 1) {
    const candidate = versionId(messageId, n);
    if (!taken.has(candidate) && !view.chain.has(candidate)) return candidate;
  }
}

/** `<messageId>~<n>`, or `~<n>~<random>` when that is too long to be an id. */
function versionId(messageId: string, n: number): string {
  const readable = `${messageId}~${n}`;
  try {
    assertIdentifier('save()', 'id', readable);
    return readable;
  } catch {
    return `~${n}~${randomTag()}`;
  }
}

/** Every runtime the engine targets has Web Crypto; the package's types name no runtime. */
const webCrypto = (
  globalThis as unknown as { crypto: { getRandomValues(bytes: Uint8Array): Uint8Array } }
).crypto;

function randomTag(): string {
  const bytes = new Uint8Array(12);
  webCrypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function explainSaveError(session: ChatSession, error: unknown): unknown {
  if (MessageIdConflictError.isInstance(error) && session.pending.isLazyTarget(error.messageId)) {
    return new EngineError(
      `save(): lastAssistantMessage() corrects message "${error.messageId}", which is not on branch "${session.view.branch}" (the engine moved to another branch after the correction was set). Nothing was written; the messages are still pending (discardPending() drops them).`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The record a saved message gets: the one `withUsage` attached, over the engine's own record of
 * the node it replaces in place. A chat client echoes back the whole conversation (a compaction's
 * summary and replies with recorded usage included): replacing them keeps what the engine
 * recorded, and a client's copy can neither add to nor remove it. (A store that keeps records
 * also keeps a replaced node's record when none is given; this covers the others, for the nodes
 * the engine has read.)
 */
function keptRecord(
  replaced: MessageNodeRecord | undefined,
  attached: EngineRecord | undefined,
  add: boolean,
): EngineRecord | undefined {
  const existing = replaced?.engineRecord ?? undefined;
  if (existing === undefined) return attached;
  if (attached === undefined) return existing;
  const merged: EngineRecord = { ...existing, ...attached };
  // `withUsage(…, { add: true })`: a reply continued (a client-side tool result) is one message
  // that took several calls; its usage is what was recorded plus what this call used.
  const summed = add ? addUsage(existing.usage, attached.usage) : undefined;
  return summed === undefined ? merged : { ...merged, usage: summed };
}

/**
 * A reply whose call compacted on the provider's side (`withUsage(…, { response })`) becomes a
 * compaction node: its boundary is the last node the call sent, that is the node the reply
 * follows (the message before it in this save, else the head the engine's view shows; for a
 * reply continued in place, its parent). What comes before is kept in the graph and no longer
 * shown; the reply, which carries the compaction part the provider needs back, is shown first.
 * The pending key never reaches the store. Without anything before the reply there is nothing
 * covered, and only the usage is kept.
 */
function placeProviderCompaction(
  session: ChatSession,
  record: EngineRecord,
  id: string,
  batch: readonly CommitMessage[],
): EngineRecord | undefined {
  if (!Object.hasOwn(record, PENDING_PROVIDER_COMPACTION)) return record;
  const { [PENDING_PROVIDER_COMPACTION]: pendingValue, ...rest } = record;
  const pending = pendingValue as unknown as PendingProviderCompaction;
  const { view } = session;
  const replaced = view.chain.node(id);
  // New nodes of this batch attach one after the other on top of the view's head.
  const added = batch.filter((entry) => !view.chain.has(entry.id));
  const boundaryId =
    replaced !== undefined ? replaced.parentId : (added.at(-1)?.id ?? view.headMessageId);
  if (boundaryId === null || boundaryId === id)
    return Object.keys(rest).length > 0 ? rest : undefined;
  const visible = visibleConversation(view.chain);
  const shownBefore: UIMessage[] = [];
  const boundaryInView = visible.entries.findIndex((entry) => entry.node.id === boundaryId);
  const shown =
    boundaryInView >= 0
      ? visible.entries.slice(0, boundaryInView + 1)
      : replaced === undefined
        ? visible.entries
        : [];
  for (const entry of shown) if (entry.message !== null) shownBefore.push(entry.message);
  if (replaced === undefined)
    for (const entry of added) shownBefore.push(entry.message as unknown as UIMessage);
  const { tokenizer } = session.settings;
  const covered = shownBefore.reduce(
    (total, message) => total + tokenizer.count(messageText(message)),
    0,
  );
  const summary = tokenizer.count(pending.text);
  const compaction: CompactionRecord = {
    version: 1,
    boundaryId,
    previousCompactionId: visible.compaction?.entry.node.id ?? null,
    coveredMessages: shownBefore.length,
    tokens: { tokenizer: tokenizer.id, covered, summary, saved: covered - summary },
    createdAt: Date.now(),
    provider: pending.record,
  };
  return { ...rest, compaction: compaction as unknown as EngineRecord };
}
