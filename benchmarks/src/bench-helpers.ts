// Small helpers shared by the benchmark scripts.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ContextStore } from '@ctxgraph/fragments-core';

/** The median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0
    ? ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
    : (sorted[middle] ?? 0);
}

/** Prints rows of equal keys as an aligned table. */
export function printTable(rows: readonly Record<string, string>[]): void {
  const first = rows[0];
  if (!first) return;
  const columns = Object.keys(first);
  const widths = columns.map((column) =>
    Math.max(column.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells.map((cell, index) => cell.padStart(widths[index] ?? 0)).join('  ');
  console.log(line(columns));
  for (const row of rows) console.log(line(columns.map((column) => row[column] ?? '')));
}

/**
 * Creates a chat whose main branch holds `size` alternating user / assistant messages, written
 * straight through the store in large commits so that seeding is not what gets measured.
 */
export async function seedChat(
  store: ContextStore,
  chatId: string,
  userId: string,
  size: number,
): Promise<void> {
  const opened = await store.openChat({ chatId, userId });
  let head = opened.branch.headMessageId;
  const batchSize = 500;
  for (let start = 0; start < size; start += batchSize) {
    const messages = [];
    for (let index = start; index < Math.min(size, start + batchSize); index += 1) {
      const id = `${chatId}-seed-${index}`;
      const role = index % 2 === 0 ? 'user' : 'assistant';
      messages.push({
        id,
        message: {
          id,
          role,
          parts: [{ type: 'text', text: `${role} message number ${index} with a little text` }],
        },
      });
    }
    const result = await store.commit({ chatId, branch: 'main', expectedHeadId: head, messages });
    head = result.headMessageId;
  }
}

/** One turn as a commit batch: a user message and an assistant reply, ids derived from `tag`. */
export function turn(tag: string): Array<{
  id: string;
  message: { id: string; role: string; parts: Array<{ type: 'text'; text: string }> };
}> {
  const userId = `${tag}-user`;
  const replyId = `${tag}-reply`;
  return [
    {
      id: userId,
      message: { id: userId, role: 'user', parts: [{ type: 'text', text: `question ${tag}` }] },
    },
    {
      id: replyId,
      message: {
        id: replyId,
        role: 'assistant',
        parts: [{ type: 'text', text: `answer ${tag}, a few words long` }],
      },
    },
  ];
}

/** The median time of `runs` sequential runs of `task`, in milliseconds. */
export async function timeAsync(
  runs: number,
  task: (run: number) => Promise<unknown>,
): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    await task(run);
    times.push(performance.now() - started);
  }
  return median(times);
}

/** The per-save table row both store benchmarks print: medians and their ratios to the floor. */
export function saveRow(
  size: number,
  times: { commit: readonly number[]; save: readonly number[]; floor: readonly number[] },
  digits: number,
): Record<string, string> {
  const commitMs = median(times.commit);
  const engineSaveMs = median(times.save);
  const floorMs = median(times.floor);
  return {
    history: size.toLocaleString('en-US'),
    'store.commit (1 turn)': commitMs.toFixed(digits),
    'engine.save (1 turn)': engineSaveMs.toFixed(digits),
    'bare transaction floor': floorMs.toFixed(digits),
    'commit / floor': (commitMs / floorMs).toFixed(2),
    'save / floor': (engineSaveMs / floorMs).toFixed(2),
  };
}

/**
 * Reads a child process's stdout line by line: each call resolves to its next line, or rejects
 * once the process has ended without writing one (`name` says which process in the error).
 */
export function childLines(child: ChildProcess, name: string): () => Promise<string> {
  const queue: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  if (child.stdout === null) throw new Error(`${name}: its stdout must be a pipe`);
  createInterface({ input: child.stdout }).on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queue.push(line);
  });
  const ended = new Promise<never>((_, reject) => {
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`${name} ended (exit code ${code})`)));
  });
  // Handled here too, so an ending nobody waits for is not an unhandled rejection.
  ended.catch(() => undefined);
  return () =>
    Promise.race([
      new Promise<string>((resolve) => {
        const line = queue.shift();
        if (line !== undefined) resolve(line);
        else waiting.push(resolve);
      }),
      ended,
    ]);
}
