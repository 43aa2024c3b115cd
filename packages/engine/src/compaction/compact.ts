import {
  assertIdentifier,
  type BranchSummaryRecord,
  type CommitMessage,
  type CompactionRecord,
  ConflictError,
  compactionMessage,
  EngineError,
  type JsonObject,
  readCompaction,
  type StoredMessage,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { generateId, isToolUIPart, type UIMessage } from 'ai';
import { messageText } from '../budget/token-counter';
import type { ChainEntry } from '../session/chain-cache';
import type { ChatSession } from '../session/chat-session';
import { type AttachPoint, writeMessages } from '../session/write-messages';
import { visibleConversation } from './compacted-view';
import { runSummarizer, type Summarizer } from './summarizer';

/** What `compact()` keeps after the summary. */
export type CompactKeep =
  | number
  | {
      /** Keep the last `turns` turns (a turn starts at a user message). */
      readonly turns: number;
    }
  | {
      /** Keep this message and everything after it (the boundary is the message before it). */
      readonly fromMessageId: string;
    };

/** Options of `ContextEngine.compact`. */
export interface CompactOptions {
  /** Makes the summary of the span (`summarizer({ model })` is the built-in one). */
  readonly summarize: Summarizer;
  /**
   * What stays after the summary: a number or `{ turns }` keeps the last turns (a turn starts at
   * a user message), `{ fromMessageId }` keeps that message and what follows. The boundary moves
   * earlier when it would separate a tool call from its result.
   * @default 2 (the last two turns)
   */
  readonly keep?: CompactKeep;
  /**
   * The compaction node's id, new to the chat: an id that already names a message of the chat
   * (a retried job whose compaction was written) is refused with a `ConflictError`.
   * @default a generated id
   */
  readonly id?: string;
}

/** What `compact()` wrote. */
export interface CompactionResult {
  /** The compaction node's id (the new branch head). */
  readonly messageId: string;
  /** The record the node carries (boundary, span, tokens). */
  readonly compaction: CompactionRecord;
  /** How many messages the resolved conversation keeps after the summary. */
  readonly keptMessages: number;
  /** The head the node was attached to (newer than the one compacted when another writer saved meanwhile). */
  readonly attachedTo: string;
}

/** The framing of the text a compaction node sends in place of its span. */
const COMPACTION_PREFIX = 'Summary of the conversation so far:\n\n';

/** Checks `compact()`'s options; a `ValidationError` that says which one is wrong. */
export function checkCompactOptions(options: unknown): CompactOptions {
  const method = 'compact(options)';
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ValidationError(
      `${method}: options must be an object with summarize (and optionally keep, id).`,
      { issues: [{ path: 'options', message: 'expected an object' }] },
    );
  }
  const candidate = options as Partial<CompactOptions>;
  if (typeof candidate.summarize !== 'function') {
    throw new ValidationError(
      `${method}: summarize must be a function from messages to text (for example summarizer({ model })).`,
      { issues: [{ path: 'summarize', message: 'expected a function' }] },
    );
  }
  const keep = candidate.keep ?? 2;
  const turns = typeof keep === 'number' ? keep : (keep as { turns?: unknown }).turns;
  if (typeof keep === 'object' && keep !== null && 'fromMessageId' in keep) {
    assertIdentifier(method, 'keep.fromMessageId', keep.fromMessageId);
  } else if (typeof turns !== 'number' || !Number.isInteger(turns) || turns < 0) {
    throw new ValidationError(
      `${method}: keep must be a number of turns (an integer of 0 or more), { turns } or { fromMessageId }, received ${JSON.stringify(keep)}.`,
      { issues: [{ path: 'keep', message: 'expected turns or { fromMessageId }' }] },
    );
  }
  if (candidate.id !== undefined) assertIdentifier(method, 'id', candidate.id);
  return { summarize: candidate.summarize, keep, ...(candidate.id ? { id: candidate.id } : {}) };
}

/**
 * `compact()`: checks the options at the call (a rejection, nothing queued, for a bad one), then,
 * in call order, opens the chat and compacts the branch the view follows.
 */
