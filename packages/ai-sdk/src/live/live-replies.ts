import type { ContextEngine } from '@ctxgraph/engine';
import type { ChatChange, LiveReplyRecord } from '@ctxgraph/fragments-core';
import { JsonToSseTransformStream, type UIMessage, type UIMessageChunk } from 'ai';
import { interruptReply } from './interrupt-reply';
import type { LiveSettings } from './live-settings';

/** Every runtime the cycle targets has timers; the package's types name no runtime. */
const timers = globalThis as unknown as {
  setTimeout(callback: () => void, milliseconds: number): unknown;
  clearTimeout(handle: unknown): void;
};

/** How often an open resume, events stream or stop looks whether a writer's lease ran out. */
const leaseCheckMs = (leaseMs: number): number => Math.max(1, Math.min(1_000, leaseMs / 2));

/**
 * The most chunks a resume reads at once: a long reply streams from the store page by page, so
 * its first bytes go out after one page's read, whatever its length.
 */
export const RESUME_PAGE_CHUNKS = 256;

/** A comment sent on an idle events stream, so proxies keep it open. */
const HEARTBEAT_MS = 15_000;

/**
 * A wake-up: `wait()` resolves at the next `wake()` (one that came since the last wait counts)
 * or after `milliseconds`, whichever is first, without a timer left behind.
 */
class Wakeup {
  #pending = false;
  #resolve: ((woken: boolean) => void) | undefined;

  wake(): void {
    if (this.#resolve) {
      const resolve = this.#resolve;
      this.#resolve = undefined;
      resolve(true);
    } else this.#pending = true;
  }

  /** True when woken, false when the time ran out. */
  wait(milliseconds: number): Promise<boolean> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = timers.setTimeout(() => {
        this.#resolve = undefined;
        resolve(false);
      }, milliseconds);
      this.#resolve = (woken) => {
        timers.clearTimeout(timer);
        resolve(woken);
      };
    });
  }
}

/**
 * The id of the message a live reply answers (the request's last message, the question it
 * follows), as the cycle keeps it in the record's `data.follows`; null when the record has none
 * (a reply started by something else than a turn of the cycle, or a continuation, which keeps
 * the id of the stored reply it continues).
 */
export function replyFollows(record: LiveReplyRecord | undefined): string | null {
  const follows = record?.data.follows;
  return typeof follows === 'string' && record?.data.continues !== true ? follows : null;
}

/** What the cycle's live replies need of the cycle. */
export interface LiveCycle {
  readonly settings: LiveSettings;
  readonly generateId: () => string;
  /** Runs a task on the chat's engine (the chat exists and is `userId`'s). */
  readonly onEngine: (
    chatId: string,
    userId: string,
    task: (engine: ContextEngine) => Promise<void>,
  ) => Promise<void>;
}

/**
 * Ends the live reply when its writer's lease ran out (by the store's clock): taken over, saved
 * as `interrupted` with the chunks it had ({@link interruptReply}), on `engine` when given (a
 * read that holds the chat's engine), else on the chat's engine. True when it did.
 */
async function endIfExpired<UI_MESSAGE extends UIMessage>(
  cycle: LiveCycle,
  chatId: string,
  replyId: string,
  userId: string,
  engine: ContextEngine | undefined,
): Promise<boolean> {
  const { store, leaseMs } = cycle.settings;
  const owner = cycle.generateId();
  const taken = await store.takeOverReply({ chatId, replyId, owner, leaseMs });
  if (taken === null) return false;
  if (engine !== undefined) await interruptReply<UI_MESSAGE>(store, taken, owner, engine);
  else
    await cycle.onEngine(chatId, userId, (chatEngine) =>
      interruptReply<UI_MESSAGE>(store, taken, owner, chatEngine),
    );
  return true;
}

/**
 * Ends every live reply of the chat whose writer's lease ran out (on `engine` when given, a read
 * that holds the chat's engine); returns those still live.
 */
