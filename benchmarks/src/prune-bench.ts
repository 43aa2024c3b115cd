// prune of a chat holding 100,000 unreachable nodes (a deleted fork) and 1,000 reachable ones, on
// the memory, SQLite and PostgreSQL stores: the dry run, the prune, and the peak memory of this
// process during the prune; against a bare-driver floor measured in the same run on a copy of the
// same chat: one DELETE of the same rows by sequence range (no reachability, no branch rules).
// Each store runs in a child process of its own, so its peak RSS is its own. Prints figures;
// asserts nothing.
//   cd benchmarks && node --import tsx src/prune-bench.ts [memory|sqlite|postgres]
// PostgreSQL: DATABASE_URL, or an embedded server; a random schema, dropped at the end.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { printTable } from './bench-helpers.ts';

const REACHABLE = 1_000;
const UNREACHABLE = 100_000;
const BATCH = 1_000;

function batch(prefix: string, from: number, count: number) {
  return Array.from({ length: count }, (_, index) => {
    const id = `${prefix}-${from + index}`;
    return {
      id,
      message: {
        id,
        role: (from + index) % 2 === 0 ? 'user' : 'assistant',
        parts: [
          {
            type: 'text',
            text: `message ${from + index} of ${prefix}, with a sentence or two of text to store`,
          },
        ],
      },
    };
  });
}

/** main: REACHABLE nodes; `dead`, forked at main's 10th node: UNREACHABLE nodes. */
async function seedChat(store: ContextStore, chatId: string): Promise<void> {
  await store.openChat({ chatId, userId: 'u' });
  let head: string | null = null;
  for (let from = 0; from < REACHABLE; from += BATCH) {
    head = (
      await store.commit({
        chatId,
        branch: 'main',
        expectedHeadId: head,
        messages: batch(`${chatId}-main`, from, BATCH),
      })
    ).headMessageId;
  }
  const forkAt = `${chatId}-main-9`;
  await store.createBranch({ chatId, name: 'dead', headMessageId: forkAt });
  head = forkAt;
  for (let from = 0; from < UNREACHABLE; from += BATCH) {
    head = (
      await store.commit({
        chatId,
        branch: 'dead',
        expectedHeadId: head,
        messages: batch(`${chatId}-dead`, from, BATCH),
      })
    ).headMessageId;
  }
}

const megabytes = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/** Times one store's prune; the floor is a DELETE by sequence range on a second chat. */
async function measure(
  label: string,
  store: ContextStore,
  floor: ((chatId: string) => Promise<void>) | undefined,
): Promise<Record<string, string>> {
  const prune = store.prune;
  if (prune === undefined) throw new Error(`${label} has no prune`);
  const started = performance.now();
  await seedChat(store, 'pruned');
  if (floor !== undefined) await seedChat(store, 'floor');
  const seedSeconds = (performance.now() - started) / 1000;
  let at = performance.now();
  const dry = await prune.call(store, { chatId: 'pruned', deleteBranches: ['dead'], dryRun: true });
  const dryMs = performance.now() - at;
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const peakBefore = process.resourceUsage().maxRSS * 1024;
  at = performance.now();
  const done = await prune.call(store, { chatId: 'pruned', deleteBranches: ['dead'] });
  const pruneMs = performance.now() - at;
  const peakAfter = process.resourceUsage().maxRSS * 1024;
  let floorMs = Number.NaN;
  if (floor !== undefined) {
    at = performance.now();
    await floor('floor');
    floorMs = performance.now() - at;
  }
  const left = (await store.getGraph('pruned')).nodes.length;
  if (done.nodes !== UNREACHABLE || dry.nodes !== UNREACHABLE || left !== REACHABLE)
    throw new Error(
      `${label}: expected ${UNREACHABLE} pruned and ${REACHABLE} left, got ${done.nodes} / ${dry.nodes} / ${left}`,
    );
  return {
    store: label,
    'seed s': seedSeconds.toFixed(1),
    'nodes pruned': done.nodes.toLocaleString('en-US'),
    'MB pruned': megabytes(done.bytes),
    'dry run ms': dryMs.toFixed(0),
    'prune ms': pruneMs.toFixed(0),
    'floor ms': Number.isNaN(floorMs) ? '-' : floorMs.toFixed(0),
    'prune / floor': Number.isNaN(floorMs) ? '-' : (pruneMs / floorMs).toFixed(2),
    'RSS before MB': megabytes(rssBefore),
    'peak RSS growth MB': megabytes(Math.max(0, peakAfter - Math.max(peakBefore, rssBefore))),
  };
}

async function memory(): Promise<Record<string, string>> {
  return measure('memory', new InMemoryContextStore(), undefined);
}

async function sqlite(): Promise<Record<string, string>> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-prune-bench-'));
  const path = join(directory, 'prune.db');
  const store = new SqliteContextStore(path);
  const database = new Database(path);
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  try {
    const deleteRange = database.transaction((chatId: string) => {
      database
        .prepare("DELETE FROM ctxgraph_branches WHERE chat_id = ? AND name = 'dead'")
        .run(chatId);
      database
        .prepare('DELETE FROM ctxgraph_messages WHERE chat_id = ? AND sequence > ?')
        .run(chatId, REACHABLE);
    });
    return await measure('SQLite', store, async (chatId) => {
      deleteRange.immediate(chatId);
    });
  } finally {
    database.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function postgresStore(): Promise<Record<string, string>> {
  const server = await startPostgresServer();
  const schema = `p_${randomBytes(6).toString('hex')}`;
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  try {
    return await measure('PostgreSQL', store, async (chatId) => {
      await admin.begin(async (sql) => {
        await sql.unsafe(
          `DELETE FROM "${schema}".ctxgraph_branches WHERE chat_id = $1 AND name = 'dead'`,
          [chatId],
        );
        await sql.unsafe(
          `DELETE FROM "${schema}".ctxgraph_messages WHERE chat_id = $1 AND sequence > $2`,
          [chatId, REACHABLE],
        );
      });
    });
  } finally {
    await store.close();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
    await server.stop();
  }
}

const which = process.argv[2];
const child = process.argv[3] === '--child';
if (child) {
  const run = which === 'memory' ? memory : which === 'sqlite' ? sqlite : postgresStore;
  console.log(JSON.stringify(await run()));
} else {
  const rows: Record<string, string>[] = [];
  const stores = which === undefined ? ['memory', 'sqlite', 'postgres'] : [which];
  for (const store of stores) {
    const result = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), store, '--child'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = result.stdout.trim().split('\n').at(-1);
    if (result.status !== 0 || line === undefined) {
      console.error(`${store}: failed (${String(result.status)})`);
      process.exitCode = 1;
      continue;
    }
    rows.push(JSON.parse(line) as Record<string, string>);
  }
  console.log(
    `\nprune({ deleteBranches: ['dead'] }) of a chat with ${REACHABLE.toLocaleString('en-US')} reachable and ${UNREACHABLE.toLocaleString('en-US')} unreachable nodes; floor: one DELETE of the same rows by sequence range (SQLite, PostgreSQL)`,
  );
  printTable(rows);
}
