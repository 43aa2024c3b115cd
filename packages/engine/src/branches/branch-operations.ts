import {
  assertIdentifier,
  type BranchRecord,
  CheckpointNotFoundError,
  type CheckpointRecord,
  EngineError,
  type PruneResult,
} from '@ctxgraph/fragments-core';
import { carrySummary } from '../compaction/compact';
import { type CompactedDropReport, dropCompactedOriginals } from '../compaction/drop-originals';
import type { Summarizer } from '../compaction/summarizer';
import type { ChatSession } from '../session/chat-session';
import { requireCapability } from '../session/store-abilities';
import { rewindTarget } from './rewind-target';

/** Options of {@link ContextEngine.deleteBranch}. */
export interface DeleteBranchOptions {
  /** The branch that becomes active; required when deleting the chat's active branch. */
  activate?: string;
  /** Report what would go and change nothing. @default false */
  dryRun?: boolean;
}

/** Options of {@link ContextEngine.prune}. */
export interface PruneOptions {
  /** Report what would go and change nothing. @default false */
  dryRun?: boolean;
  /**
   * The originals behind compaction nodes: `'keep'` leaves them (a rewind before the compaction
   * shows them again); `'drop'` replaces, in place, each one that every branch and checkpoint
   * reaching it shows only through a compaction's summary with a tombstone (same id, parent and
   * sequence, content gone, an engine record whose `dropped` names the compaction). A resolve never
   * shows tombstones; search no longer finds their text. There is no undo.
   * @default 'keep'
   */
  compacted?: 'keep' | 'drop';
}

/** What {@link ContextEngine.prune} removed (or, with `dryRun`, would remove). */
export interface EnginePruneResult extends PruneResult {
  /** The originals behind compactions dropped (all zero with `compacted: 'keep'`). */
  readonly compacted: CompactedDropReport;
}

/** Options of {@link ContextEngine.switchBranch}. */
export interface SwitchBranchOptions {
  /**
   * Carry a summary of the branch being left to the destination: `summarize` makes it from that
   * branch's conversation and it is appended as a node on the destination before the switch. A
   * failing or empty summary writes nothing and does not switch.
   */
  carry?: { summarize: Summarizer };
}

/** Options of {@link ContextEngine.checkpoint}. */
export interface CheckpointOptions {
  /** Move an existing checkpoint of that name here instead of refusing. @default false */
  replace?: boolean;
}

/**
 * A fork of the view's branch at `headMessageId`, named by the store in the same write; the view
 * moves to it when `activate`.
 */
async function forkBranch(
  session: ChatSession,
  headMessageId: string | null,
  activate: boolean,
): Promise<BranchRecord> {
  const { store, chatId, view } = session;
  const branch = await store.forkBranch({ chatId, from: view.branch, headMessageId, activate });
  if (activate) view.moveTo(branch);
  return branch;
}

/** `rewind()`: a new branch at `messageId` (a node id or a message id), made active. */
export async function rewindTo(session: ChatSession, messageId: string): Promise<BranchRecord> {
  assertIdentifier('rewind(messageId)', 'messageId', messageId);
  await session.open();
  return forkBranch(session, await rewindTarget(session, messageId), true);
}

/** The head of the view's branch (after `continueFrom()`, the engine's own position). */
async function currentHead(session: ChatSession): Promise<string | null> {
  const { view } = session;
  if (view.pinned) return view.headMessageId;
  const { headMessageId } = await session.store.getHead({
    chatId: session.chatId,
    branch: view.branch,
  });
  return headMessageId;
}

/** `btw()`: a new branch at the head, the view staying where it is. */
export async function forkAtHead(session: ChatSession): Promise<BranchRecord> {
  await session.open();
  return forkBranch(session, await currentHead(session), false);
}

/** `checkpoint()`: names the head of the view's branch. */
export async function checkpointHead(
  session: ChatSession,
  name: string,
  replace: boolean,
): Promise<CheckpointRecord> {
  assertIdentifier('checkpoint(name)', 'name', name);
  await session.open();
  const { store, chatId, view } = session;
  const headMessageId = await currentHead(session);
  if (headMessageId === null) {
    throw new EngineError(
      `checkpoint("${name}"): branch "${view.branch}" has no saved message yet; save() before taking a checkpoint.`,
    );
  }
  return store.createCheckpoint({ chatId, name, messageId: headMessageId, replace });
}

