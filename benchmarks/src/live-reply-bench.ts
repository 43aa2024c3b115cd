// The store-level cost of a durable turn (issue #36), against the same turn without a live
// reply, on SQLite (a temp file) and on PostgreSQL when DATABASE_URL is set. Prints figures;
// asserts nothing.
//   cd benchmarks && node --import tsx src/live-reply-bench.ts
//
// A plain turn: the question committed, then the reply committed. A durable turn: the question
// committed with its reply's live record (`startReply`), the reply's 40 chunks appended in
// batches, then the reply committed with the end of its record (`endReply`). The two are
// interleaved run by run on one store and one chat, so a busy machine slows them alike; the
// difference is what the live reply costs the server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore, JsonValue } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { median, printTable, seedChat } from './bench-helpers.ts';

const runs = 200;
const warmup = 30;
const chunksPerReply = 40;
const batchSizes = [1, 5, 10];

function message(id: string, role: string, text: string) {
  return { id, message: { id, role, parts: [{ type: 'text' as const, text }] } };
}

/** The chunks of one reply, as the AI SDK's UI message stream sends a text reply. */
function replyChunks(replyId: string): JsonValue[] {
  return Array.from({ length: chunksPerReply }, (_, index) => ({
    type: 'text-delta',
    id: `${replyId}-text`,
    delta: `word${index} `,
  }));
}

/** Live-reply methods of a store that declares them. */
function live(store: ContextStore) {
  const { appendReplyChunks } = store;
  if (appendReplyChunks === undefined) throw new Error('the store has no live replies');
  return { appendReplyChunks: appendReplyChunks.bind(store) };
}

async function measure(store: ContextStore, label: string): Promise<Record<string, string>[]> {
  const chatId = 'chat';
  await seedChat(store, chatId, 'bench-user', 100);
  let head = (await store.getHead({ chatId, branch: 'main' })).headMessageId;
  const { appendReplyChunks } = live(store);
  const plain: number[] = [];
  const durable = new Map<number, number[]>(batchSizes.map((size) => [size, []]));
  const appendTimes = new Map<number, number[]>(batchSizes.map((size) => [size, []]));

  const plainTurn = async (tag: string): Promise<number> => {
    const started = performance.now();
    const asked = await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: head,
      messages: [message(`${tag}-q`, 'user', `question ${tag}`)],
    });
    const answered = await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: asked.headMessageId,
      messages: [message(`${tag}-r`, 'assistant', `answer ${tag}`)],
    });
    head = answered.headMessageId;
    return performance.now() - started;
  };

  const durableTurn = async (tag: string, batch: number, appends: number[]): Promise<number> => {
    const replyId = `${tag}-r`;
    const owner = `${label}-server`;
    const chunks = replyChunks(replyId);
    const started = performance.now();
    const asked = await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: head,
      messages: [message(`${tag}-q`, 'user', `question ${tag}`)],
      startReply: { replyId, owner, leaseMs: 15_000 },
    });
    for (let from = 0; from < chunks.length; from += batch) {
      const appendStarted = performance.now();
      await appendReplyChunks({
        chatId,
        replyId,
        owner,
        from,
        chunks: chunks.slice(from, from + batch),
        leaseMs: 15_000,
      });
      appends.push(performance.now() - appendStarted);
    }
    const answered = await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: asked.headMessageId,
      messages: [message(replyId, 'assistant', `answer ${tag}`)],
      endReply: { replyId, owner },
    });
    head = answered.headMessageId;
    return performance.now() - started;
  };

  for (let run = 0; run < warmup + runs; run += 1) {
    const plainMs = await plainTurn(`p${run}`);
    const durableMs: [number, number][] = [];
    for (const size of batchSizes) {
      const appends: number[] = [];
      durableMs.push([size, await durableTurn(`d${size}-${run}`, size, appends)]);
      if (run >= warmup) appendTimes.get(size)?.push(...appends);
    }
    if (run < warmup) continue;
    plain.push(plainMs);
    for (const [size, ms] of durableMs) durable.get(size)?.push(ms);
  }
  const plainMedian = median(plain);
  return batchSizes.map((size) => {
    const durableMedian = median(durable.get(size) ?? []);
    return {
      store: label,
      'chunks per batch': String(size),
      appends: String(Math.ceil(chunksPerReply / size)),
      'plain turn': plainMedian.toFixed(3),
      'durable turn': durableMedian.toFixed(3),
      'durable - plain': (durableMedian - plainMedian).toFixed(3),
      'durable / plain': (durableMedian / plainMedian).toFixed(2),
      'one append': median(appendTimes.get(size) ?? []).toFixed(3),
    };
  });
}

async function main(): Promise<void> {
  console.log(
    `Median milliseconds of one turn (a question and a reply of ${chunksPerReply} chunks), ${runs} turns each, interleaved`,
  );
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-live-bench-'));
  const rows: Record<string, string>[] = [];
  try {
    const sqlite = new SqliteContextStore(join(directory, 'live.db'));
    rows.push(...(await measure(sqlite, 'sqlite')));
    await sqlite.close();
    const url = process.env.DATABASE_URL;
    if (url !== undefined) {
      const schema = `live_bench_${Math.random().toString(36).slice(2, 10)}`;
      const postgres = new PostgresContextStore({ connectionString: url, schema });
      try {
        rows.push(...(await measure(postgres, 'postgres')));
      } finally {
        const { default: connect } = await import('postgres');
        const admin = connect(url, { max: 1, onnotice: () => {} });
        await postgres.close();
        await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      }
    } else {
      console.log('(PostgreSQL skipped: set DATABASE_URL to measure it too)');
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  printTable(rows);
}

await main();
