// What durable turns cost the reference app, measured through its HTTP routes in this process
// (real ports, real SQLite files, a real PostgreSQL schema), with the app's mock model. Prints
// figures (medians, and p95 where the contract says so); asserts nothing.
//
//   pnpm --filter @ctxgraph/chat-app bench:durable
//
// 1. A turn's server-side cost with durable streaming against the same turn without it (the
//    floor: `live: false`), SQLite, 40 text chunks a reply, all at once and TURN_PACES apart (as a
//    model streams them; the chunks are appended in batches, one per `flushMs`): ctxgraph's own
//    time (begin and the reply's save, wall time; the chunk appends, the CPU time of their calls,
//    which on SQLite do all their work before they return: their wall time would count whatever
//    else the loaded event loop ran meanwhile) and the CPU time of this process per turn. The
//    two modes alternate turn by turn.
// 2. On SQLite and on PostgreSQL, a writer server and a second server with a store handle of its
//    own over the same data (what a second process has): a resume's first byte; stop to the last
//    reader's end (the writer's POST and a resume on the second server); an event's latency from a
//    change written through the writer's store to its arrival on the second server's events
//    stream.
// 3. CPU of 100 open event streams on one idle server, over a fixed window, against the same
//    window without them (the floor).
//
// Environment: TURNS (default 60), TURN_PACES (milliseconds between chunks, default `0,10`),
// SECTIONS (which of the three to run, default `1,2,3`), ROUNDS (15), CHANGES (40), WINDOW_MS
// (10000), DATABASE_URL (else a throwaway embedded PostgreSQL).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import postgres from 'postgres';
import { startPostgresServer } from '../../../tooling/postgres-server.ts';
import {
  deltaCount,
  postTurn,
  readEventStream,
  userMessage,
} from '../src/__fixtures__/event-stream-reader';
import { createMockModel } from '../src/server/mock-model';
import { type RunningChatServer, startChatServer } from '../src/server/start-server';

const turns = Number(process.env.TURNS ?? 60);
const turnPaces = (process.env.TURN_PACES ?? '0,10').split(',').map(Number);
const rounds = Number(process.env.ROUNDS ?? 15);
const changes = Number(process.env.CHANGES ?? 40);
const windowMs = Number(process.env.WINDOW_MS ?? 10_000);
const sections = new Set((process.env.SECTIONS ?? '1,2,3').split(','));
const warmup = 5;
const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-durable-bench-'));

const sorted = (values: readonly number[]): number[] =>
  [...values].sort((left, right) => left - right);
const median = (values: readonly number[]): number =>
  sorted(values)[Math.floor(values.length / 2)] ?? Number.NaN;
const percentile = (values: readonly number[], share: number): number =>
  sorted(values)[Math.min(values.length - 1, Math.ceil(values.length * share) - 1)] ?? Number.NaN;
const ms = (value: number): string => `${value.toFixed(2)} ms`;
const cpuMs = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1000;
const waitUntil = async (predicate: () => boolean): Promise<void> => {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 1));
};
const words = (count: number, tag: string): string =>
  Array.from({ length: count }, (_, index) => `${tag}${index}`).join(' ');

// ---------------------------------------------------------------------------------------------
// 1. A turn with and without durable streaming (SQLite).

interface TurnRun {
  cpu: number[];
  begin: number[];
  save: number[];
  /** The CPU time of the live record's writes during the reply (its chunk batches), summed per turn. */
  appends: number[];
}

/**
 * `store`, adding the CPU time and count of its live-reply chunk appends to `spent`: the time of
 * the call itself (the SQLite store checks, encodes and writes before it returns).
 */
function timingAppends(
  store: SqliteContextStore,
  spent: { ms: number; calls: number },
): ContextStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      if (key !== 'appendReplyChunks') return value.bind(target);
      return (...args: unknown[]) => {
        const started = process.cpuUsage();
        try {
          return (value as (...input: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          spent.ms += cpuMs(process.cpuUsage(started));
          spent.calls += 1;
        }
      };
    },
  });
}

