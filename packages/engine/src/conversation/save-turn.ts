import {
  type CommitMessage,
  EngineError,
  type EngineRecord,
  MessageIdConflictError,
  type MessageNodeRecord,
} from '@ctxgraph/fragments-core';
import type { ChatSession } from '../session/chat-session';
import { writeMessages } from '../session/write-messages';
import { bindLazy } from './conversation';

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
  const batch: CommitMessage[] = messages.map((message) => {
    const engineRecord = keptRecord(view.chain.node(message.id), records?.get(message.id));
    return engineRecord === undefined
      ? { id: message.id, message }
      : { id: message.id, message, engineRecord };
  });
  // A lazy correction is bound by now, so the turn does not depend on where it lands.
  await writeMessages(session, {
    method: 'save()',
    branch: view.branch,
    batch,
    validated: messages,
    attach: 'any-head',
    gaveUpNote: '; the messages are still pending',
    explain: (error) => explainSaveError(session, error),
  });
  pending.drop(ticket);
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
): EngineRecord | undefined {
  const existing = replaced?.engineRecord ?? undefined;
  if (existing === undefined) return attached;
  return attached === undefined ? existing : { ...existing, ...attached };
}