export async function endExpiredReplies<UI_MESSAGE extends UIMessage>(
  cycle: LiveCycle,
  chatId: string,
  userId: string,
  replies: readonly LiveReplyRecord[],
  engine?: ContextEngine,
): Promise<LiveReplyRecord[]> {
  const left: LiveReplyRecord[] = [];
  for (const record of replies) {
    if (!(await endIfExpired<UI_MESSAGE>(cycle, chatId, record.replyId, userId, engine)))
      left.push(record);
  }
  return left;
}

/**
 * Before a read shows the chat: ends its live replies whose writer's lease ran out, on the
 * read's own engine, so a reply whose process died reads back saved (`interrupted`) from the
 * first look at the chat, whatever looks. One read of the live state when none is live.
 */
export async function endExpiredBeforeRead<UI_MESSAGE extends UIMessage>(
  cycle: LiveCycle,
  engine: ContextEngine,
): Promise<void> {
  const chatId = engine.chatId;
  const state = await cycle.settings.store.getLiveState(chatId);
  if (state.replies.length > 0)
    await endExpiredReplies<UI_MESSAGE>(cycle, chatId, engine.userId, state.replies, engine);
}

/**
 * A live reply's UI message stream as server-sent events, for a resume: its chunks from the
 * first, read in pages of {@link RESUME_PAGE_CHUNKS} (the first bytes go out after the first
 * page, however long the reply), then each batch as the change feed announces it, until its `finish` chunk or its end
 * (a `finish` chunk is sent then when the stream had none). A reply that ended while this
 * reader was behind still gives its last chunks: the store keeps an ended reply's chunks
 * readable for a grace period. A new start of the reply's id (a continuation) is not followed.
 * While it waits, it ends the reply as interrupted once its writer's lease ran out. Stops with
 * `signal` or the reader's cancel, leaving no timer or watcher behind.
 */
export function followReply<UI_MESSAGE extends UIMessage>(
  cycle: LiveCycle,
  record: LiveReplyRecord,
  userId: string,
  signal: AbortSignal | undefined,
): ReadableStream<string> {
  const { store, leaseMs } = cycle.settings;
  const { chatId, replyId } = record;
  const wakeup = new Wakeup();
  let closed = false;
  let unwatch: (() => void) | undefined;
  const stop = (): void => {
    closed = true;
    unwatch?.();
    unwatch = undefined;
    wakeup.wake();
  };
  const chunks = new ReadableStream<UIMessageChunk>({
    start(controller) {
      unwatch = store.watchChat(chatId, (change: ChatChange) => {
        if (change.type === 'chat' || change.replyId === replyId) wakeup.wake();
      });
      signal?.addEventListener('abort', stop, { once: true });
      void (async () => {
        let from = 0;
        let finished = false;
        try {
          while (!closed) {
            const read = await store.readReply({
              chatId,
              replyId,
              from,
              limit: RESUME_PAGE_CHUNKS,
            });
            // Gone (ended longer ago than the store's grace period), or started again since.
            if (read === null || read.record.startedAt !== record.startedAt) break;
            for (const chunk of read.chunks) {
              controller.enqueue(chunk as UIMessageChunk);
              if ((chunk as { type?: unknown }).type === 'finish') finished = true;
            }
            from += read.chunks.length;
            if (finished) break;
            // A full page: the next one is read at once.
            if (read.chunks.length === RESUME_PAGE_CHUNKS) continue;
            // An ended reply's chunks are all there: no more will come.
            if (read.record.endedAt !== null) break;
            if (!(await wakeup.wait(leaseCheckMs(leaseMs))) && !closed)
              await endIfExpired<UI_MESSAGE>(cycle, chatId, replyId, userId, undefined);
          }
          if (!finished && !closed) controller.enqueue({ type: 'finish' } as UIMessageChunk);
        } catch {
          // A store that failed mid-resume: the reader's stream ends as a stopped one would.
          if (!closed) controller.enqueue({ type: 'finish' } as UIMessageChunk);
        } finally {
          signal?.removeEventListener('abort', stop);
          const wasClosed = closed;
          stop();
          if (!wasClosed) {
            try {
              controller.close();
            } catch {
              // cancelled meanwhile
            }
          }
        }
      })();
    },
    cancel() {
      stop();
    },
  });
  return chunks.pipeThrough(new JsonToSseTransformStream());
}

