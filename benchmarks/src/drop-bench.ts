// prune({ compacted: 'drop' }) on chats with a branch per turn, at 40, 80 and 160 turns: the nodes
// the pass reads from the store (getChain, getGraph, getMessage), its store calls, and its time
// (the dry run, median of several runs; the drop itself, once), on the memory, SQLite and
// PostgreSQL stores; with one turn per branch (one commit), then two (a commit per branch). The
// nodes read should grow with the chat (2x the turns, about 2x the nodes), not with branches
// times chain length. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/drop-bench.ts [runs] [memory|sqlite|postgres]
// PostgreSQL: DATABASE_URL, or an embedded server; a random schema, dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { median, printTable } from './bench-helpers.ts';

const runs = Number(process.argv[2] ?? 5);
const only = process.argv[3];
const TURN_COUNTS = [40, 80, 160] as const;
/** Main compacts every this many turns (keeping the last two), as auto-compaction would. */
const COMPACT_EVERY = 10;
const renderer = new XmlRenderer();
const userId = 'bench-user';

/** What a pass read: message nodes returned, and store calls by method. */
interface Reads {
  nodes: number;
  calls: number;
}

/** The store with every call counted, and the nodes its reads return. */
function counting(store: ContextStore, reads: Reads): ContextStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        reads.calls += 1;
        const result: unknown = await (value as (...parameters: unknown[]) => unknown).apply(
          target,
          args,
        );
        if (property === 'getChain' || property === 'getGraph')
          reads.nodes += (result as { nodes: readonly unknown[] }).nodes.length;
        if (property === 'getMessage' && result !== null) reads.nodes += 1;
        return result;
      };
    },
  });
}

/**
 * `turns` turns on main (compacted every ten turns, keeping two), each followed by a branch forked
 * at main's head with `ownTurns` turns of its own, compacted at once (keeping the last): every
 * branch shares main's history up to its fork and reads it through a summary, so the drop has
 * work. With one own turn, everything dropped is on main (one commit); with two, each branch also
 * has a turn of its own to drop (a commit per branch).
 */
async function seed(
  store: ContextStore,
  chatId: string,
  turns: number,
  ownTurns: number,
): Promise<void> {
  const main = new ContextEngine({ store, chatId, userId, renderer });
  for (let turn = 1; turn <= turns; turn += 1) {
    main.set(
      user(`Question ${turn}: what about the next leg of the trip?`, { id: `u${turn}` }),
      assistantText(`Answer ${turn}: a paragraph of plans, times and places to see.`, {
        id: `a${turn}`,
      }),
    );
    await main.save();
    if (turn % COMPACT_EVERY === 0)
      await main.compact({ summarize: () => `Summary up to turn ${turn}.`, keep: 2 });
    const branch = `edit-${turn}`;
    await store.createBranch({ chatId, name: branch, headMessageId: main.headMessageId ?? null });
    const side = new ContextEngine({ store, chatId, userId, renderer });
    await side.switchBranch(branch);
    for (let own = 1; own <= ownTurns; own += 1) {
      side.set(
        user(`Another take on ${turn}, ${own}?`, { id: `e${turn}-${own}` }),
        assistantText(`Another answer ${turn}, ${own}.`, { id: `r${turn}-${own}` }),
      );
      await side.save();
    }
    await side.compact({ summarize: () => `Summary of branch ${turn}.`, keep: 1 });
  }
}

async function dropOnce(
  store: ContextStore,
  chatId: string,
  dryRun: boolean,
): Promise<{ ms: number; reads: Reads; dropped: number }> {
  const reads: Reads = { nodes: 0, calls: 0 };
  const engine = new ContextEngine({ store: counting(store, reads), chatId, userId, renderer });
  const started = performance.now();
  const result = await engine.prune({ compacted: 'drop', dryRun });
  return { ms: performance.now() - started, reads, dropped: result.compacted.nodes };
}

async function measure(name: string, store: ContextStore): Promise<Record<string, string>[]> {
  const rows: Record<string, string>[] = [];
  const tag = randomBytes(3).toString('hex');
  for (const [ownTurns, turns] of [1, 2].flatMap((own) =>
    TURN_COUNTS.map((count) => [own, count] as const),
  )) {
    const chatId = `drop-${tag}-${ownTurns}-${turns}`;
    await seed(store, chatId, turns, ownTurns);
    const graph = await store.getGraph(chatId);
    const dry = await dropOnce(store, chatId, true);
    const times: number[] = [];
    for (let run = 0; run < runs; run += 1) times.push((await dropOnce(store, chatId, true)).ms);
    const done = await dropOnce(store, chatId, false);
    rows.push({
      store: name,
      'turns per branch': String(ownTurns),
      turns: String(turns),
      'nodes in chat': String(graph.nodes.length),
      branches: String(graph.branches.length),
      'nodes read (dry run)': String(dry.reads.nodes),
      'store calls (dry run)': String(dry.reads.calls),
      'dry run ms (median)': median(times).toFixed(2),
      'nodes read (drop)': String(done.reads.nodes),
      'store calls (drop)': String(done.reads.calls),
      'drop ms': done.ms.toFixed(2),
      dropped: String(done.dropped),
    });
  }
  return rows;
}

const rows: Record<string, string>[] = [];
const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-drop-bench-'));
try {
  if (only === undefined || only === 'memory')
    rows.push(...(await measure('memory', new InMemoryContextStore())));
  if (only === undefined || only === 'sqlite') {
    const store = new SqliteContextStore(join(directory, 'drop.db'));
    try {
      rows.push(...(await measure('SQLite', store)));
    } finally {
      await store.close();
    }
  }
  if (only === undefined || only === 'postgres') {
    const server = await startPostgresServer();
    const schema = `drop_bench_${randomBytes(4).toString('hex')}`;
    const store = new PostgresContextStore({ connectionString: server.url, schema });
    const admin = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      rows.push(...(await measure('PostgreSQL', store)));
    } finally {
      await store.close();
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      await server.stop();
    }
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
}
printTable(rows);
