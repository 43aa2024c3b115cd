import {
  BranchNotFoundError,
  type CommitEndReply,
  type CommitMessage,
  type CommitResult,
  type CommitStartReply,
  EngineError,
  HeadConflictError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { ChatSession } from './chat-session';

/**
 * Options of {@link ContextEngine.save}: a live reply (store capability `liveReplies`) started or
 * ended in the same store write as the messages. A save with nothing pending writes nothing, so
 * neither is written then (use the store's `startReply` / `endReply`).
 */
export interface SaveOptions {
  /** Starts the reply that answers the saved messages (`CommitInput.startReply`). */
  readonly startReply?: CommitStartReply;
  /** Ends the live reply the save stores (`CommitInput.endReply`). */
  readonly endReply?: CommitEndReply;
}

/**
 * Where a write attaches on its branch.
 *
 * - `'any-head'`: the batch does not depend on where it lands (a turn whose lazy correction is
 *   already bound, a branch summary). Appended (the store serializes writers itself), except a
 *   write that starts or ends a live reply: that is always a commit (the store's `append` takes
 *   no live part), compare-and-set on top of whatever head each conflict reports.
 * - `{ from, beforeAttempt }`: compare-and-set, starting at `from`, never appended. Before each
 *   attempt, the first included, `beforeAttempt` (when given) gets the head the last conflict
 *   named (`from` at first), may refuse by throwing, and returns the head to expect: compaction
 *   reads the head again and refuses when a message was rewritten or the head left the chain it
 *   summarized. Without it, a conflict's head is taken as for `'any-head'`.
 *
 * - `{ after }` (a write addressed by what the caller saw, `continueFrom()`): attach right after
 *   node `after` (null: a new root). When `extend` and the branch's head is still `after`, the
 *   branch is extended (compare-and-set); otherwise (another writer moved the head, or no branch
 *   has it as its head) a new branch starts at `after`, named after the request's branch, in the
 *   same store transaction as the messages (a fork-commit). `WriteResult.branch` names the branch
 *   written. Never appended on top of another writer's head.
 */
export type AttachPoint =
  | 'any-head'
  | {
      readonly from: string | null;
      readonly beforeAttempt?: (expectedHeadId: string | null) => Promise<string | null>;
    }
  | {
      readonly after: string | null;
      /** Try to extend the request's branch first (its head was `after` when last seen). */
      readonly extend: boolean;
      /** Make a branch this write starts the chat's active one (only once the write succeeded). */
      readonly activate?: boolean;
    };

/** One write of message nodes on one branch of the session's chat. */
export interface WriteRequest {
  /** The engine method the write serves, for error messages (`'save()'`, `'compact()'`, …). */
  readonly method: string;
  /** The branch written to. */
  readonly branch: string;
  /** The nodes, in order. */
  readonly batch: readonly CommitMessage[];
  /**
   * The batch's messages as the engine validated them, in batch order. The session's view follows
   * a write on its own branch with them; without them (the drop pass's tombstones) the view reads
   * what changed on its next sync.
   */
  readonly validated?: readonly UIMessage[];
  readonly attach: AttachPoint;
  /**
   * A live reply started or ended by the same store write (`CommitInput.startReply` /
   * `endReply`): given to every commit attempt (a refused attempt wrote neither), never appended.
   */
  readonly live?: SaveOptions;
  /** @default the session's `maxAttempts` (the engine's `maxSaveAttempts`) */
  readonly maxAttempts?: number;
  /** Appended to "Nothing was written" when the write gives up (`'; the messages are still pending'`). */
  readonly gaveUpNote?: string;
  /** How the caller words a store's refusal (any error but a head conflict); as thrown by default. */
  readonly explain?: (error: unknown) => unknown;
}

/** What a write did: the store's result, the head the batch was attached to, the branch written. */
export interface WriteResult {
  readonly result: CommitResult;
  readonly attachedTo: string | null;
  /** The branch written: the request's, or the one an `{ after }` write started. */
  readonly branch: string;
}

/**
 * The one write path of the engine: save, a branch summary's carry, compaction and the drop pass
 * all write through it. One retry policy (a conflict retries on the head it names, with a short
 * random pause after the first three), one way the view follows a write (`applyWrite` when the
 * write is on the view's branch and carries its validated messages), one place a store's refusal
 * is worded. Fails with an `EngineError`, nothing written, after `maxAttempts` conflicts.
 */
export async function writeMessages(
  session: ChatSession,
  request: WriteRequest,
): Promise<WriteResult> {
  const { store, chatId, view } = session;
  const { branch, attach } = request;
  const follow = (result: CommitResult, attachedTo: string | null): WriteResult => {
    if (request.validated !== undefined && branch === view.branch)
      view.applyWrite(attachedTo, result, request.validated);
    return { result, attachedTo, branch };
  };
  try {
    if (attach !== 'any-head' && 'after' in attach)
      return await writeAfter(session, request, attach);
    if (attach === 'any-head' && !hasLive(request)) {
      const result = await store.append({ chatId, branch, messages: request.batch });
      return follow(result, result.previousHeadId);
    }
    const guard = attach === 'any-head' || !('from' in attach) ? undefined : attach.beforeAttempt;
    let expectedHeadId = firstExpectedHead(request, view.branch, view.headMessageId);
    const maxAttempts = request.maxAttempts ?? session.settings.maxAttempts;
    let conflict: HeadConflictError | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      if (guard !== undefined) expectedHeadId = await guard(expectedHeadId);
      try {
        const result = await store.commit({
          chatId,
          branch,
          expectedHeadId,
          messages: request.batch,
          ...request.live,
        });
        return follow(result, expectedHeadId);
      } catch (error) {
        if (!HeadConflictError.isInstance(error)) throw error;
        conflict = error;
        expectedHeadId = error.currentHeadId;
        if (attempt > 3) await pause(Math.random() * Math.min(2 ** attempt, 100));
      }
    }
    const gaveUp = new EngineError(
      `${request.method}: gave up after ${maxAttempts} attempts because other writers kept moving the head of branch "${branch}". Nothing was written${request.gaveUpNote ?? ''}.`,
      { cause: conflict },
    );
    gaveUpErrors.add(gaveUp);
    throw gaveUp;
  } catch (error) {
    if (gaveUpErrors.has(error as object) || request.explain === undefined) throw error;
    throw request.explain(error);
  }
}

