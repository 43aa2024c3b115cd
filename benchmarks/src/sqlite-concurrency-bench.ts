// SqliteContextStore under many writers, and its write path beside a bare better-sqlite3 floor.
// Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/sqlite-concurrency-bench.ts [--rounds 5] [--warmup 1000]
//     [--only concurrency|per-save|batch]
// (the same file is the writer process of the concurrency figure: `--worker ...`)
//
// 1. 8 processes x 50 turns (a user and an assistant message each) on ONE chat, in three ways on
//    fresh files in the same run, interleaved round by round: through ContextEngine.save() (which
//    uses store.append, since the store declares it), through store.append directly, and a bare
//    better-sqlite3 floor. Lost turns, failed saves, duplicates, wall time, p50/p95 save latency.
// 2. One process, one turn per save on a 1,000-message chat: append, commit, engine.save, floor.
// 3. One batch of 10,000 messages: append, engine.save and the floor, and where the time goes.
//
// The floor does the store's work and no more: it serializes the messages before it takes the
// write lock (as the store does), then in one IMMEDIATE transaction reads the head and the highest
// sequence, inserts the rows, moves the head and bumps the chat's revision and recency (the chat
// row and its recency index, which the ContextStore contract requires of every save), with the
// same connection settings and the same busy handling (SQLite's busy_timeout).
//
// Every writer warms up before the start line (JIT, statement caches, the engine opening its
// chat) until its code runs at steady state, then the WAL is checkpointed, so that every way
// starts its measured turns alike. The warm-up takes the paths the measured turns take: it saves
// to ten chats of its own, each through two handles (two engines, or two writers) that take turns,
// so the code has seen a new engine on a chat and a head another writer moved. (With one handle on
// one chat, the measured turns, only 50 a writer, ran while V8 re-optimized for those paths: a
// third to a half more CPU a save in every way, the engine most.)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { prepareAppend } from '@ctxgraph/fragments-core/store-kit';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { migrateSqliteDatabase, SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import { childLines, median, printTable, seedChat, turn } from './bench-helpers.ts';

type Mode = 'engine' | 'append' | 'floor';
const modes: readonly Mode[] = ['engine', 'append', 'floor'];
const processes = 8;
const turnsPerProcess = 50;
const busyTimeout = 60_000;
const chatId = 'shared';
/** The chats each writer warms up on, each through two handles taking turns. */
const warmupChats = 10;
const renderer = new XmlRenderer();

