// Compaction: a cold resolve of a long chat compacted to its last turns against a short chat,
// on SQLite and PostgreSQL. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/compaction-bench.ts [history] [runs] [sqlite|postgres]
// PostgreSQL uses DATABASE_URL when it is set; otherwise it starts an embedded server under the
// OS temp directory (tooling/postgres-server.ts) and removes it afterwards. Everything lives in
// a temporary directory and a random schema, dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextEngine } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { printTable, seedChat, timeAsync } from './bench-helpers.ts';

const history = Number(process.argv[2] ?? 100_000);
const runs = Number(process.argv[3] ?? 15);
const only = process.argv[4];
const keptTurns = 50;
const shortChat = 100;
const renderer = new XmlRenderer();
const userId = 'bench-user';

/** The stores under test, opened cold (a new object, a new connection) for every run. */
interface Backend {
  readonly name: string;
  open(): ContextStore;
  /** The floor: a bare-driver read of a chat's rows, oldest first, JSON parsed, on a new connection. */
  floor(chatId: string): Promise<number>;
  close(): Promise<void>;
}

/** A cold resolve: a new store object and engine, one resolve(), the number of messages. */
async function coldResolve(backend: Backend, chatId: string): Promise<number> {
  const store = backend.open();
  try {
    const engine = new ContextEngine({ store, chatId, userId, renderer });
    engine.set(role('You are a benchmark.'), hint('Be quick.'));
    return (await engine.resolve()).messages.length;
  } finally {
    await store.close();
  }
}

async function measure(backend: Backend): Promise<Record<string, string>[]> {
  const tag = randomBytes(3).toString('hex');
  const compacted = `compacted-${tag}`;
  const uncompacted = `long-${tag}`;
  const short = `short-${tag}`;
  const seeding = backend.open();
  let started = performance.now();
  await seedChat(seeding, compacted, userId, history);
  await seedChat(seeding, uncompacted, userId, history);
  await seedChat(seeding, short, userId, shortChat);
  const seedMs = performance.now() - started;
  started = performance.now();
  const engine = new ContextEngine({ store: seeding, chatId: compacted, userId, renderer });
  const result = await engine.compact({
    summarize: (messages) => `A summary of ${messages.length} messages.`,
    keep: keptTurns,
  });
  const compactMs = performance.now() - started;
  await seeding.close();
  console.log(
    `${backend.name}: seeded 2 x ${history.toLocaleString('en-US')} + ${shortChat} messages in ${(seedMs / 1000).toFixed(1)} s; compact() of ${result?.compaction.coveredMessages.toLocaleString('en-US')} messages (keep ${keptTurns} turns) in ${(compactMs / 1000).toFixed(1)} s, ${result?.compaction.tokens.saved.toLocaleString('en-US')} tokens saved`,
  );

  const expect = async (chatId: string, length: number) => {
    const got = await coldResolve(backend, chatId);
    if (got !== length) throw new Error(`${chatId}: resolved ${got} messages, expected ${length}`);
  };
  // Warm-up, and a check that each chat resolves to what it should.
  await expect(compacted, 1 + keptTurns * 2);
  await expect(short, shortChat);
  await expect(uncompacted, history);

  // Interleaved, so drift on a shared machine hits every figure alike.
  const times = { compacted: [] as number[], short: [] as number[], floor: [] as number[] };
  for (let run = 0; run < runs; run += 1) {
    times.floor.push(await timeAsync(1, () => backend.floor(short)));
    times.short.push(await timeAsync(1, () => coldResolve(backend, short)));
    times.compacted.push(await timeAsync(1, () => coldResolve(backend, compacted)));
  }
  const longRuns = Math.max(1, Math.min(3, runs));
  const uncompactedMs = await timeAsync(longRuns, () => coldResolve(backend, uncompacted));
  const middle = (values: number[]) =>
    values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const floorMs = middle(times.floor);
  const shortMs = middle(times.short);
  const compactedMs = middle(times.compacted);
  const row = (what: string, ms: number, messages: number) => ({
    store: backend.name,
    'cold resolve of': what,
    messages: messages.toLocaleString('en-US'),
    'median ms': ms.toFixed(2),
    '/ floor': (ms / floorMs).toFixed(2),
    '/ 100-message chat': (ms / shortMs).toFixed(2),
  });
  return [
    row(
      `${history.toLocaleString('en-US')} msgs, compacted to ${keptTurns} turns`,
      compactedMs,
      1 + keptTurns * 2,
    ),
    row(`${shortChat} msgs, no compaction`, shortMs, shortChat),
    row(
      `${history.toLocaleString('en-US')} msgs, no compaction (${longRuns} runs)`,
      uncompactedMs,
      history,
    ),
    row('floor: bare driver, 100-message chat rows', floorMs, shortChat),
  ];
}

async function sqliteBackend(directory: string): Promise<Backend> {
  const path = join(directory, 'compaction.db');
  return {
    name: 'SQLite',
    open: () => new SqliteContextStore(path),
    floor: async (chatId) => {
      const database = new Database(path, { readonly: true });
      try {
        const rows = database
          .prepare('SELECT payload FROM ctxgraph_messages WHERE chat_id = ? ORDER BY sequence')
          .all(chatId) as Array<{ payload: string }>;
        return rows.map((entry) => JSON.parse(entry.payload)).length;
      } finally {
        database.close();
      }
    },
    close: async () => {},
  };
}

async function postgresBackend(): Promise<Backend> {
  const server = await startPostgresServer();
  const schema = `compaction_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  return {
    name: 'PostgreSQL',
    open: () => new PostgresContextStore({ connectionString: server.url, schema }),
    floor: async (chatId) => {
      const sql = postgres(server.url, { max: 1, onnotice: () => {} });
      try {
        const rows = await sql<
          Array<{ message: unknown }>
        >`SELECT message FROM ${sql(schema)}.ctxgraph_messages WHERE chat_id = ${chatId} ORDER BY sequence`;
        return rows.length;
      } finally {
        await sql.end();
      }
    },
    close: async () => {
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      await server.stop();
    },
  };
}

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-compaction-bench-'));
const rows: Record<string, string>[] = [];
try {
  for (const make of [
    only === 'postgres' ? undefined : () => sqliteBackend(directory),
    only === 'sqlite' ? undefined : postgresBackend,
  ]) {
    if (make === undefined) continue;
    const backend = await make();
    try {
      rows.push(...(await measure(backend)));
    } finally {
      await backend.close();
    }
  }
  console.log(
    `\nCold resolve (a new store object and engine per run; median of ${runs} interleaved runs):`,
  );
  printTable(rows);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