/**
 * The chat's change events (`text/event-stream`): at once one with its state, then one after
 * each change notice of the feed (notices that come while the state is read share one event),
 * `data: {"version":n,"live":id|null,"follows":id|null}` (the chat's change revision, the most recently
 * started live reply, and the message it answers: {@link replyFollows}), sent only when one
 * changed; a comment every 15 s while idle. While a reply is
 * live it ends it as interrupted once its writer's lease ran out. Stops with `signal` or the
 * reader's cancel, leaving no timer or watcher behind.
 */
export function chatEvents<UI_MESSAGE extends UIMessage>(
  cycle: LiveCycle,
  chatId: string,
  userId: string,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  const { store, leaseMs } = cycle.settings;
  const encoder = new TextEncoder();
  const wakeup = new Wakeup();
  let closed = false;
  let unwatch: (() => void) | undefined;
  let heartbeat: unknown;
  const stop = (): void => {
    closed = true;
    unwatch?.();
    unwatch = undefined;
    if (heartbeat !== undefined) timers.clearTimeout(heartbeat);
    heartbeat = undefined;
    wakeup.wake();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string): void => {
        if (closed) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const beat = (): void => {
        heartbeat = timers.setTimeout(() => {
          send(': keep-alive\n\n');
          if (!closed) beat();
        }, HEARTBEAT_MS);
      };
      beat();
      unwatch = store.watchChat(chatId, (change) => {
        if (change.type === 'chat') wakeup.wake();
      });
      signal?.addEventListener('abort', stop, { once: true });
      void (async () => {
        let last = '';
        try {
          while (!closed) {
            const state = await store.getLiveState(chatId);
            const newest = state.replies.at(-1);
            const data = JSON.stringify({
              version: state.changeRevision,
              live: newest?.replyId ?? null,
              follows: replyFollows(newest),
            });
            if (data !== last) {
              send(`data: ${data}\n\n`);
              last = data;
            }
            const woken = await wakeup.wait(
              state.replies.length > 0 ? leaseCheckMs(leaseMs) : HEARTBEAT_MS,
            );
            if (!woken && !closed && state.replies.length > 0)
              await endExpiredReplies<UI_MESSAGE>(cycle, chatId, userId, state.replies);
          }
        } catch {
          // The store failed (the chat deleted meanwhile, the database gone): the stream ends.
        } finally {
          signal?.removeEventListener('abort', stop);
          stop();
          try {
            controller.close();
          } catch {
            // cancelled meanwhile
          }
        }
      })();
    },
    cancel() {
      stop();
    },
  });
}

/**
 * Stops the chat's live replies (or the one named) and waits until each is ended (saved by its
 * writer, or, once its writer's lease ran out, as interrupted by this call). The most recently
 * started of them, or null when none was live.
 */
export async function stopReplies<UI_MESSAGE extends UIMessage>(
  cycle: LiveCycle,
  chatId: string,
  userId: string,
  messageId: string | undefined,
): Promise<{ messageId: string } | null> {
  const { store, leaseMs } = cycle.settings;
  const marked = await store.stopReply({
    chatId,
    ...(messageId === undefined ? {} : { replyId: messageId }),
  });
  const newest = marked.at(-1);
  if (newest === undefined) return null;
  const ids = new Set(marked.map((record) => record.replyId));
  const wakeup = new Wakeup();
  const unwatch = store.watchChat(chatId, (change) => {
    if (change.type === 'chat') wakeup.wake();
  });
  try {
    for (;;) {
      const live = (await store.getLiveState(chatId)).replies.filter((record) =>
        ids.has(record.replyId),
      );
      if (live.length === 0) break;
      if (!(await wakeup.wait(leaseCheckMs(leaseMs))))
        await endExpiredReplies<UI_MESSAGE>(cycle, chatId, userId, live);
    }
  } finally {
    unwatch();
  }
  return { messageId: newest.replyId };
}