async function turnCost(turnPaceMs: number): Promise<void> {
  const modes = ['durable', 'floor'] as const;
  const runs: Record<(typeof modes)[number], TurnRun> = {
    durable: { cpu: [], begin: [], save: [], appends: [] },
    floor: { cpu: [], begin: [], save: [], appends: [] },
  };
  const spent = { durable: { ms: 0, calls: 0 }, floor: { ms: 0, calls: 0 } };
  const batches: number[] = [];
  const servers: Record<string, { server: RunningChatServer; saved?: () => void }> = {};
  for (const mode of modes) {
    const entry: { server?: RunningChatServer; saved?: () => void } = {};
    const store = new SqliteContextStore(join(directory, `turn-${mode}-${turnPaceMs}.db`));
    entry.server = await startChatServer({
      store: timingAppends(store, spent[mode]),
      model: createMockModel({ chunkDelayMs: turnPaceMs }),
      port: 0,
      ...(mode === 'floor' ? { live: false as const } : {}),
      onTiming: (timing) => {
        if (timing.phase === 'begin') runs[mode].begin.push(timing.ms);
        else {
          runs[mode].save.push(timing.ms);
          entry.saved?.();
        }
      },
    });
    servers[mode] = entry as { server: RunningChatServer; saved?: () => void };
  }
  // "You said: " and 38 words: 40 text chunks a reply.
  const question = words(38, 'w');
  const histories: Record<string, unknown[]> = { durable: [], floor: [] };
  for (let index = 0; index < turns + warmup; index += 1) {
    const order = index % 2 === 0 ? modes : ([...modes].reverse() as (typeof modes)[number][]);
    for (const mode of order) {
      const entry = servers[mode] as { server: RunningChatServer; saved?: () => void };
      const history = histories[mode] as unknown[];
      history.push(userMessage(`u${index}`, question));
      const saved = new Promise<void>((resolve) => {
        entry.saved = resolve;
      });
      spent[mode].ms = 0;
      spent[mode].calls = 0;
      const before = process.cpuUsage();
      const reply = await postTurn(entry.server.url, { id: `bench-${mode}`, messages: history });
      await reply.finished;
      await saved;
      const cpu = cpuMs(process.cpuUsage(before));
      if (index >= warmup) {
        runs[mode].cpu.push(cpu);
        runs[mode].appends.push(spent[mode].ms);
        if (mode === 'durable') batches.push(spent[mode].calls);
      }
      const stored = (await (
        await fetch(`${entry.server.url}/api/chat/bench-${mode}/messages`)
      ).json()) as { messages: unknown[] };
      history.splice(0, history.length, ...stored.messages);
    }
  }
  for (const entry of Object.values(servers)) {
    await entry.server.close();
    await entry.server.store.close();
  }
  const trim = (values: number[]) => values.slice(warmup);
  // ctxgraph's own time per turn: begin, the reply's save, and the live record's appends.
  const own = (run: TurnRun) =>
    trim(run.begin).map(
      (begin, index) => begin + (trim(run.save)[index] ?? 0) + (run.appends[index] ?? 0),
    );
  const ownDurable = median(own(runs.durable));
  const ownFloor = median(own(runs.floor));
  const durable = median(runs.durable.cpu);
  const floor = median(runs.floor.cpu);
  console.log(
    `\n1. A turn, 40 text chunks ${turnPaceMs} ms apart, SQLite, ${turns} turns a mode (after ${warmup} warm-up), alternating`,
  );
  console.log(
    `  ctxgraph server-side per turn (begin + appends' CPU + save, median): durable ${ms(ownDurable)}, without ${ms(ownFloor)}: +${ms(ownDurable - ownFloor)} (${(ownDurable / ownFloor).toFixed(2)}x the floor)`,
  );
  console.log(
    `  chunk appends per turn (median): ${median(batches)} batches, ${ms(median(runs.durable.appends))} CPU`,
  );
  console.log(
    `  CPU of the whole process per turn (median; HTTP, AI SDK and client included): durable ${ms(durable)}, without ${ms(floor)}: +${ms(durable - floor)} (${(durable / floor).toFixed(2)}x the floor)`,
  );
  console.log(
    `  begin (median): durable ${ms(median(trim(runs.durable.begin)))}, without ${ms(median(trim(runs.floor.begin)))}`,
  );
  console.log(
    `  save the reply (median): durable ${ms(median(trim(runs.durable.save)))}, without ${ms(median(trim(runs.floor.save)))}`,
  );
}

