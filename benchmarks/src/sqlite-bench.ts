// SqliteContextStore costs on a file in the OS temp dir. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/sqlite-bench.ts
// The same file doubles as the writer process of the multi-process figure (`--writer ...`).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { HeadConflictError, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { migrateSqliteDatabase, SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import { printTable, saveRow, seedChat, timeAsync, turn } from './bench-helpers.ts';

const sizes = [100, 1_000, 10_000];
const saveRuns = 300;
const renderer = new XmlRenderer();

/**
 * The floor: a bare better-sqlite3 IMMEDIATE transaction on the same schema and settings that
 * inserts the same two rows (JSON already serialized) and moves one head row. Nothing else.
 */
function openFloor(path: string, historySize: number): (tag: string) => void {
  const database = new Database(path);
  database.pragma('busy_timeout = 5000');
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  migrateSqliteDatabase(database, { tablePrefix: 'floor_' });
  const now = Date.now();
  database
    .prepare('INSERT INTO floor_chats VALUES (?, ?, NULL, ?, ?, 0, 0, ?, ?)')
    .run('c', 'u', '{}', 'main', now, now);
  database
    .prepare('INSERT INTO floor_branches VALUES (?, ?, NULL, ?, ?)')
    .run('c', 'main', now, now);
  const insert = database.prepare(
    'INSERT INTO floor_messages (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const moveHead = database.prepare(
    'UPDATE floor_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ?',
  );
  let head: string | null = null;
  let sequence = 0;
  const append = database.transaction((messages: { id: string; role: string; json: string }[]) => {
    for (const message of messages) {
      sequence += 1;
      insert.run('c', message.id, head, sequence, message.role, message.json, now, now);
      head = message.id;
    }
    moveHead.run(head, now, 'c', 'main');
  });
  const serialized = (tag: string) =>
    turn(tag).map((entry) => ({
      id: entry.id,
      role: entry.message.role,
      json: JSON.stringify(entry.message),
    }));
  for (let index = 0; index < historySize / 2; index += 1)
    append.immediate(serialized(`seed-${index}`));
  return (tag) => append.immediate(serialized(tag));
}

async function measureSaves(directory: string, size: number): Promise<Record<string, string>> {
  const store = new SqliteContextStore(join(directory, `save-${size}.db`));
  await seedChat(store, 'chat', 'bench-user', size);
  await seedChat(store, 'engine-chat', 'bench-user', size);
  const floor = openFloor(join(directory, `floor-${size}.db`), size);
  let head = (await store.getHead({ chatId: 'chat', branch: 'main' })).headMessageId;
  const engine = new ContextEngine({
    store,
    chatId: 'engine-chat',
    userId: 'bench-user',
    renderer,
  });
  engine.set(role('You are a benchmark.'));
  await engine.resolve();

  // The three are interleaved run by run, so a busy machine slows them alike and the ratios hold.
  const commitTimes: number[] = [];
  const saveTimes: number[] = [];
  const floorTimes: number[] = [];
  const warmup = 50;
  for (let run = 0; run < warmup + saveRuns; run += 1) {
    let started = performance.now();
    const result = await store.commit({
      chatId: 'chat',
      branch: 'main',
      expectedHeadId: head,
      messages: turn(`run-${run}`),
    });
    const commitMs = performance.now() - started;
    head = result.headMessageId;
    engine.set(user(`question ${run}`), assistantText(`answer ${run}`));
    started = performance.now();
    await engine.save();
    const saveMs = performance.now() - started;
    started = performance.now();
    floor(`floor-${run}`);
    const floorMs = performance.now() - started;
    if (run < warmup) continue;
    commitTimes.push(commitMs);
    saveTimes.push(saveMs);
    floorTimes.push(floorMs);
  }
  await store.close();
  return saveRow(size, { commit: commitTimes, save: saveTimes, floor: floorTimes }, 4);
}

async function measureReads(directory: string): Promise<Record<string, string>[]> {
  const size = 10_000;
  const path = join(directory, 'reads.db');
  const seeding = new SqliteContextStore(path);
  await seedChat(seeding, 'chat', 'bench-user', size);
  const head = (await seeding.getHead({ chatId: 'chat', branch: 'main' })).headMessageId as string;
  await seeding.close();

  // Cold: a new store object each time (new connection, no statement or page cache of its own).
  const coldChain = await timeAsync(7, async () => {
    const store = new SqliteContextStore(path);
    const chain = await store.getChain({ chatId: 'chat', headMessageId: head });
    if (chain.nodes.length !== size) throw new Error(`read ${chain.nodes.length} of ${size} nodes`);
    await store.close();
  });
  const coldResolve = await timeAsync(7, async () => {
    const store = new SqliteContextStore(path);
    const engine = new ContextEngine({ store, chatId: 'chat', userId: 'bench-user', renderer });
    engine.set(role('You are a benchmark.'), hint('Be quick.'));
    const { messages } = await engine.resolve();
    if (messages.length !== size)
      throw new Error(`resolved ${messages.length} of ${size} messages`);
    await store.close();
  });

  const store = new SqliteContextStore(path);
  await store.getChain({ chatId: 'chat', headMessageId: head });
  const warmChain = await timeAsync(20, () =>
    store.getChain({ chatId: 'chat', headMessageId: head }),
  );
  const warmHead = await timeAsync(200, () => store.getHead({ chatId: 'chat', branch: 'main' }));
  const engine = new ContextEngine({ store, chatId: 'chat', userId: 'bench-user', renderer });
  engine.set(role('You are a benchmark.'), hint('Be quick.'));
  await engine.resolve();
  const warmResolve = await timeAsync(50, () => engine.resolve());
  await store.close();
  return [
    { read: 'getChain, whole chain', cold: coldChain.toFixed(2), warm: warmChain.toFixed(2) },
    { read: 'engine.resolve()', cold: coldResolve.toFixed(2), warm: warmResolve.toFixed(3) },
    { read: 'getHead', cold: '-', warm: warmHead.toFixed(4) },
  ];
}