export function compactCall(
  session: ChatSession,
  options: CompactOptions,
): Promise<CompactionResult | null> {
  let checked: CompactOptions;
  try {
    checked = checkCompactOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return session.run(async () => {
    await session.open();
    const result = await compactBranch(session, checked);
    return result === 'superseded' ? null : result;
  });
}

/**
 * A compaction decided earlier and run later (the cost policy's, after the reply is saved): it
 * compacts only the branch as it was decided on, and never writes over another compaction.
 */
export interface DeferredCompaction {
  /** The compaction node the branch showed when it was decided (null: none). */
  readonly summaryNodeId: string | null;
}

/** Thrown inside a deferred compaction's write when another compaction got there first. */
class Superseded {}

/**
 * Compacts the branch the view follows: picks the span (from the root or the previous
 * compaction, up to the boundary `keep` leaves), asks for its summary, and writes the compaction
 * node on top of the head. Resolves to null when there is nothing to compact. A `deferred`
 * compaction resolves to `'superseded'`, writing nothing, when the branch shows another
 * compaction than when it was decided, or when one is written while its summary is made (two
 * processes, or two engines, deciding the same compaction: one writes).
 */
export async function compactBranch(
  session: ChatSession,
  options: CompactOptions,
  deferred?: DeferredCompaction,
): Promise<CompactionResult | null | 'superseded'> {
  const method = 'compact()';
  const { view } = session;
  if (options.id !== undefined) await assertNewId(session, options.id, method);
  await view.sync();
  const startHead = view.headMessageId;
  const startRevision = view.revision;
  if (startHead === null) return null;
  const visible = visibleConversation(view.chain);
  if (
    deferred !== undefined &&
    (visible.compaction?.entry.node.id ?? null) !== deferred.summaryNodeId
  )
    return 'superseded';
  const summaryCount = visible.compaction === undefined ? 0 : 1;
  const firstKept = firstKeptIndex(visible.entries, summaryCount, options.keep ?? 2, method);
  if (firstKept <= summaryCount) return null;
  const span = visible.entries.slice(0, firstKept);
  const keptMessages = visible.entries.length - firstKept;
  const boundary = span.at(-1) as ChainEntry;
  const spanMessages = span.map(shownMessage);
  const summary = await runSummarizer(
    options.summarize,
    spanMessages,
    { purpose: 'compaction' },
    method,
  );

  const { tokenizer } = session.settings;
  const id = options.id ?? `compaction-${generateId()}`;
  const text = `${COMPACTION_PREFIX}${summary}`;
  const covered = spanMessages.reduce(
    (total, message) => total + tokenizer.count(messageText(message)),
    0,
  );
  const summaryTokens = tokenizer.count(text);
  const record: CompactionRecord = {
    version: 1,
    boundaryId: boundary.node.id,
    previousCompactionId: visible.compaction?.entry.node.id ?? null,
    coveredMessages: spanMessages.length,
    tokens: {
      tokenizer: tokenizer.id,
      covered,
      summary: summaryTokens,
      saved: covered - summaryTokens,
    },
    createdAt: Date.now(),
  };
  const entry = compactionMessage({ id, text, compaction: record });
  let attachedTo: string;
  try {
    attachedTo = await writeOnTop(
      session,
      entry,
      startHead,
      startRevision,
      method,
      deferred !== undefined,
    );
  } catch (error) {
    if (error instanceof Superseded) return 'superseded';
    throw error;
  }
  return {
    messageId: id,
    compaction: record,
    keptMessages,
    attachedTo,
  };
}

/** Input of {@link carrySummary}. */
export interface CarryInput {
  /** The branch being left. */
  readonly fromBranch: string;
  /** The branch the summary goes to. */
  readonly toBranch: string;
  readonly summarize: Summarizer;
}

/**
 * Summarizes the conversation of the branch the view follows and appends the summary as a node
 * on `toBranch` (which must exist). Resolves to the node's id, or null when the branch left has
 * nothing to summarize. Nothing is written when the summarizer fails.
 */
export async function carrySummary(
  session: ChatSession,
  input: CarryInput,
): Promise<string | null> {
  const method = `switchBranch("${input.toBranch}", { carry })`;
  const { store, chatId, view } = session;
  await view.sync();
  const visible = visibleConversation(view.chain);
  if (visible.entries.length === 0) return null;
  // The branch must exist (BranchNotFoundError), known before the summarizer's call is paid for.
  await store.getHead({ chatId, branch: input.toBranch });
  const messages = visible.entries.map(shownMessage);
  const summary = await runSummarizer(
    input.summarize,
    messages,
    { purpose: 'branch-summary' },
    method,
  );
  const record: BranchSummaryRecord = {
    version: 1,
    fromBranch: input.fromBranch,
    fromHeadId: view.headMessageId,
    coveredMessages: messages.length,
    createdAt: Date.now(),
  };
  const message: StoredMessage = {
    id: `branch-summary-${generateId()}`,
    role: 'user',
    parts: [{ type: 'text', text: `Summary of branch "${input.fromBranch}":\n\n${summary}` }],
  };
  await checkedNode(session, message, method);
  // The record goes beside the message (the engine's record), never in its metadata.
  const batch: CommitMessage[] = [
    { id: message.id, message, engineRecord: { branchSummary: record as unknown as JsonObject } },
  ];
  // A branch summary replaces nothing, so it can attach to whatever head the branch has.
  await writeMessages(session, {
    method,
    branch: input.toBranch,
    batch,
    attach: 'any-head',
  });
  return message.id;
}

/**
 * Writes the compaction node with compare-and-set on the head the span was read at. When another
 * writer appended meanwhile, the span is still exactly the one summarized (heads only move
 * forward, so the boundary is still on the chain), and the node goes on top of the new head:
 * the turns written meanwhile become kept messages. It fails clearly, writing nothing, when a
 * message was replaced in place since the span was read (the summary may no longer match it) or
 * when the head left the chain that was summarized.
 */
async function writeOnTop(
  session: ChatSession,
  entry: CommitMessage,
  startHead: string,
  startRevision: number,
  method: string,
  deferred: boolean,
): Promise<string> {
  const { store, chatId, view } = session;
  const written = [await checkedNode(session, entry.message, method)];
  const branch = view.branch;
  // The last head known to descend from the summarized one.
  let onChain = startHead;
  const guard = async (): Promise<string> => {
    const state = await store.getHead({ chatId, branch });
    if (state.rewrittenAt > startRevision) {
      throw new EngineError(
        `${method}: a message of chat "${chatId}" was replaced in place while the summary was being made, so it may no longer match the span. Nothing was written; call compact() again.`,
      );
    }
    const head = state.headMessageId;
    if (head !== onChain) {
      const between = head === null ? 'off' : await descends(session, head, onChain);
      // A deferred compaction never goes on top of another one (of the same span, or newer).
      if (deferred && between === 'compacted') throw new Superseded();
      if (between === 'off') {
        throw new EngineError(
          `${method}: the head of branch "${branch}" moved off the chain that was summarized. Nothing was written; call compact() again.`,
        );
      }
      onChain = head as string;
    }
    return onChain;
  };
  if (view.pinned && !deferred) {
    // After continueFrom() the write is addressed: right after the summarized head, on the
    // engine's own branch or on a new one there, never on top of another writer's messages.
    const chat = await store.getChat(chatId);
    if (chat !== null && chat.rewrittenAt > startRevision) {
      throw new EngineError(
        `${method}: a message of chat "${chatId}" was replaced in place while the summary was being made, so it may no longer match the span. Nothing was written; call compact() again.`,
      );
    }
  }
  // A deferred compaction belongs to the branch it was decided on, wherever its head is now: on
  // top of what was saved meanwhile, never on a branch of its own.
  const attach: AttachPoint =
    view.pinned && !deferred
      ? { after: startHead, extend: !view.detached, activate: view.activateOnFork }
      : { from: startHead, beforeAttempt: guard };
  const result = await writeMessages(session, {
    method,
    branch,
    batch: [entry],
    validated: written,
    attach,
    explain: (error) =>
      ValidationError.isInstance(error)
        ? new EngineError(
            `${method}: the store refused the summary node (${error.message}). Nothing was written.`,
            { cause: error },
          )
        : error,
  });
  return result.attachedTo as string;
}

/**
 * Refuses a node id the chat already has: a commit would replace that message in place (a saved
 * turn lost, or an earlier compaction rewritten), or change another branch's history.
 */
async function assertNewId(session: ChatSession, id: string, method: string): Promise<void> {
  const existing = await session.store.getMessage({ chatId: session.chatId, messageId: id });
  if (existing !== null) {
    throw new ConflictError(
      `${method}: id "${id}" already names a message of chat "${session.chatId}" (a compaction written by an earlier try with the same id, or another message). Nothing was written; pass a new id, or none for a generated one.`,
    );
  }
}

/** The node as the engine validates it, or an `EngineError` (nothing written) saying why not. */
async function checkedNode(
  session: ChatSession,
  message: StoredMessage,
  method: string,
): Promise<UIMessage> {
  const [checked] = await session.validator.check([message]);
  if (!checked?.success) {
    throw new EngineError(
      `${method}: the summary node does not validate against the engine's message schemas (${checked?.error.message ?? 'invalid'}). Nothing was written.`,
    );
  }
  return checked.message;
}

/**
 * Whether `ancestor` is on the chain of `head` (reads only the nodes in between): `'off'` when it
 * is not, `'compacted'` when a compaction node lies in between, else `'on'`.
 */
async function descends(
  session: ChatSession,
  head: string,
  ancestor: string,
): Promise<'on' | 'off' | 'compacted'> {
  let cursor: string | null = head;
  let compacted = false;
  while (cursor !== null) {
    const page = await session.store.getChain({
      chatId: session.chatId,
      headMessageId: cursor,
      until: ancestor,
    });
    if (page.nodes.some((node) => readCompaction(node) !== null)) compacted = true;
    if (page.reachedUntil) return compacted ? 'compacted' : 'on';
    cursor = page.nextCursor;
  }
  return 'off';
}

/** The message as the conversation shows it (a stored one that no longer validates, as stored). */
function shownMessage(entry: ChainEntry): UIMessage {
  return entry.message ?? (entry.node.message as unknown as UIMessage);
}

/**
 * The index (among the shown entries) of the first message kept after the summary. Entries
 * before `start` are the previous summary, which is always in the span. Moves earlier while the
 * boundary would separate a tool call from its result.
 */
function firstKeptIndex(
  entries: readonly ChainEntry[],
  start: number,
  keep: CompactKeep,
  method: string,
): number {
  let index: number;
  if (typeof keep === 'object' && 'fromMessageId' in keep) {
    // A node id, or a message id (a version's node id differs from it; a path holds one).
    index = entries.findIndex(
      (entry) =>
        entry.node.id === keep.fromMessageId || entry.node.message.id === keep.fromMessageId,
    );
    if (index < 0) {
      throw new ValidationError(
        `${method}: keep.fromMessageId "${keep.fromMessageId}" is not a message the branch shows (after the latest compaction's summary).`,
        { issues: [{ path: 'keep.fromMessageId', message: 'not in the conversation' }] },
      );
    }
  } else {
    const turns = typeof keep === 'number' ? keep : keep.turns;
    index = entries.length;
    let seen = 0;
    while (seen < turns && index > start) {
      index -= 1;
      if (shownMessage(entries[index] as ChainEntry).role === 'user') seen += 1;
    }
    if (seen < turns) return start;
  }
  while (index > start && splitsToolCall(entries, index)) index -= 1;
  return index;
}

/** Tool states that wait for a result or an approval still to come. */
const OPEN_TOOL_STATES = new Set([
  'input-streaming',
  'input-available',
  'approval-requested',
  'approval-responded',
]);

/**
 * True when cutting before `index` separates a tool call from its result: a tool call id on both
 * sides, or a call still waiting for its result in the last covered message.
 */
function splitsToolCall(entries: readonly ChainEntry[], index: number): boolean {
  const kept = new Set<string>();
  for (let position = index; position < entries.length; position += 1) {
    for (const part of shownMessage(entries[position] as ChainEntry).parts) {
      if (isToolUIPart(part)) kept.add(part.toolCallId);
    }
  }
  const last = shownMessage(entries[index - 1] as ChainEntry);
  for (const part of last.parts) {
    if (isToolUIPart(part) && OPEN_TOOL_STATES.has(part.state)) return true;
  }
  if (kept.size === 0) return false;
  for (let position = 0; position < index; position += 1) {
    for (const part of shownMessage(entries[position] as ChainEntry).parts) {
      if (isToolUIPart(part) && kept.has(part.toolCallId)) return true;
    }
  }
  return false;
}