// ---------------------------------------------------------------------------------------------
// 2. Resume, stop and events across two servers over the same data.

interface Pair {
  readonly kind: string;
  readonly writer: RunningChatServer;
  readonly second: RunningChatServer;
  readonly writerStore: ContextStore;
  close(): Promise<void>;
}

async function openPair(kind: 'sqlite' | 'postgres'): Promise<Pair> {
  let stores: [ContextStore, ContextStore];
  let drop = async (): Promise<void> => {};
  if (kind === 'sqlite') {
    const path = join(directory, 'pair.db');
    stores = [new SqliteContextStore(path), new SqliteContextStore(path)];
  } else {
    const server = await startPostgresServer();
    const schema = `chat_bench_${randomBytes(6).toString('hex')}`;
    const open = () => new PostgresContextStore({ connectionString: server.url, schema });
    const first = open();
    await first.migrate();
    stores = [first, open()];
    drop = async () => {
      const admin = postgres(server.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      await server.stop();
    };
  }
  const model = createMockModel({ chunkDelayMs: 20 });
  const writer = await startChatServer({ store: stores[0], model, port: 0 });
  const second = await startChatServer({ store: stores[1], model, port: 0 });
  return {
    kind,
    writer,
    second,
    writerStore: stores[0],
    async close() {
      await writer.close();
      await second.close();
      for (const store of stores) await store.close();
      await drop();
    },
  };
}

/** A turn on the writer whose reply streams for a long while, once its first words are out. */
async function longTurn(pair: Pair, chatId: string) {
  const reply = await postTurn(pair.writer.url, {
    id: chatId,
    messages: [userMessage('q', words(2_000, 'x'))],
  });
  await waitUntil(() => deltaCount(reply.events) >= 3);
  return reply;
}

async function stopChat(url: string, chatId: string): Promise<void> {
  await (await fetch(`${url}/api/chat/${chatId}/stop`, { method: 'POST' })).body?.cancel();
}

async function resumeFirstByte(pair: Pair): Promise<number[]> {
  const chatId = `resume-${pair.kind}`;
  const reply = await longTurn(pair, chatId);
  const firstBytes: number[] = [];
  for (let index = 0; index < rounds * 2; index += 1) {
    const started = performance.now();
    const response = await fetch(`${pair.second.url}/api/chat/${chatId}/stream`);
    const reader = response.body?.getReader();
    await reader?.read();
    firstBytes.push(performance.now() - started);
    await reader?.cancel();
  }
  await stopChat(pair.second.url, chatId);
  await reply.finished;
  return firstBytes;
}

async function stopToLastEnd(pair: Pair): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < rounds; index += 1) {
    const chatId = `stop-${pair.kind}-${index}`;
    const reply = await longTurn(pair, chatId);
    const resumed = readEventStream(await fetch(`${pair.second.url}/api/chat/${chatId}/stream`));
    await waitUntil(() => deltaCount(resumed.events) >= 3);
    let lastEnd = 0;
    const ended = (reader: { finished: Promise<unknown> }) =>
      reader.finished.then(() => {
        lastEnd = Math.max(lastEnd, performance.now());
      });
    const started = performance.now();
    await Promise.all([stopChat(pair.second.url, chatId), ended(reply), ended(resumed)]);
    durations.push(lastEnd - started);
  }
  return durations;
}

