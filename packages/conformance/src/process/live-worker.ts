/// <reference types="node" />
import { createInterface } from 'node:readline';
import type { ContextStore } from '@ctxgraph/fragments-core';

/** A store a live worker opened, and what to end beside it once the store is done with. */
export interface OpenedWorkerStore {
  readonly store: ContextStore;
  /** Ends what the opening made beside the store (a client it gave the store). @default none */
  readonly release?: () => Promise<void>;
}

/** Options of {@link runLiveWorker}: the store-specific part of a live worker. */
export interface LiveWorkerOptions {
  /** How many command-line arguments (after the mode) say where the store is. */
  readonly storeArguments: number;
  /**
   * Opens the store from those arguments. `mode` `'watch'` is the feed check: give the store a
   * client of its own where it takes one, and end it in `release`, so the check shows that the
   * feed leaves nothing behind even when the store is never closed.
   */
  readonly open: (mode: 'serve' | 'watch', args: readonly string[]) => OpenedWorkerStore;
}

/** A command of a serving worker (one JSON line). */
interface Command {
  readonly op: string;
  readonly chatId: string;
  readonly replyId: string;
  readonly owner: string;
  readonly leaseMs?: number;
  readonly from?: number;
  readonly count?: number;
  readonly after?: string;
  readonly text?: string;
}

/** `count` text chunks from offset `from`: `chunk <offset>` each. */
function textChunks(from: number, count: number): { type: string; id: string; delta: string }[] {
  return Array.from({ length: count }, (_, index) => ({
    type: 'text-delta',
    id: 'text-1',
    delta: `chunk ${from + index}`,
  }));
}

function requireLive<T>(method: T | undefined, name: string): T {
  if (method === undefined) throw new Error(`the store has no ${name} (capabilities.liveReplies)`);
  return method;
}

async function run(store: ContextStore, command: Command): Promise<unknown> {
  const { chatId, replyId, owner } = command;
  if (command.op === 'ask') {
    await store.openChat({ chatId, userId: 'worker' });
    const head = await store.getHead({ chatId, branch: 'main' });
    const questionId = `question-of-${replyId}`;
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: head.headMessageId,
      messages: [
        {
          id: questionId,
          message: { id: questionId, role: 'user', parts: [{ type: 'text', text: 'Hi?' }] },
        },
      ],
      startReply: { replyId, owner, leaseMs: command.leaseMs ?? 60_000 },
    });
    return { questionId };
  }
  if (command.op === 'append') {
    const from = command.from ?? 0;
    const append = requireLive(store.appendReplyChunks, 'appendReplyChunks');
    return append.call(store, {
      chatId,
      replyId,
      owner,
      from,
      chunks: textChunks(from, command.count ?? 1),
      leaseMs: command.leaseMs ?? 60_000,
    });
  }
  if (command.op === 'save') {
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: command.after ?? null,
      messages: [
        {
          id: replyId,
          message: {
            id: replyId,
            role: 'assistant',
            parts: [{ type: 'text', text: command.text ?? '' }],
          },
        },
      ],
      endReply: { replyId, owner },
    });
    return { saved: true };
  }
  throw new Error(`unknown op ${command.op}`);
}

async function main(options: LiveWorkerOptions): Promise<void> {
  const [mode, ...rest] = process.argv.slice(2);
  const where = rest.slice(0, options.storeArguments);
  const [chatId, then] = rest.slice(options.storeArguments);
  if (where.length < options.storeArguments)
    throw new Error(`live-worker: expected ${options.storeArguments} store arguments`);
  if (mode === 'watch') {
    if (chatId === undefined) throw new Error('live-worker: missing chat id');
    const { store, release } = options.open('watch', where);
    const watch = requireLive(store.watchChat, 'watchChat');
    await new Promise<void>((resolve) => {
      const unsubscribe = watch.call(store, chatId, () => {
        if (then === 'unsubscribe') unsubscribe();
        resolve();
      });
    });
    if (then === 'close') await store.close();
    await release?.();
    process.stdout.write(`${JSON.stringify({ done: true })}\n`);
    return;
  }
  const { store, release } = options.open('serve', where);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    let answer: unknown;
    try {
      answer = await run(store, JSON.parse(line) as Command);
    } catch (error) {
      answer = {
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  await store.close();
  await release?.();
}

/**
 * The body of a live-reply worker process, for tests of a store across real processes (resume,
 * takeover and a change feed seen from another process, a writer killed with SIGKILL). Give it
 * the store-specific part (how to open the store from the command line); it runs the rest:
 *
 * - `serve <store arguments…>`: reads one JSON command per stdin line and answers each with one
 *   JSON line on stdout: `{ op: 'ask', chatId, replyId, owner, leaseMs }` (a question committed
 *   with its live reply; answers `{ questionId }`), `{ op: 'append', chatId, replyId, owner,
 *   from, count, leaseMs }` (`count` text chunks at `from`, `chunk <offset>` each; answers the
 *   append's result), `{ op: 'save', chatId, replyId, owner, after, text }` (the reply saved
 *   after `after`, its record ended). A failure answers `{ error: '<name>: <message>' }`. At the
 *   end of its input it closes the store and exits.
 * - `watch <store arguments…> <chatId> <then>`: watches the chat until the first notice, then
 *   `unsubscribe`s (leaving the store open) or `close`s the store, runs `release`, prints
 *   `{ done: true }` and returns: the process must then exit by itself (no timer or handle of
 *   the feed left behind).
 *
 * Drive it with {@link WorkerProcess}. Node only; exits with 1 on a failure outside a command.
 *
 * @example
 * ```ts
 * // src/__fixtures__/live-worker.ts, run as `node --import tsx live-worker.ts serve <file>`
 * import { runLiveWorker } from '@ctxgraph/conformance/process';
 * import { SqliteContextStore } from '../sqlite-context-store';
 *
 * runLiveWorker({
 *   storeArguments: 1,
 *   open: (_mode, [path]) => ({ store: new SqliteContextStore({ path: path as string }) }),
 * });
 * ```
 */
export function runLiveWorker(options: LiveWorkerOptions): void {
  main(options).catch((error: unknown) => {
    process.stderr.write(
      error instanceof Error ? `${error.name}: ${error.message}\n` : `${String(error)}\n`,
    );
    process.exit(1);
  });
}