/** `restore()`: a new branch at the checkpoint's message, made active. */
export async function restoreCheckpoint(session: ChatSession, name: string): Promise<BranchRecord> {
  assertIdentifier('restore(name)', 'name', name);
  await session.open();
  const checkpoint = await session.store.getCheckpoint({ chatId: session.chatId, name });
  if (checkpoint === null) throw new CheckpointNotFoundError(session.chatId, name);
  return forkBranch(session, checkpoint.messageId, true);
}

/**
 * `switchBranch()`: with `carry`, the summary of the branch left goes onto the destination
 * first; then the destination becomes the chat's active branch, and the messages pending before
 * `ticket` (the branch left's) are dropped.
 */
export async function switchToBranch(
  session: ChatSession,
  ticket: number,
  name: string,
  carry: SwitchBranchOptions['carry'],
): Promise<BranchRecord> {
  assertIdentifier('switchBranch(name)', 'name', name);
  await session.open();
  const fromBranch = session.view.branch;
  if (carry !== undefined && name !== fromBranch)
    await carrySummary(session, { fromBranch, toBranch: name, summarize: carry.summarize });
  const branch = await session.store.setActiveBranch({ chatId: session.chatId, name });
  session.pending.drop(ticket);
  session.view.moveTo(branch);
  return branch;
}

/**
 * `deleteBranch()`: the store's prune of one branch; when the view was on it, the view moves to
 * the active branch and the messages pending before `ticket` are dropped.
 */
export async function deleteBranchOf(
  session: ChatSession,
  ticket: number,
  name: string,
  options: DeleteBranchOptions | undefined,
): Promise<PruneResult> {
  const store = requireCapability(session.store, 'retention', 'deleteBranch(name)');
  assertIdentifier('deleteBranch(name)', 'name', name);
  await session.open();
  const { chatId, view } = session;
  const result = await store.prune({
    chatId,
    deleteBranches: [name],
    ...(options?.activate === undefined ? {} : { activate: options.activate }),
    ...(options?.dryRun === undefined ? {} : { dryRun: options.dryRun }),
  });
  if (!result.dryRun && name === view.branch) {
    const branch = await session.store.getBranch({ chatId, name: result.activeBranch });
    if (branch !== null) {
      session.pending.drop(ticket);
      view.moveTo(branch);
    }
  }
  return result;
}

/**
 * `renameBranch()`: the store's atomic rename. The engine's own position follows when it is on
 * the renamed branch (its pending messages stay pending: the branch is the same, only its name
 * changed). Another engine still on the old name gets `BranchNotFoundError` on its next save and
 * writes nothing; it re-opens (or `switchBranch(to)`) to carry on.
 */
export async function renameBranchOf(
  session: ChatSession,
  from: string,
  to: string,
): Promise<BranchRecord> {
  assertIdentifier('renameBranch(from, to)', 'from', from);
  assertIdentifier('renameBranch(from, to)', 'to', to);
  await session.open();
  const branch = await session.store.renameBranch({ chatId: session.chatId, from, to });
  const { view } = session;
  if (view.branch === from && !view.detached) view.branch = branch.name;
  return branch;
}

/** `prune()`: unreachable nodes, then, with `compacted: 'drop'`, the compacted originals. */
export async function pruneChat(
  session: ChatSession,
  options: PruneOptions | undefined,
): Promise<EnginePruneResult> {
  const store = requireCapability(session.store, 'retention', 'prune(options)');
  await session.open();
  const { chatId } = session;
  const dryRun = options?.dryRun === true;
  const result = await store.prune({ chatId, dryRun });
  const compacted: CompactedDropReport =
    options?.compacted === 'drop'
      ? await dropCompactedOriginals(session, { dryRun })
      : { nodes: 0, bytes: 0, tombstoneBytes: 0, messageIds: [] };
  return { ...result, compacted };
}