async function eventLatency(pair: Pair): Promise<number[]> {
  const chatId = `events-${pair.kind}`;
  const opening = await postTurn(pair.writer.url, {
    id: chatId,
    messages: [userMessage('q', 'hi')],
  });
  await opening.finished;
  const events = readEventStream<{ revision: number; live: string | null }>(
    await fetch(`${pair.second.url}/api/chat/${chatId}/events`),
  );
  await waitUntil(() => events.events.length > 0);
  const live = pair.writerStore;
  if (!live.startReply || !live.endReply) throw new Error('The store has no live replies.');
  const latencies: number[] = [];
  for (let index = 0; index < changes; index += 1) {
    const replyId = `bench-${index}`;
    const owner = 'bench-writer';
    await live.startReply({
      chatId,
      replyId,
      owner,
      branch: null,
      afterNodeId: null,
      leaseMs: 60_000,
    });
    let changed = performance.now();
    await waitUntil(() => events.events.at(-1)?.live === replyId);
    latencies.push(performance.now() - changed);
    await live.endReply({ chatId, replyId, owner });
    changed = performance.now();
    await waitUntil(() => events.events.at(-1)?.live === null);
    latencies.push(performance.now() - changed);
  }
  await events.cancel();
  return latencies;
}

// ---------------------------------------------------------------------------------------------
// 3. 100 idle event streams on one server.

async function idleStreams(kind: 'sqlite' | 'postgres'): Promise<void> {
  const pair = await openPair(kind);
  const chats = Array.from({ length: 100 }, (_, index) => `idle-${kind}-${index}`);
  for (const chatId of chats) {
    const turn = await postTurn(pair.writer.url, {
      id: chatId,
      messages: [userMessage('q', 'hi')],
    });
    await turn.finished;
  }
  const measure = async (): Promise<number> => {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    return cpuMs(process.cpuUsage(before));
  };
  const floor = await measure();
  const streams = await Promise.all(
    chats.map(async (chatId) =>
      readEventStream(await fetch(`${pair.writer.url}/api/chat/${chatId}/events`)),
    ),
  );
  await waitUntil(() => streams.every((stream) => stream.events.length > 0));
  const open = await measure();
  for (const stream of streams) await stream.cancel();
  await pair.close();
  const share = (cpu: number) => `${((cpu / windowMs) * 100).toFixed(2)}% of one core`;
  console.log(
    `  100 open event streams, idle, ${windowMs / 1000} s window: ${share(open)} (${ms(open)} CPU); without them ${share(floor)}: +${share(open - floor)}`,
  );
}

// ---------------------------------------------------------------------------------------------

console.log(
  `durable turns in the reference app (Node ${process.versions.node}, ${new Date().toISOString()})`,
);
if (sections.has('1')) for (const pace of turnPaces) await turnCost(pace);
for (const kind of sections.has('2') || sections.has('3')
  ? (['sqlite', 'postgres'] as const)
  : []) {
  console.log(`\n2./3. ${kind}: a writer server and a second server over the same data`);
  if (sections.has('2')) {
    const pair = await openPair(kind);
    const firstBytes = await resumeFirstByte(pair);
    console.log(
      `  resume, first byte (median of ${firstBytes.length}): ${ms(median(firstBytes))} (p95 ${ms(percentile(firstBytes, 0.95))})`,
    );
    const stops = await stopToLastEnd(pair);
    console.log(
      `  stop to the last reader's end (median of ${stops.length}): ${ms(median(stops))} (max ${ms(Math.max(...stops))})`,
    );
    const latencies = await eventLatency(pair);
    console.log(
      `  event latency (${latencies.length} changes): median ${ms(median(latencies))}, p95 ${ms(percentile(latencies, 0.95))}`,
    );
    await pair.close();
  }
  if (sections.has('3')) await idleStreams(kind);
}
rmSync(directory, { recursive: true, force: true });
