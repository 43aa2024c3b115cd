// The server-side cost of a warm chat turn through the AI SDK cycle (issue #36, "the turn itself"):
// `cycle.begin()` (read, place, save the question with its reply's live record, resolve the model
// input) and the reply's save (`onReplySaved`'s `saveMs`: the write that stores the reply and ends
// its live record), on SQLite (a temp file) and on PostgreSQL when DATABASE_URL is set. Each
// store call of the measured turns is counted, and on PostgreSQL each statement the driver sends.
// Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/turn-bench.ts [turns]
//
// Each turn is what a chat page sends: the whole conversation as stored plus a new question, to
// a cycle whose engine for the chat is warm (it served the previous turn). The model is a mock
// that answers at once, so what is timed is the cycle and the store. The floor is the bare
// driver's cheapest round trip on the same database, timed once per turn beside it: one
// primary-key read of the chat row (SQLite: a prepared statement on a connection of its own to
// the file; PostgreSQL: postgres.js, one connection, the statement prepared). `begin / floor`
// and `save / floor` say how many such round trips each costs.
//
// Before / after: TURN_BENCH_BASELINE=<file> names the built entry of another build of
// @ctxgraph/ai-sdk (dist/index.js of a checkout of another commit, which resolves its own
// engine), whose cycle then runs the same turns, interleaved turn by turn with this build's on
// the same store (each on a chat of its own), so a busy machine slows both alike.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createChatCycle } from '@ctxgraph/ai-sdk';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { median, printTable } from './bench-helpers.ts';

const turns = Number(process.argv[2] ?? 150);
const warmup = 20;
const userId = 'bench-user';

type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part>
    ? Part
    : never;

/** A model that answers every call with the same short text, at once. */
function instantModel(): MockLanguageModelV3 {
  const parts: StreamPart[] = [
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'A short answer, ' },
    { type: 'text-delta', id: 't', delta: 'in two pieces.' },
    { type: 'text-end', id: 't' },
    {
      type: 'finish',
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 6, text: 6, reasoning: undefined },
      },
    },
  ];
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: new ReadableStream<StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  });
}

/**
 * The store with each method call recorded by name (the change feed's watch and close aside)
 * and, given a count of the statements sent, with the statements each call sent (exact for a
 * call nothing else runs beside, as the reply's save).
 */
function counted(
  store: ContextStore,
  statements: (() => number) | undefined,
): { store: ContextStore; calls: { name: string; sent: number }[] } {
  const calls: { name: string; sent: number }[] = [];
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'watchChat' || property === 'close')
        return value;
      return (...args: unknown[]) => {
        const call = { name: String(property), sent: 0 };
        calls.push(call);
        const before = statements?.() ?? 0;
        const result = (value as (...parameters: unknown[]) => unknown).apply(target, args);
        if (statements === undefined || !(result instanceof Promise)) return result;
        return result.finally(() => {
          call.sent = statements() - before;
        });
      };
    },
  });
  return { store: wrapped, calls };
}

/** A build of the cycle to measure. */
interface Build {
  readonly label: string;
  readonly createChatCycle: typeof createChatCycle;
}

const builds: Build[] = [{ label: 'this build', createChatCycle }];
const baseline = process.env.TURN_BENCH_BASELINE;
if (baseline !== undefined && baseline !== '') {
  const module = (await import(pathToFileURL(resolve(baseline)).href)) as {
    createChatCycle: typeof createChatCycle;
  };
  builds.unshift({ label: 'baseline', createChatCycle: module.createChatCycle });
}

/** What one build measured on one store. */
interface TurnFigures {
  readonly begin: number[];
  readonly save: number[];
  /** Store calls of the last measured turn: before the model call, and for the reply. */
  beginCalls: string[];
  saveCalls: string[];
  /**
   * Statements the driver sent per measured turn (PostgreSQL): before the model call, and by the
   * reply's save (the chunk batches streamed before it aside).
   */
  readonly beginStatements: number[];
  readonly saveStatements: number[];
}

/** One build's warm turns on one chat of `store`; `statements` counts what the driver sent. */
function turnRunner(build: Build, store: ContextStore, statements?: () => number) {
  const { store: countedStore, calls } = counted(store, statements);
  let saveMs = 0;
  const cycle = build.createChatCycle({
    store: countedStore,
    engine: { renderer: new XmlRenderer() },
    onReplySaved: (event) => {
      saveMs = event.saveMs;
    },
  });
  const model = instantModel();
  const chatId = `turns-${Math.random().toString(36).slice(2, 10)}`;
  const figures: TurnFigures = {
    begin: [],
    save: [],
    beginCalls: [],
    saveCalls: [],
    beginStatements: [],
    saveStatements: [],
  };
  let history: UIMessage[] = [];
  return {
    chatId,
    figures,
    async turn(run: number): Promise<void> {
      const question: UIMessage = {
        id: `q-${run}`,
        role: 'user',
        parts: [{ type: 'text', text: `Question number ${run}, with a few words.` }],
      };
      calls.length = 0;
      const sentBefore = statements?.() ?? 0;
      const started = performance.now();
      const turn = await cycle.begin(
        { id: chatId, trigger: 'submit-message', messages: [...history, question] },
        { userId },
      );
      const beginMs = performance.now() - started;
      const beginCalls = calls.splice(0).map((call) => call.name);
      const sentAtModel = statements?.() ?? 0;
      const response = turn.respond(
        streamText({ model, system: turn.system, messages: turn.messages }),
      );
      await response.text();
      // The save is over once `onReplySaved` ran: the stream holds `finish` back until then.
      const saves = calls.filter((call) => call.name !== 'appendReplyChunks');
      if (run >= warmup) {
        figures.begin.push(beginMs);
        figures.save.push(saveMs);
        figures.beginCalls = beginCalls;
        figures.saveCalls = saves.map((call) => call.name);
        figures.beginStatements.push(sentAtModel - sentBefore);
        figures.saveStatements.push(saves.reduce((total, call) => total + call.sent, 0));
      }
      // What the page holds after the reply: the conversation as stored (not timed).
      history = await cycle.messages(chatId, { userId });
    },
  };
}