function runWriter(
  path: string,
  writer: number,
  turns: number,
  startAt: number,
): Promise<{ conflicts: number; finishedAt: number }> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(import.meta.url);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', script, '--writer', path, String(writer), String(turns), String(startAt)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(output))
        : reject(new Error(`writer ${writer} exited with ${code}`)),
    );
  });
}

async function measureProcesses(directory: string): Promise<void> {
  const path = join(directory, 'processes.db');
  const setup = new SqliteContextStore(path);
  await setup.openChat({ chatId: 'shared', userId: 'bench-user' });
  await setup.close();
  const writers = 4;
  const turns = 500;
  // Every writer loads and opens its store first, then starts at the same moment.
  const startAt = Date.now() + 3000;
  const results = await Promise.all(
    Array.from({ length: writers }, (_, writer) => runWriter(path, writer, turns, startAt)),
  );
  const finishedAt = Math.max(...results.map((result) => result.finishedAt));
  const seconds = (finishedAt - startAt) / 1000;

  const store = new SqliteContextStore(path);
  const head = await store.getHead({ chatId: 'shared', branch: 'main' });
  const chain = await store.getChain({
    chatId: 'shared',
    headMessageId: head.headMessageId as string,
  });
  const ids = new Set(chain.nodes.map((node) => node.id));
  await store.close();
  let lost = 0;
  for (let writer = 0; writer < writers; writer += 1) {
    for (let index = 0; index < turns; index += 1) {
      if (!ids.has(`w${writer}-${index}-user`) || !ids.has(`w${writer}-${index}-reply`)) lost += 1;
    }
  }
  const duplicates = chain.nodes.length - ids.size;
  const conflicts = results.reduce((sum, result) => sum + result.conflicts, 0);
  console.log(
    `\n${writers} processes x ${turns} turns on one chat: ${((writers * turns) / seconds).toFixed(0)} turns/s, ` +
      `${conflicts} head conflicts retried, chain ${chain.nodes.length} nodes, lost turns: ${lost}, duplicated nodes: ${duplicates}`,
  );
}

async function writer(
  path: string,
  writerIndex: number,
  turns: number,
  startAt: number,
): Promise<void> {
  const store = new SqliteContextStore({ path, busyTimeout: 30_000 });
  while (Date.now() < startAt) {}
  let conflicts = 0;
  for (let index = 0; index < turns; index += 1) {
    for (;;) {
      const head = await store.getHead({ chatId: 'shared', branch: 'main' });
      try {
        await store.commit({
          chatId: 'shared',
          branch: 'main',
          expectedHeadId: head.headMessageId,
          messages: turn(`w${writerIndex}-${index}`),
        });
        break;
      } catch (error) {
        if (!HeadConflictError.isInstance(error)) throw error;
        conflicts += 1;
      }
    }
  }
  const finishedAt = Date.now();
  await store.close();
  process.stdout.write(JSON.stringify({ conflicts, finishedAt }));
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-sqlite-bench-'));
  try {
    console.log(`SqliteContextStore on ${directory} (WAL, synchronous=NORMAL)`);
    console.log(
      `\nPer-save median milliseconds of one turn (user + assistant), ${saveRuns} saves each`,
    );
    const rows: Record<string, string>[] = [];
    for (const size of sizes) rows.push(await measureSaves(directory, size));
    printTable(rows);
    const first = rows[0];
    const last = rows.at(-1);
    if (first && last) {
      const growth = (key: string) => (Number(last[key]) / Number(first[key])).toFixed(2);
      console.log(
        `10,000 vs 100 messages of history: commit ${growth('store.commit (1 turn)')}x, engine.save ${growth('engine.save (1 turn)')}x (target: flat); commit within 3x of the floor: ${rows.every((row) => Number(row['commit / floor']) <= 3) ? 'yes' : 'no'}`,
      );
    }
    console.log('\nReads of a 10,000-message chat, median milliseconds');
    printTable(await measureReads(directory));
    await measureProcesses(directory);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const writerFlag = process.argv.indexOf('--writer');
if (writerFlag >= 0) {
  const [path, writerIndex, turns, startAt] = process.argv.slice(writerFlag + 1);
  await writer(path as string, Number(writerIndex), Number(turns), Number(startAt));
} else {
  await main();
}
