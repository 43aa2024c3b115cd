// A child process for the multi-process tests. Usage:
//   node --import tsx append-worker.ts append <file> <chatId> <worker> <turns> <startAt>
//   node --import tsx append-worker.ts append-at-head <file> <chatId> <worker> <turns> <startAt>
//   node --import tsx append-worker.ts fork <file> <chatId> <worker> <forks> <startAt>
//   node --import tsx append-worker.ts open <file> <startAt> [tablePrefix]
// `append` commits <turns> turns (a user and an assistant message each) on the chat's main branch,
// re-reading the head and retrying on every HeadConflictError, then prints a JSON summary.
// `append-at-head` saves the same turns through store.append (no retry: it must never fail) and
// prints the head each turn attached to. `fork` forks `main` <forks> times through
// store.forkBranch and prints the names it got.
// `open` only constructs the store (which migrates the file) at <startAt>, to race migrations.
// A failure prints the error's name and message to stderr and exits with 1.
import { HeadConflictError } from '@ctxgraph/fragments-core';
import { SqliteContextStore } from '../sqlite-context-store';

function waitUntil(startAt: number): void {
  // Busy-wait a few hundred ms so every process starts its writes at the same moment.
  while (Date.now() < startAt) {}
}

async function main(): Promise<void> {
  const [mode, path, ...rest] = process.argv.slice(2);
  if (path === undefined) throw new Error('append-worker: missing file path');
  if (mode === 'open') {
    waitUntil(Number(rest[0]));
    const store = new SqliteContextStore({ path, busyTimeout: 30_000, tablePrefix: rest[1] });
    await store.close();
    process.stdout.write(JSON.stringify({ opened: true }));
    return;
  }
  const [chatId, worker, turnsText, startAtText] = rest;
  if (chatId === undefined || worker === undefined)
    throw new Error('append-worker: missing arguments');
  const turns = Number(turnsText);
  const store = new SqliteContextStore({ path, busyTimeout: 30_000 });
  waitUntil(Number(startAtText));
  if (mode === 'append-at-head') {
    const attachedTo: (string | null)[] = [];
    for (let turn = 0; turn < turns; turn += 1) {
      const ids = [`w${worker}-t${turn}-user`, `w${worker}-t${turn}-reply`];
      const result = await store.append({
        chatId,
        branch: 'main',
        messages: ids.map((id, index) => ({
          id,
          message: {
            id,
            role: index === 0 ? 'user' : 'assistant',
            parts: [{ type: 'text', text: `${index === 0 ? 'question' : 'answer'} ${turn}` }],
          },
        })),
      });
      attachedTo.push(result.previousHeadId);
    }
    await store.close();
    process.stdout.write(JSON.stringify({ worker, turns, attachedTo }));
    return;
  }
  if (mode === 'fork') {
    const names: string[] = [];
    for (let fork = 0; fork < turns; fork += 1) {
      const branch = await store.forkBranch({ chatId, from: 'main', headMessageId: null });
      names.push(branch.name);
    }
    await store.close();
    process.stdout.write(JSON.stringify({ worker, names }));
    return;
  }
  let conflicts = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const userId = `w${worker}-t${turn}-user`;
    const replyId = `w${worker}-t${turn}-reply`;
    for (;;) {
      const head = await store.getHead({ chatId, branch: 'main' });
      // Stand-in for the model call between reading the head and saving: it widens the window in
      // which another process moves the head, so conflicts and retries really happen.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      try {
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: head.headMessageId,
          messages: [
            {
              id: userId,
              message: {
                id: userId,
                role: 'user',
                parts: [{ type: 'text', text: `question ${turn}` }],
              },
            },
            {
              id: replyId,
              message: {
                id: replyId,
                role: 'assistant',
                parts: [{ type: 'text', text: `answer ${turn}` }],
              },
            },
          ],
        });
        break;
      } catch (error) {
        if (!HeadConflictError.isInstance(error)) throw error;
        conflicts += 1;
      }
    }
  }
  await store.close();
  process.stdout.write(JSON.stringify({ worker, turns, conflicts }));
}

main().catch((error: unknown) => {
  process.stderr.write(String(error instanceof Error ? (error.stack ?? error.message) : error));
  process.exitCode = 1;
});