/** What one writer process reports. */
interface WriterReport {
  readonly latencies: number[];
  /** Of each save, the time spent inside the store call (the whole save but for the engine). */
  readonly inStore: number[];
  readonly failures: string[];
  readonly finishedAt: number;
  /** CPU time the process used (user + system, all its threads) during its measured turns, in ms. */
  readonly cpuMs: number;
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

/** A chat a writer warms up on. */
function warmupChatId(writer: number, chat: number): string {
  return `warmup-${writer}-${chat}`;
}

/** A connection with the settings the store gives its own. */
function openFloorDatabase(path: string): Database.Database {
  const database = new Database(path);
  database.pragma(`busy_timeout = ${busyTimeout}`);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  return database;
}

/**
 * The floor's write of one batch. Outside the lock: each message serialized, as the store does in
 * `prepareAppend`. Inside one IMMEDIATE transaction: read the head and the highest sequence,
 * insert the rows, move the head, bump the chat's revision and `updated_at` (the row and its
 * recency index; the store must, for the engine's caches and `listChats`).
 */
function floorWriter(
  database: Database.Database,
  chat: string,
): (messages: ReturnType<typeof turn>) => void {
  const read = database.prepare(
    `SELECT head_message_id AS head, (SELECT MAX(sequence) FROM floor_messages WHERE chat_id = @chat) AS max
       FROM floor_branches WHERE chat_id = @chat AND name = 'main'`,
  );
  const insert = database.prepare(
    'INSERT INTO floor_messages (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const moveHead = database.prepare(
    "UPDATE floor_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = 'main'",
  );
  const bumpChat = database.prepare(
    'UPDATE floor_chats SET version = version + 1, updated_at = ? WHERE id = ?',
  );
  const write = database.transaction(
    (rows: ReadonlyArray<{ id: string; role: string; json: string }>) => {
      const state = read.get({ chat }) as { head: string | null; max: number | null };
      let head = state.head;
      let sequence = state.max ?? 0;
      const now = Date.now();
      for (const row of rows) {
        sequence += 1;
        insert.run(chat, row.id, head, sequence, row.role, row.json, now, now);
        head = row.id;
      }
      moveHead.run(head, now, chat);
      bumpChat.run(now, chat);
    },
  );
  return (messages) =>
    write.immediate(
      messages.map(({ id, message }) => ({
        id,
        role: message.role,
        json: JSON.stringify(message),
      })),
    );
}

function createFloorChat(database: Database.Database, chat: string): void {
  migrateSqliteDatabase(database, { tablePrefix: 'floor_' });
  // Store modes create chats through openChat; the floor's rows are inserted as they are.
  const now = Date.now();
  database
    .prepare("INSERT INTO floor_chats VALUES (?, 'bench-user', NULL, '{}', 'main', 0, 0, ?, ?)")
    .run(chat, now, now);
  database.prepare("INSERT INTO floor_branches VALUES (?, 'main', NULL, ?, ?)").run(chat, now, now);
}

// ---------------------------------------------------------------------------------------------
// 1. Concurrency

/**
 * Sleeps (without using a CPU) until 2 ms before `startAt`, then spins to it: eight writers that
 * spun the whole wait would take the CPUs from each other and start at scattered moments.
 */
function waitUntil(startAt: number): void {
  const sleep = startAt - Date.now() - 2;
  if (sleep > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, sleep);
  while (Date.now() < startAt) {}
}

/** One line from stdin. */
function readLine(): Promise<string> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
  });
}

