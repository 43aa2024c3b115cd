// The Durable Object store inside workerd (through miniflare): the per-turn save and a cold read
// of a 1,000-message chat, each against a bare floor on the same `ctx.storage.sql` in the same
// run, and what a long chat weighs on the store's schema. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx --import ../tooling/ai-major/register.mjs src/durable-object-bench.ts
//   (or: npx -y pnpm@10.34.9 --filter @ctxgraph/benchmarks bench:durable-object)
// ROUNDS (31) sets the measured rounds, TURNS_PER_REQUEST (100) and COLD_PER_REQUEST (10) how
// many runs one request makes, WEIGHT_MESSAGES (10000) the size of the weighed chat.
//
// The clock. Inside workerd, `performance.now()` and `Date.now()` only move on I/O (a Spectre
// mitigation): a run of synchronous SQL and JavaScript reads as 0 ms. So the time is taken here,
// in Node, around each request: the worker routes it to the object, which runs one way (store or
// floor) `n` times in a row and answers. A request with no work (`/noop`) measures what the
// round trip costs; its median is taken off every request before dividing by `n`. The ways
// alternate request by request (the order turns every round), so drift falls on all alike; each
// row's `x floor` is the median of the per-round ratios, `x floor (medians)` the ratio of the
// medians.
//
// - Turns: on chats of 1,000 messages, `engine.save()` of a user message and a reply on a warm
//   engine (one resolve() first; the engine writes it with `store.append`), `store.commit` and
//   `store.append` of the same two messages, and the floor: the work the store's write must do,
//   by hand, and nothing else: one `transactionSync` that bumps the chat's revision and takes two
//   sequence numbers (read back from that update: no state of the chat kept in memory, since any
//   store over the storage may write), inserts the two rows, moves the head where it is still the
//   expected one, and returns the written nodes as records.
// - Cold read: a new `DurableObjectContextStore` over the same storage, a new engine and its first
//   resolve() of a 1,000-message chat; the store calls alone (no engine); and the floor, what
//   the store must return, by hand: the chat's owner and active head in one statement, the chain
//   in one recursive statement with every column a node record holds, each message and engine
//   record parsed into a record.
// COUNT_ONLY=1 prints, instead of figures, the statements each way runs once (a warm
// engine.save, a commit, a new store, a cold resolve): what the figures are made of.
// - Weight: a fresh object saves WEIGHT_MESSAGES messages turn by turn through the engine (the
//   scripted conversation: a user question of 20–80 words, a reply of 40–140 words, a tool call
//   with its output in every fifth reply) and reports `ctx.storage.sql.databaseSize` before and
//   after: the bytes per message node on disk, indexes and engine records included.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';
import { aiMajor, aliasAnchor, majorSpecifier } from '../../tooling/ai-major/major.mjs';
import { median, printTable } from './bench-helpers.ts';

const HISTORY = 1_000;
const ROUNDS = Number(process.env.ROUNDS ?? 31);
const WARMUP_ROUNDS = 3;
const TURNS_PER_REQUEST = Number(process.env.TURNS_PER_REQUEST ?? 100);
const COLD_PER_REQUEST = Number(process.env.COLD_PER_REQUEST ?? 10);
const WEIGHT_MESSAGES = Number(process.env.WEIGHT_MESSAGES ?? 10_000);

/** Imports of `ai` go to the AI SDK major the workspace runs (tooling/ai-major). */
const aiMajorPlugin: Plugin = {
  name: 'ctxgraph-ai-major',
  setup(builder) {
    const major = aiMajor();
    builder.onResolve({ filter: /^(ai|@ai-sdk\/(openai|react))(\/|$)/ }, async (args) => {
      const alias = majorSpecifier(args.path, major);
      if (alias === undefined) return undefined;
      const resolved = await builder.resolve(alias, {
        kind: args.kind,
        resolveDir: dirname(aliasAnchor),
      });
      return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path };
    });
  },
};

/** The benchmark's Worker, bundled as Wrangler would (esbuild, workerd's conditions). */
async function bundleWorker(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./durable-object-bench-worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    plugins: [aiMajorPlugin],
    write: false,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild wrote no bundle for the benchmark worker');
  return output.text;
}

/**
 * The workerd process miniflare started (a child of this process), found in /proc; its CPU
 * time is the sum of its threads' time on a CPU (`schedstat`, nanoseconds).
 */
function findWorkerd(): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'workerd' && ppid === process.pid) return Number(entry);
    } catch {
      // The process ended while the list was read.
    }
  }
  return undefined;
}

/** Milliseconds the process `pid` has spent on a CPU, all its threads. */
function cpuMs(pid: number): number {
  let nanoseconds = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(
        readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0],
      );
    } catch {
      // The thread ended while the list was read.
    }
  }
  return nanoseconds / 1e6;
}

/** How requests are timed: workerd's CPU time (`cpu`, the default on Linux) or the wall clock. */
type Clock = { readonly kind: 'cpu'; readonly pid: number } | { readonly kind: 'wall' };

