import {
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
import { requireCapability } from '../session/store-abilities';
import type { SaveOptions } from '../session/write-messages';
import { type AttachPoint, writeMessages } from '../session/write-messages';
import { addUsage, PENDING_PROVIDER_COMPACTION } from '../usage/message-usage';
import type { PendingProviderCompaction } from '../usage/provider-compaction';
import { bindLazy } from './conversation';

/**
 * `save()`: the messages pending before `ticket`, lazy corrections bound, validated (a turn of
 * plain text messages at once, anything else by the AI SDK), written after the head in one store
 * call. On failure nothing was written and the messages stay pending.
 */
export async function saveTurn(
  session: ChatSession,
  ticket: number,
  live: SaveOptions = {},
): Promise<void> {
  if (live.startReply !== undefined || live.endReply !== undefined) {
    const part = live.startReply !== undefined ? 'startReply' : 'endReply';
    requireCapability(session.store, 'liveReplies', `save({ ${part} })`);
  }
  const { pending, view, validator } = session;
  const opened = session.isOpen ? undefined : await session.open();
  if (pending.before(ticket).length === 0) return;
  const unbound = pending.hasUnbound(ticket);
  // A reply continued in place (`withUsage(…, { add: true })`) adds to the usage recorded on its
  // node: the view must hold that record (an engine that has not read its branch yet would
  // otherwise write the new call's usage over the earlier calls').
  if (unbound || pending.usageAdds(ticket) !== undefined) {
    await view.sync(opened);
    if (unbound) bindLazy(session, ticket);
  }
  const messages =
    pending.messagesNow(ticket, validator) ?? (await pending.messages(ticket, validator));
  const records = pending.engineRecords(ticket);
  const adds = pending.usageAdds(ticket);
  // Node ids: a message already on the path replaces its node there (whatever that node's id);
  // any other is a new node under its own id, or, when that id is taken elsewhere in the chat
  // (an edited message keeps its id on its new branch), a **version**: a new node whose id the
  // store allocates in the write itself (`newVersion`: `<messageId>~<n>`), so any number of
  // versions, saved one after the other or at once, each get their own.
  const ids: NodeIds = { replacing: new Map(), versions: new Set() };
  // A message whose own id is the node id of another message of the path (a version's node id
  // used as a message id) must not replace that node: it is a version of its own.
  for (const message of messages) {
    const node = view.chain.node(message.id);
    if (
      node !== undefined &&
      node.message.id !== message.id &&
      view.chain.nodeIdOf(message.id) === undefined
    )
      ids.versions.add(message.id);
  }
  const batchOf = (): CommitMessage[] => {
    const batch: CommitMessage[] = [];
    for (const message of messages) {
      const version = ids.versions.has(message.id);
      const id = version
        ? message.id
        : (ids.replacing.get(message.id) ?? view.chain.nodeIdOf(message.id) ?? message.id);
      const replaced = version ? undefined : view.chain.node(id);
      const kept = keptRecord(replaced, records?.get(message.id), adds?.has(message.id) === true);
      const engineRecord =
        kept === undefined ? undefined : placeProviderCompaction(session, kept, replaced, batch);
      batch.push({
        id,
        message,
        ...(engineRecord === undefined ? {} : { engineRecord }),
        ...(version ? { newVersion: true } : {}),
      });
    }
    return batch;
  };
  // Each refusal settles one message for good (a version is never refused for its id), so this
  // ends after at most two rounds per message of the batch.
  for (;;) {
    const batch = batchOf();
    try {
      await writeMessages(session, {
        method: 'save()',
        branch: view.branch,
        batch,
        validated: messages,
        attach: attachPoint(session),
        live,
        gaveUpNote: '; the messages are still pending',
        explain: (error) => explainSaveError(session, error),
      });
      break;
    } catch (error) {
      if (!(await settleConflict(session, error, batch, messages, ids))) throw error;
    }
  }
  pending.drop(ticket);
}

/**
 * The node ids of a save that differ from the usual (the node of the message on the path, else
 * the message id): nodes to replace that the view learned of after a refusal, and the messages
 * written as new versions.
 */
interface NodeIds {
  readonly replacing: Map<string, string>;
  readonly versions: Set<string>;
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
 * After a save refused for an id taken off the path (`MessageIdConflictError`): settles how the
 * message is written next, and returns false when the refusal stands (the message is a lazy
 * correction whose target left the path, or it is not ours).
 *
 * The view is read again first: when the message is on the path after all (another writer put it
 * there), it replaces that node, once; otherwise (and when that node is refused too) it becomes a
 * version, whose node id the store allocates in the next write.
 */
async function settleConflict(
  session: ChatSession,
  error: unknown,
  batch: readonly CommitMessage[],
  messages: readonly UIMessage[],
  ids: NodeIds,
): Promise<boolean> {
  if (!MessageIdConflictError.isInstance(error)) return false;
  const index = batch.findIndex(
    (entry) => entry.newVersion !== true && entry.id === error.messageId,
  );
  const message = messages[index];
  if (message === undefined || session.pending.isLazyTarget(message.id)) return false;
  const { view } = session;
  await view.sync();
  const onPath = view.chain.nodeIdOf(message.id);
  if (onPath !== undefined && onPath !== error.messageId && !ids.replacing.has(message.id))
    ids.replacing.set(message.id, onPath);
  else {
    ids.replacing.delete(message.id);
    ids.versions.add(message.id);
  }
  return true;
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
 * covered, and only the usage is kept. When the message before it in this save is a version,
 * whose node id the store allocates in the write, the record names no boundary (`''`): reads
 * take the reply's parent, which is that node (see `CompactionRecord.boundaryId`).
 */
function placeProviderCompaction(
  session: ChatSession,
  record: EngineRecord,
  replaced: MessageNodeRecord | undefined,
  batch: readonly CommitMessage[],
): EngineRecord | undefined {
  if (!Object.hasOwn(record, PENDING_PROVIDER_COMPACTION)) return record;
  const { [PENDING_PROVIDER_COMPACTION]: pendingValue, ...rest } = record;
  const pending = pendingValue as unknown as PendingProviderCompaction;
  const { view } = session;
  // New nodes of this batch attach one after the other on top of the view's head.
  const added = batch.filter((entry) => entry.newVersion === true || !view.chain.has(entry.id));
  const previous = replaced === undefined ? added.at(-1) : undefined;
  const boundaryId =
    replaced !== undefined ? replaced.parentId : (previous?.id ?? view.headMessageId);
  if (boundaryId === null) return Object.keys(rest).length > 0 ? rest : undefined;
  const visible = visibleConversation(view.chain);
  const shownBefore: UIMessage[] = [];
  // A boundary among this batch's new nodes is in no view.
  const boundaryInView =
    previous === undefined
      ? visible.entries.findIndex((entry) => entry.node.id === boundaryId)
      : -1;
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
    boundaryId: previous?.newVersion === true ? '' : boundaryId,
    previousCompactionId: visible.compaction?.entry.node.id ?? null,
    coveredMessages: shownBefore.length,
    tokens: { tokenizer: tokenizer.id, covered, summary, saved: covered - summary },
    createdAt: Date.now(),
    provider: pending.record,
  };
  return { ...rest, compaction: compaction as unknown as EngineRecord };
}
