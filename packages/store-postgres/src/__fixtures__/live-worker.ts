// A child process for the live-reply tests across processes. Usage:
//   node --import tsx live-worker.ts serve <url> <schema>
//     reads one JSON command per stdin line and answers each with one JSON line on stdout:
//     { op: 'ask', chatId, replyId, owner, leaseMs }   a question committed with its live reply
//     { op: 'append', chatId, replyId, owner, from, count, leaseMs }   `count` text chunks at `from`
//     { op: 'save', chatId, replyId, owner, after, text }   the reply saved, its record ended
//   node --import tsx live-worker.ts watch <url> <schema> <chatId> <then>
//     with a client of its own given to the store as `sql`, watches the chat until the first
//     notice, then `unsubscribe`s (leaving the store open) or `close`s the store, ends its own
//     client, prints { done: true } and returns: the process must then exit by itself (the
//     feed's LISTEN connection and timers gone, though the store was never closed).
// A failure answers { error: '<name>: <message>' } (serve) or exits with 1.
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { PostgresContextStore } from '../postgres-context-store';

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

function chunks(from: number, count: number): { type: string; id: string; delta: string }[] {
  return Array.from({ length: count }, (_, index) => ({
    type: 'text-delta',
    id: 'text-1',
    delta: `chunk ${from + index}`,
  }));
}

async function run(store: PostgresContextStore, command: Command): Promise<unknown> {
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
    return store.appendReplyChunks({
      chatId,
      replyId,
      owner,
      from,
      chunks: chunks(from, command.count ?? 1),
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

async function main(): Promise<void> {
  const [mode, url, schema, chatId, then] = process.argv.slice(2);
  if (url === undefined || schema === undefined)
    throw new Error('live-worker: missing url or schema');
  if (mode === 'watch') {
    if (chatId === undefined) throw new Error('live-worker: missing chat id');
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const store = new PostgresContextStore({ sql, schema });
    await new Promise<void>((resolve) => {
      const unsubscribe = store.watchChat(chatId, () => {
        if (then === 'unsubscribe') unsubscribe();
        resolve();
      });
    });
    if (then === 'close') await store.close();
    await sql.end();
    process.stdout.write(`${JSON.stringify({ done: true })}\n`);
    return;
  }
  const store = new PostgresContextStore({ connectionString: url, schema, connection: { max: 1 } });
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
}

main().catch((error: unknown) => {
  process.stderr.write(
    error instanceof Error ? `${error.name}: ${error.message}\n` : `${String(error)}\n`,
  );
  process.exit(1);
});