async function writerProcess(
  mode: Mode,
  path: string,
  writer: number,
  turns: number,
  warmupSaves: number,
): Promise<void> {
  const latencies: number[] = [];
  const inStore: number[] = [];
  const failures: string[] = [];
  let spentInStore = (): number => Number.NaN;
  // A writer saves turns to a chat; `save(chat, tag)` saves one turn whose ids derive from `tag`.
  let saveTo: (chat: string) => (tag: string) => Promise<unknown>;
  let close: () => Promise<void>;
  // The engine opens its chat (a read) before the start line: opening is not a save.
  const opened = new Map<string, Array<() => Promise<unknown>>>();
  const open = async (chat: string) => {
    for (const resolve of opened.get(chat) ?? []) await resolve();
  };
  if (mode === 'floor') {
    const database = openFloorDatabase(path);
    saveTo = (chat) => {
      const write = floorWriter(database, chat);
      return async (tag) => write(turn(tag));
    };
    close = async () => {
      database.close();
    };
  } else {
    const store = new SqliteContextStore({ path, busyTimeout });
    close = () => store.close();
    if (mode === 'append') {
      saveTo = (chat) => (tag) =>
        store.append({ chatId: chat, branch: 'main', messages: turn(tag) });
    } else {
      const timed = timedStore(store);
      spentInStore = timed.spent;
      saveTo = (chat) => {
        const engine = new ContextEngine({
          store: timed.store,
          chatId: chat,
          userId: 'bench-user',
          renderer,
        });
        opened.set(chat, [...(opened.get(chat) ?? []), () => engine.resolve()]);
        return (tag) => {
          engine.set(
            user(`question ${tag}`, { id: `${tag}-user` }),
            assistantText(`answer ${tag}, a few words long`, { id: `${tag}-reply` }),
          );
          return engine.save();
        };
      };
    }
  }
  // Warm up before the start line, on a chat of this writer's own (JIT, statement caches, the
  // engine opening its chat), so the figures are of steady-state saves in every way alike.
  const perChat = Math.ceil(warmupSaves / warmupChats);
  for (let chat = 0; chat < warmupChats; chat += 1) {
    const warmupChat = warmupChatId(writer, chat);
    const handles = [saveTo(warmupChat), saveTo(warmupChat)] as const;
    await open(warmupChat);
    for (let index = 0; index < perChat; index += 1)
      await handles[index % 2]?.(`${warmupChat}-${index}`);
  }
  const save = saveTo(chatId);
  await open(chatId);
  process.stdout.write('ready\n');
  waitUntil(Number(await readLine()));
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < turns; index += 1) {
    const started = performance.now();
    const storeBefore = spentInStore();
    try {
      await save(`w${writer}-${index}`);
      const total = performance.now() - started;
      latencies.push(total);
      inStore.push(mode === 'engine' ? spentInStore() - storeBefore : total);
    } catch (error) {
      failures.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  }
  const finishedAt = Date.now();
  const cpu = process.cpuUsage(cpuBefore);
  await close();
  const report: WriterReport = {
    latencies,
    inStore,
    failures,
    finishedAt,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** A writer process: `ready` resolves once it has warmed up, `report` when it has saved its turns. */
interface Writer {
  readonly ready: Promise<void>;
  readonly report: Promise<WriterReport>;
  start(startAt: number): void;
}

function spawnWriter(mode: Mode, path: string, writer: number, warmupSaves: number): Writer {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      script,
      '--worker',
      mode,
      path,
      String(writer),
      String(turnsPerProcess),
      String(warmupSaves),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const nextLine = childLines(child, `${mode} writer ${writer}`);
  const ready = nextLine().then(() => undefined);
  return {
    ready,
    report: ready.then(async () => JSON.parse(await nextLine()) as WriterReport),
    start: (startAt) => child.stdin.end(`${startAt}\n`),
  };
}

interface ConcurrencyRun {
  readonly wallMs: number;
  readonly latencies: number[];
  readonly inStore: number[];
  /** CPU milliseconds per saved turn, over all writers. */
  readonly cpuPerSave: number;
  readonly failed: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly firstFailure: string | undefined;
}

async function concurrencyRun(
  directory: string,
  mode: Mode,
  round: number,
  warmupSaves: number,
): Promise<ConcurrencyRun> {
  const path = join(directory, `concurrency-${mode}-${round}.db`);
  if (mode === 'floor') {
    const database = openFloorDatabase(path);
    createFloorChat(database, chatId);
    for (let writer = 0; writer < processes; writer += 1)
      for (let chat = 0; chat < warmupChats; chat += 1)
        createFloorChat(database, warmupChatId(writer, chat));
    database.close();
  } else {
    const setup = new SqliteContextStore(path);
    await setup.openChat({ chatId, userId: 'bench-user' });
    for (let writer = 0; writer < processes; writer += 1)
      for (let chat = 0; chat < warmupChats; chat += 1)
        await setup.openChat({ chatId: warmupChatId(writer, chat), userId: 'bench-user' });
    await setup.close();
  }
  // Every writer loads, opens its connection and warms up; then the WAL is checkpointed so that
  // no way inherits a longer one from its warm-up, and all start at the same moment.
  const writers = Array.from({ length: processes }, (_, writer) =>
    spawnWriter(mode, path, writer, warmupSaves),
  );
  await Promise.all(writers.map((writer) => writer.ready));
  const checkpoint = openFloorDatabase(path);
  checkpoint.pragma('wal_checkpoint(TRUNCATE)');
  checkpoint.close();
  const startAt = Date.now() + 20;
  for (const writer of writers) writer.start(startAt);
  const reports = await Promise.all(writers.map((writer) => writer.report));
  const wallMs = Math.max(...reports.map((report) => report.finishedAt)) - startAt;

  // The floor's tables have the store's schema: read them back through a store on its prefix.
  const reader = new SqliteContextStore({
    path,
    tablePrefix: mode === 'floor' ? 'floor_' : 'ctxgraph_',
  });
  const head = await reader.getHead({ chatId, branch: 'main' });
  const chain =
    head.headMessageId === null
      ? []
      : (await reader.getChain({ chatId, headMessageId: head.headMessageId })).nodes;
  const graph = await reader.getGraph(chatId);
  await reader.close();
  const onChain = new Set(chain.map((node) => node.id));
  let lost = 0;
  reports.forEach((report, writer) => {
    // A turn is lost when its save did not fail but the branch does not hold both messages.
    const saved = turnsPerProcess - report.failures.length;
    let found = 0;
    for (let index = 0; index < turnsPerProcess; index += 1) {
      if (onChain.has(`w${writer}-${index}-user`) && onChain.has(`w${writer}-${index}-reply`))
        found += 1;
    }
    lost += Math.max(0, saved - found);
  });
  // Nodes written twice (on the chain or off it): the graph should hold exactly the chain.
  const duplicates = chain.length - onChain.size + (graph.nodes.length - chain.length);
  return {
    wallMs,
    latencies: reports.flatMap((report) => report.latencies),
    cpuPerSave:
      reports.reduce((sum, report) => sum + report.cpuMs, 0) /
      Math.max(1, processes * turnsPerProcess),
    inStore: reports.flatMap((report) => report.inStore),
    failed: reports.reduce((sum, report) => sum + report.failures.length, 0),
    lost,
    duplicates,
    firstFailure: reports.flatMap((report) => report.failures)[0],
  };
}

async function measureConcurrency(
  directory: string,
  rounds: number,
  warmupSaves: number,
): Promise<void> {
  const runs = new Map<Mode, ConcurrencyRun[]>(modes.map((mode) => [mode, []]));
  for (let round = 0; round < rounds; round += 1) {
    // A different order each round, so a machine that slows down does not favour one mode.
    const order = modes.map((_, index) => modes[(index + round) % modes.length] as Mode);
    for (const mode of order)
      runs.get(mode)?.push(await concurrencyRun(directory, mode, round, warmupSaves));
  }
  const summary = (mode: Mode) => {
    const list = runs.get(mode) ?? [];
    return {
      wall: median(list.map((run) => run.wallMs)),
      p50: median(list.map((run) => percentile(run.latencies, 0.5))),
      p95: median(list.map((run) => percentile(run.latencies, 0.95))),
      cpu: median(list.map((run) => run.cpuPerSave)),
      p95InStore: median(list.map((run) => percentile(run.inStore, 0.95))),
      failed: list.reduce((sum, run) => sum + run.failed, 0),
      lost: list.reduce((sum, run) => sum + run.lost, 0),
      duplicates: list.reduce((sum, run) => sum + run.duplicates, 0),
      firstFailure: list.find((run) => run.firstFailure !== undefined)?.firstFailure,
    };
  };
  const floor = summary('floor');
  console.log(
    `\n${processes} processes x ${turnsPerProcess} turns on one chat after ${warmupSaves} warm-up saves each, ${rounds} round(s) per way (medians over rounds; counts summed)`,
  );
  printTable(
    modes.map((mode) => {
      const row = summary(mode);
      return {
        way:
          mode === 'engine'
            ? 'engine.save (append)'
            : mode === 'append'
              ? 'store.append'
              : 'bare floor',
        'lost turns': String(row.lost),
        'failed saves': String(row.failed),
        duplicates: String(row.duplicates),
        'wall ms': row.wall.toFixed(0),
        'p50 ms': row.p50.toFixed(2),
        'p95 ms': row.p95.toFixed(2),
        'p95 in store ms': row.p95InStore.toFixed(2),
        'CPU ms / save': row.cpu.toFixed(3),
        'wall / floor': (row.wall / floor.wall).toFixed(2),
        'p95 / floor': (row.p95 / floor.p95).toFixed(2),
        'CPU / floor': (row.cpu / floor.cpu).toFixed(2),
      };
    }),
  );
  for (const mode of modes) {
    const failure = summary(mode).firstFailure;
    if (failure !== undefined) console.log(`first failure (${mode}): ${failure}`);
  }
  console.log('targets: 0 lost, 0 failed, 0 duplicates; wall / floor <= 1.5; p95 / floor <= 2');
  console.log(
    'CPU ms / save: CPU time of the writer processes (all threads, GC and JIT included) over their measured turns, per turn; it does not depend on how busy the machine is.',
  );
}

// ---------------------------------------------------------------------------------------------
// 2. One turn per save, one process

async function measurePerSave(directory: string): Promise<void> {
  const history = 1_000;
  const runs = 500;
  const warmup = 50;
  const store = new SqliteContextStore(join(directory, 'per-save.db'));
  for (const chat of ['append-chat', 'commit-chat', 'engine-chat'])
    await seedChat(store, chat, 'bench-user', history);
  const floorDatabase = openFloorDatabase(join(directory, 'per-save-floor.db'));
  createFloorChat(floorDatabase, 'floor-chat');
  const floor = floorWriter(floorDatabase, 'floor-chat');
  for (let index = 0; index < history / 2; index += 1) floor(turn(`seed-${index}`));
  const engine = new ContextEngine({
    store,
    chatId: 'engine-chat',
    userId: 'bench-user',
    renderer,
  });
  await engine.resolve();
  let head = (await store.getHead({ chatId: 'commit-chat', branch: 'main' })).headMessageId;

  const times: Record<'append' | 'commit' | 'engine' | 'floor', number[]> = {
    append: [],
    commit: [],
    engine: [],
    floor: [],
  };
  // Interleaved run by run, so a busy machine slows all four alike and the ratios hold.
  for (let run = 0; run < warmup + runs; run += 1) {
    let started = performance.now();
    await store.append({ chatId: 'append-chat', branch: 'main', messages: turn(`a-${run}`) });
    const appendMs = performance.now() - started;
    started = performance.now();
    const committed = await store.commit({
      chatId: 'commit-chat',
      branch: 'main',
      expectedHeadId: head,
      messages: turn(`c-${run}`),
    });
    const commitMs = performance.now() - started;
    head = committed.headMessageId;
    engine.set(user(`question ${run}`), assistantText(`answer ${run}, a few words long`));
    started = performance.now();
    await engine.save();
    const engineMs = performance.now() - started;
    started = performance.now();
    floor(turn(`f-${run}`));
    const floorMs = performance.now() - started;
    if (run < warmup) continue;
    times.append.push(appendMs);
    times.commit.push(commitMs);
    times.engine.push(engineMs);
    times.floor.push(floorMs);
  }
  await store.close();
  floorDatabase.close();
  const floorMedian = median(times.floor);
  console.log(
    `\nOne turn per save on a ${history.toLocaleString('en-US')}-message chat, one process, median of ${runs} (milliseconds)`,
  );
  printTable(
    (['append', 'commit', 'engine', 'floor'] as const).map((way) => ({
      way:
        way === 'engine' ? 'engine.save (append)' : way === 'floor' ? 'bare floor' : `store.${way}`,
      'median ms': median(times[way]).toFixed(4),
      '/ floor': (median(times[way]) / floorMedian).toFixed(2),
    })),
  );
}

// ---------------------------------------------------------------------------------------------
// 3. One batch of 10,000 messages

function batch(tag: string, size: number): ReturnType<typeof turn> {
  const messages: ReturnType<typeof turn> = [];
  for (let index = 0; index < size / 2; index += 1) messages.push(...turn(`${tag}-${index}`));
  return messages;
}

/**
 * The store, with the time spent inside its `append` calls added up: the instance's `append` is
 * wrapped once (no proxy, so timing adds no work to any other call the engine makes).
 */
function timedStore(store: SqliteContextStore): { store: ContextStore; spent: () => number } {
  let spent = 0;
  const append = store.append.bind(store);
  Object.defineProperty(store, 'append', {
    value: async (input: Parameters<SqliteContextStore['append']>[0]) => {
      const started = performance.now();
      try {
        return await append(input);
      } finally {
        spent += performance.now() - started;
      }
    },
  });
  return { store, spent: () => spent };
}

async function measureBatch(directory: string): Promise<void> {
  const size = 10_000;
  const runs = 7;
  const times: Record<string, number[]> = {};
  const record = (key: string, value: number) => {
    const list = times[key] ?? [];
    list.push(value);
    times[key] = list;
  };
  for (let run = 0; run < runs; run += 1) {
    const floorDatabase = openFloorDatabase(join(directory, `batch-floor-${run}.db`));
    createFloorChat(floorDatabase, 'c');
    const floor = floorWriter(floorDatabase, 'c');
    const floorBatch = batch(`f${run}`, size);
    let started = performance.now();
    floor(floorBatch);
    record('floor', performance.now() - started);
    floorDatabase.close();

    const checked = batch(`p${run}`, size);
    started = performance.now();
    prepareAppend({ chatId: 'c', branch: 'main', messages: checked });
    record('prepareAppend', performance.now() - started);
    started = performance.now();
    for (const entry of checked) JSON.stringify(entry.message);
    record('stringify', performance.now() - started);

    const store = new SqliteContextStore(join(directory, `batch-store-${run}.db`));
    await store.openChat({ chatId: 'c', userId: 'u' });
    const appended = batch(`s${run}`, size);
    started = performance.now();
    await store.append({ chatId: 'c', branch: 'main', messages: appended });
    record('append', performance.now() - started);
    await store.close();

    const engineStore = new SqliteContextStore(join(directory, `batch-engine-${run}.db`));
    const timed = timedStore(engineStore);
    const engine = new ContextEngine({ store: timed.store, chatId: 'c', userId: 'u', renderer });
    await engine.resolve();
    for (let index = 0; index < size / 2; index += 1) {
      engine.set(
        user(`question e${run}-${index}`, { id: `e${run}-${index}-user` }),
        assistantText(`answer e${run}-${index}, a few words long`, {
          id: `e${run}-${index}-reply`,
        }),
      );
    }
    started = performance.now();
    await engine.save();
    record('engine', performance.now() - started);
    record('engine store call', timed.spent());
    await engineStore.close();
  }
  const m = (key: string) => median(times[key] ?? []);
  const floorMs = m('floor');
  console.log(
    `\nOne batch of ${size.toLocaleString('en-US')} messages, median of ${runs} (milliseconds)`,
  );
  printTable([
    { way: 'bare floor (stringify, insert, head)', ms: floorMs.toFixed(1), '/ floor': '1.00' },
    {
      way: 'store.append',
      ms: m('append').toFixed(1),
      '/ floor': (m('append') / floorMs).toFixed(2),
    },
    {
      way: 'engine.save (append)',
      ms: m('engine').toFixed(1),
      '/ floor': (m('engine') / floorMs).toFixed(2),
    },
  ]);
  console.log('Where the time goes:');
  printTable([
    {
      part: 'engine.save around the store call (pending lane, validation, chain update)',
      ms: (m('engine') - m('engine store call')).toFixed(1),
      package: '@ctxgraph/engine, codecs, ai',
    },
    {
      part: 'store.append: prepareAppend (input checks, JSON walk, stringify)',
      ms: m('prepareAppend').toFixed(1),
      package: '@ctxgraph/fragments-core',
    },
    {
      part: '  of which JSON.stringify alone',
      ms: m('stringify').toFixed(1),
      package: '(the floor pays it too)',
    },
    {
      part: 'store.append: the rest (size checks, SQL, records)',
      ms: (m('append') - m('prepareAppend')).toFixed(1),
      package: '@ctxgraph/store-sqlite',
    },
    {
      part: 'floor without stringify (SQL only)',
      ms: (floorMs - m('stringify')).toFixed(1),
      package: 'better-sqlite3',
    },
  ]);
}

/** The value after `--name`, or `fallback`. */
function flag(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

async function main(): Promise<void> {
  const rounds = Number(flag('rounds', '5'));
  const warmupSaves = Number(flag('warmup', '1000'));
  const only = flag('only', 'all');
  const wants = (section: string) => only === 'all' || only === section;
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-sqlite-concurrency-bench-'));
  try {
    console.log(`SqliteContextStore on ${directory} (WAL, synchronous=NORMAL)`);
    if (wants('concurrency')) await measureConcurrency(directory, rounds, warmupSaves);
    if (wants('per-save')) await measurePerSave(directory);
    if (wants('batch')) await measureBatch(directory);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const workerFlag = process.argv.indexOf('--worker');
if (workerFlag >= 0) {
  const [mode, path, writer, turns, warmupSaves] = process.argv.slice(workerFlag + 1);
  await writerProcess(
    mode as Mode,
    path as string,
    Number(writer),
    Number(turns),
    Number(warmupSaves),
  );
} else {
  await main();
}