/** A request to the benchmark worker, timed from Node: milliseconds until its body is read. */
async function timedRequest(miniflare: Miniflare, clock: Clock, path: string): Promise<number> {
  const read = () => (clock.kind === 'cpu' ? cpuMs(clock.pid) : performance.now());
  const started = read();
  const response = await miniflare.dispatchFetch(`http://bench.local${path}`);
  const body = await response.text();
  const ms = read() - started;
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${body}`);
  return ms;
}

/** Ratio columns: per-run medians, the median of per-round ratios, the ratio of medians. */
function ratios(store: readonly number[], floor: readonly number[]): Record<string, string> {
  return {
    'store ms': median(store).toFixed(3),
    'floor ms': median(floor).toFixed(3),
    'x floor': median(store.map((ms, k) => ms / (floor[k] ?? Number.NaN))).toFixed(2),
    'x floor (medians)': (median(store) / median(floor)).toFixed(2),
  };
}

/**
 * Runs `ways` (request paths, each making `n` runs) round by round, the order turned each round,
 * and returns each way's per-run milliseconds once the round trip (a `/noop`) is taken off.
 */
async function measure<Way extends string>(
  miniflare: Miniflare,
  clock: Clock,
  ways: Record<Way, string>,
  n: number,
): Promise<{ perRun: Record<Way, number[]>; roundTripMs: number }> {
  const names = Object.keys(ways) as Way[];
  const raw = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    Way,
    number[]
  >;
  const noop: number[] = [];
  for (let round = -WARMUP_ROUNDS; round < ROUNDS; round += 1) {
    const order = names.map(
      (_, position) => names[(position + Math.max(round, 0)) % names.length] as Way,
    );
    noop.push(await timedRequest(miniflare, clock, '/noop'));
    for (const name of order) {
      const ms = await timedRequest(miniflare, clock, `${ways[name]}?n=${n}`);
      if (round >= 0) raw[name].push(ms);
    }
  }
  const roundTripMs = median(noop.slice(WARMUP_ROUNDS));
  const perRun = Object.fromEntries(
    names.map((name) => [name, raw[name].map((ms) => Math.max(ms - roundTripMs, 0) / n)]),
  ) as Record<Way, number[]>;
  return { perRun, roundTripMs };
}

async function main(): Promise<void> {
  const miniflare = new Miniflare({
    modules: [{ type: 'ESModule', path: 'worker.js', contents: await bundleWorker() }],
    compatibilityDate: '2026-04-01',
    durableObjects: { BENCH: { className: 'BenchObject', useSQLite: true } },
  });
  try {
    await miniflare.ready;
    let clock: Clock = { kind: 'wall' };
    const pid = process.env.CLOCK === 'wall' ? undefined : findWorkerd();
    if (pid !== undefined) clock = { kind: 'cpu', pid };
    console.log(
      clock.kind === 'cpu'
        ? `Clock: workerd's CPU time (process ${pid}, its threads' schedstat).\n`
        : 'Clock: the wall clock in Node.\n',
    );
    await timedRequest(miniflare, clock, `/setup?history=${HISTORY}`);

    if (process.env.COUNT_ONLY !== undefined) {
      const counted = await miniflare.dispatchFetch('http://bench.local/count');
      console.log(JSON.stringify(await counted.json(), null, 1));
      return;
    }
    const turns = await measure(
      miniflare,
      clock,
      {
        save: '/turn/save',
        commit: '/turn/commit',
        append: '/turn/append',
        floor: '/turn/floor',
      },
      TURNS_PER_REQUEST,
    );
    console.log(
      `Turns saved one at a time on chats of ${HISTORY.toLocaleString('en')} messages, inside workerd: ${TURNS_PER_REQUEST} turns a request, ${ROUNDS} requests each, ms per turn (round trip of ${turns.roundTripMs.toFixed(2)} ms taken off). Target: x floor <= 1.5.`,
    );
    printTable([
      { save: 'engine.save (1 turn)', ...ratios(turns.perRun.save, turns.perRun.floor) },
      { save: 'store.commit (1 turn)', ...ratios(turns.perRun.commit, turns.perRun.floor) },
      { save: 'store.append (1 turn)', ...ratios(turns.perRun.append, turns.perRun.floor) },
    ]);

    const cold = await measure(
      miniflare,
      clock,
      {
        store: '/cold/store',
        calls: '/cold/calls',
        construct: '/cold/construct',
        floor: '/cold/floor',
      },
      COLD_PER_REQUEST,
    );
    console.log(
      `\nA new store object + engine + first resolve() of a ${HISTORY.toLocaleString('en')}-message chat, inside workerd: ${COLD_PER_REQUEST} reads a request, ${ROUNDS} requests each, ms per read (round trip of ${cold.roundTripMs.toFixed(2)} ms taken off). Target: x floor <= 1.3.`,
    );
    printTable([
      { read: 'new store + engine + resolve()', ...ratios(cold.perRun.store, cold.perRun.floor) },
      { read: 'store calls only (no engine)', ...ratios(cold.perRun.calls, cold.perRun.floor) },
      { read: 'new store only', ...ratios(cold.perRun.construct, cold.perRun.floor) },
    ]);

    const response = await miniflare.dispatchFetch(
      `http://bench.local/weight?object=weight&messages=${WEIGHT_MESSAGES}`,
    );
    const weight = (await response.json()) as Record<string, number>;
    const nodes = weight.nodes ?? 0;
    const grown = (weight.after ?? 0) - (weight.before ?? 0);
    const perNode = (bytes: number | undefined) => ((bytes ?? 0) / nodes).toFixed(0);
    console.log(
      `\nA ${nodes.toLocaleString('en')}-message chat saved turn by turn through the engine (scripted conversation), on the store's schema:`,
    );
    printTable([
      {
        'database bytes': (weight.after ?? 0).toLocaleString('en'),
        'grown by': grown.toLocaleString('en'),
        'bytes / node (disk)': (grown / nodes).toFixed(0),
        'message JSON / node': perNode(weight.messageBytes),
        'user message JSON': ((weight.userBytes ?? 0) / (weight.userNodes ?? 1)).toFixed(0),
        'reply JSON': (
          ((weight.messageBytes ?? 0) - (weight.userBytes ?? 0)) /
          (nodes - (weight.userNodes ?? 0))
        ).toFixed(0),
        'engine record / node': perNode(weight.recordBytes),
      },
    ]);
  } finally {
    await miniflare.dispose();
  }
}

await main();