/** An `{ after }` attach point. */
type AfterNode = Extract<AttachPoint, { readonly after: string | null }>;

/**
 * The `{ after }` write: extend the branch when its head is still `after`, else start a branch
 * at `after` in the same transaction as the messages. One attempt of each: a branch started at a
 * node cannot be in anyone's way.
 */
async function writeAfter(
  session: ChatSession,
  request: WriteRequest,
  attach: AfterNode,
): Promise<WriteResult> {
  const { store, chatId, view } = session;
  const { after } = attach;
  const messages = request.batch;
  if (attach.extend) {
    try {
      const result = await store.commit({
        chatId,
        branch: request.branch,
        expectedHeadId: after,
        messages,
        ...request.live,
      });
      if (request.validated !== undefined && request.branch === view.branch)
        view.applyWrite(after, result, request.validated);
      return { result, attachedTo: after, branch: request.branch };
    } catch (error) {
      // Another writer moved the head (or deleted the branch): this write starts its own branch.
      if (!HeadConflictError.isInstance(error) && !BranchNotFoundError.isInstance(error))
        throw error;
    }
  }
  const result = await store.commit({
    chatId,
    branch: request.branch,
    expectedHeadId: after,
    messages,
    fork: { from: request.branch, activate: attach.activate === true },
    ...request.live,
  });
  const branch = result.branch;
  if (branch === undefined) {
    throw new EngineError(
      `${request.method}: the store did not name the branch its fork-commit created (CommitResult.branch).`,
    );
  }
  if (request.validated !== undefined && view.branch === request.branch) {
    view.attachTo(branch);
    view.applyWrite(after, result, request.validated);
  }
  return { result, attachedTo: after, branch };
}

/** Whether a write starts or ends a live reply (then it is a commit, never an append). */
function hasLive(request: WriteRequest): boolean {
  return request.live?.startReply !== undefined || request.live?.endReply !== undefined;
}

/**
 * The head the first compare-and-set expects: `from` of a `{ from }` write; for `'any-head'` (a
 * write with a live reply: a commit, never an append), the view's head when the write is on the
 * view's branch, else null (the first conflict then names the head).
 */
function firstExpectedHead(
  request: WriteRequest,
  viewBranch: string,
  viewHead: string | null,
): string | null {
  if (request.attach !== 'any-head') return 'from' in request.attach ? request.attach.from : null;
  return request.branch === viewBranch ? viewHead : null;
}

/** The errors `writeMessages` gave up with (other writers kept moving the head). */
const gaveUpErrors = new WeakSet<object>();

/** The last head conflict behind a write that gave up, or undefined for any other error. */
export function conflictBehind(error: unknown): HeadConflictError | undefined {
  if (typeof error !== 'object' || error === null || !gaveUpErrors.has(error)) return undefined;
  const { cause } = error as { cause?: unknown };
  return HeadConflictError.isInstance(cause) ? cause : undefined;
}

/** Every runtime the engine targets has a timer; the package's types name no runtime. */
const timers = globalThis as unknown as {
  setTimeout(callback: () => void, milliseconds: number): unknown;
};

/** Waits `milliseconds` (a back-off between retries). */
function pause(milliseconds: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(resolve, milliseconds));
}