/**
 * Every build's turns on `store`, interleaved turn by turn (the order swapped every turn), with
 * one floor read timed after each round; `floorOf` makes the floor's read for a chat id.
 */
async function measureStore(
  label: string,
  store: ContextStore,
  floorOf: (chatId: string) => () => unknown,
  statements?: () => number,
): Promise<{ rows: Record<string, string>[]; calls: string[] }> {
  const runners = builds.map((build) => turnRunner(build, store, statements));
  const floor: number[] = [];
  let read: (() => unknown) | undefined;
  for (let run = 0; run < warmup + turns; run += 1) {
    const order = run % 2 === 0 ? runners : [...runners].reverse();
    for (const runner of order) await runner.turn(run);
    read ??= floorOf(runners[0]?.chatId as string);
    const started = performance.now();
    await read();
    if (run >= warmup) floor.push(performance.now() - started);
  }
  const rows = runners.map((runner, index) =>
    row(`${label}, ${builds[index]?.label}`, runner.figures, floor),
  );
  const calls = runners.flatMap((runner, index) => [
    `${label}, ${builds[index]?.label}, before the model call: ${runner.figures.beginCalls.join(', ')}`,
    `${label}, ${builds[index]?.label}, the reply's save: ${runner.figures.saveCalls.join(', ')}`,
  ]);
  return { rows, calls };
}

function row(
  label: string,
  figures: TurnFigures,
  floor: readonly number[],
): Record<string, string> {
  const floorMs = median(floor);
  const beginMs = median(figures.begin);
  const saveMs = median(figures.save);
  const statements = (values: readonly number[]) =>
    Number.isNaN(median(values)) || values.every((value) => value === 0)
      ? '-'
      : String(median(values));
  return {
    'store, build': label,
    'begin ms': beginMs.toFixed(3),
    'save ms': saveMs.toFixed(3),
    'floor ms': floorMs.toFixed(3),
    'begin / floor': (beginMs / floorMs).toFixed(1),
    'save / floor': (saveMs / floorMs).toFixed(1),
    'calls before model': String(figures.beginCalls.length),
    'calls for save': String(figures.saveCalls.length),
    'statements before model': statements(figures.beginStatements),
    'statements for save': statements(figures.saveStatements),
  };
}

async function sqliteFigures(): Promise<{ rows: Record<string, string>[]; calls: string[] }> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-turn-bench-'));
  const path = join(directory, 'chat.db');
  const store = new SqliteContextStore({ path });
  const database = new Database(path);
  try {
    return await measureStore('SQLite', store, (chatId) => {
      const statement = database.prepare('SELECT version FROM ctxgraph_chats WHERE id = ?');
      return () => statement.get(chatId);
    });
  } finally {
    database.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function postgresFigures(
  url: string,
): Promise<{ rows: Record<string, string>[]; calls: string[] }> {
  const schema = `turn_bench_${Math.random().toString(36).slice(2, 10)}`;
  let sent = 0;
  // One client the store is given, so every statement it sends passes `debug`.
  const client = postgres(url, {
    max: 4,
    onnotice: () => {},
    debug: () => {
      sent += 1;
    },
  });
  const store = new PostgresContextStore({ sql: client, schema });
  const floorClient = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await measureStore(
      'PostgreSQL',
      store,
      (chatId) => () =>
        floorClient.unsafe(
          `SELECT version FROM ${schema}.ctxgraph_chats WHERE chat_id = $1`,
          [chatId],
          {
            prepare: true,
          },
        ),
      () => sent,
    );
  } finally {
    await floorClient.end();
    await store.close();
    await client.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

const rows: Record<string, string>[] = [];
const callLists: string[] = [];
const sqlite = await sqliteFigures();
rows.push(...sqlite.rows);
callLists.push(...sqlite.calls);
const url = process.env.DATABASE_URL;
if (url === undefined) console.log('(DATABASE_URL is not set: PostgreSQL skipped)');
else {
  const figures = await postgresFigures(url);
  rows.push(...figures.rows);
  callLists.push(...figures.calls);
}
console.log(`A warm turn through the AI SDK cycle (live replies on), median of ${turns} turns:`);
printTable(rows);
for (const line of callLists) console.log(line);
