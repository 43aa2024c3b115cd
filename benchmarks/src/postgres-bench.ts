// PostgresContextStore costs against a real PostgreSQL. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/postgres-bench.ts [saves] [reads] [writers]
// Uses DATABASE_URL when it is set; otherwise starts an embedded PostgreSQL under the OS temp
// directory and removes it afterwards (tooling/postgres-server.ts; CTXGRAPH_PGBOUNCER=1 puts
// PgBouncer in front). Everything lives in random schemas that are dropped at the end. With
// section names as arguments, only those sections run.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { childLines, median, printTable, saveRow, seedChat, turn } from './bench-helpers.ts';

const sizes = [100, 1_000, 10_000];
const saveRuns = 200;
const renderer = new XmlRenderer();

/**
 * The floor: a bare postgres.js transaction on the same tables (same keys, same foreign keys)
 * that inserts the same two rows, JSON already serialized, and moves the head. It does not check
 * the head, bump a version or read anything back.
 */
async function createFloor(url: string, schema: string, historySize: number) {
  const sql = postgres(url, { max: 3, onnotice: () => {} });
  const chatId = `floor-${historySize}`;
  const tables = {
    chats: sql(`${schema}.ctxgraph_chats`),
    messages: sql(`${schema}.ctxgraph_messages`),
    branches: sql(`${schema}.ctxgraph_branches`),
  };
  const now = Date.now();
  await sql`INSERT INTO ${tables.chats} (chat_id, user_id, active_branch, created_at, updated_at) VALUES (${chatId}, 'bench-user', 'main', ${now}, ${now})`;
  await sql`INSERT INTO ${tables.branches} (chat_id, name, created_at, updated_at) VALUES (${chatId}, 'main', ${now}, ${now})`;
  let head: string | null = null;
  let sequence = 0;
  const append = (tag: string) => {
    const rows = turn(tag).map((entry) => {
      sequence += 1;
      const row = {
        chat_id: chatId,
        message_id: entry.id,
        parent_id: head,
        sequence,
        role: entry.message.role,
        message: JSON.stringify(entry.message),
        created_at: now,
        updated_at: now,
      };
      head = entry.id;
      return row;
    });
    return sql.begin(async (transaction) => {
      await transaction`INSERT INTO ${tables.messages} ${transaction(rows)}`;
      await transaction`UPDATE ${tables.branches} SET head_message_id = ${head}, updated_at = ${now} WHERE chat_id = ${chatId} AND name = 'main'`;
    });
  };
  for (let index = 0; index < historySize / 2; index += 1) await append(`seed-${index}`);
  return { append, close: () => sql.end() };
}

async function measureSaves(
  url: string,
  schema: string,
  size: number,
): Promise<Record<string, string>> {
  const store = new PostgresContextStore({ connectionString: url, schema });
  const chatId = `save-${size}`;
  await seedChat(store, chatId, 'bench-user', size);
  let head = (await store.getHead({ chatId, branch: 'main' })).headMessageId;
  await seedChat(store, `engine-${size}`, 'bench-user', size);
  const engine = new ContextEngine({
    store,
    chatId: `engine-${size}`,
    userId: 'bench-user',
    renderer,
  });
  engine.set(role('You are a benchmark.'));
  await engine.resolve();
  const floor = await createFloor(url, schema, size);

  // Interleaved, one of each per round, so the load of a shared machine hits all four alike.
  const commitTimes: number[] = [];
  const appendTimes: number[] = [];
  const saveTimes: number[] = [];
  const floorTimes: number[] = [];
  for (let run = 0; run < saveRuns; run += 1) {
    let started = performance.now();
    head = (
      await store.commit({
        chatId,
        branch: 'main',
        expectedHeadId: head,
        messages: turn(`run-${run}`),
      })
    ).headMessageId;
    commitTimes.push(performance.now() - started);
    started = performance.now();
    head = (await store.append({ chatId, branch: 'main', messages: turn(`append-${run}`) }))
      .headMessageId;
    appendTimes.push(performance.now() - started);
    started = performance.now();
    await floor.append(`floor-${run}`);
    floorTimes.push(performance.now() - started);
    engine.set(user(`question ${run}`), assistantText(`answer ${run}`));
    started = performance.now();
    await engine.save();
    saveTimes.push(performance.now() - started);
  }
  await floor.close();
  await store.close();
  const row = saveRow(size, { commit: commitTimes, save: saveTimes, floor: floorTimes }, 3);
  return {
    ...row,
    'store.append (1 turn)': median(appendTimes).toFixed(3),
    'append / floor': (median(appendTimes) / median(floorTimes)).toFixed(2),
  };
}

// ---------------------------------------------------------------------------------------------
// Reads: cold and warm, before and after ANALYZE, against bare postgres.js floors.

const readSizes = [1_000, 10_000];

/** `p` in [0, 1] of a list of numbers (nearest rank). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}

/**
 * The walk floor: the same chain read as one recursive query by a bare postgres.js client, over
 * an equivalent table (same columns, same keys) that holds only this chat and was ANALYZEd. Its
 * recursive step is the plain index-lookup loop (a LATERAL primary-key probe): a plain join is
 * no floor, because even with statistics the planner hash-joins a chat that fills most of its
 * table, scanning every row at every step (see the EXPLAIN lines the script prints).
 */
function walkFloorSql(table: string): string {
  return `WITH RECURSIVE chain AS (
  SELECT m.message_id, m.parent_id, m.sequence, m.message, m.created_at, m.updated_at, 1 AS depth
  FROM ${table} m WHERE m.chat_id = $1 AND m.message_id = $2
  UNION ALL
  SELECT p.message_id, p.parent_id, p.sequence, p.message, p.created_at, p.updated_at, chain.depth + 1
  FROM chain CROSS JOIN LATERAL (
    SELECT * FROM ${table} m WHERE m.chat_id = $1 AND m.message_id = chain.parent_id LIMIT 1
  ) p
)
SELECT message_id, parent_id, sequence, message, created_at, updated_at FROM chain ORDER BY depth DESC`;
}

/** The chain query the store used before this change: a plain recursive join. */
function plainJoinSql(table: string): string {
  return `WITH RECURSIVE chain AS (
  SELECT m.chat_id, m.message_id, m.parent_id, m.sequence, m.message, m.created_at, m.updated_at, 1 AS depth
  FROM ${table} m WHERE m.chat_id = $1::text AND m.message_id = $2::text
  UNION ALL
  SELECT m.chat_id, m.message_id, m.parent_id, m.sequence, m.message, m.created_at, m.updated_at, chain.depth + 1
  FROM chain JOIN ${table} m ON m.chat_id = $1::text AND m.message_id = chain.parent_id
)
SELECT * FROM chain m ORDER BY m.depth DESC`;
}

/** The range floor: every row of the chat in sequence order, one index range scan, no walk at all. */
function rangeFloorSql(table: string): string {
  return `SELECT message_id, parent_id, sequence, message, created_at, updated_at FROM ${table}
  WHERE chat_id = $1 ORDER BY sequence`;
}

/** The store's own chain statement, as it reaches the server, with its parameters. */
async function captureChainStatement(
  url: string,
  schema: string,
  chatId: string,
  headMessageId: string,
): Promise<{ statement: string; parameters: unknown[] }> {
  let captured: { statement: string; parameters: unknown[] } | undefined;
  const client = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, statement, parameters) => {
      if (statement.includes('WITH RECURSIVE target')) captured = { statement, parameters };
    },
  });
  const store = new PostgresContextStore({ sql: client, schema });
  await store.getChain({ chatId, headMessageId });
  await store.close();
  await client.end();
  if (captured === undefined) throw new Error('the chain statement was not seen');
  return captured;
}

/** EXPLAIN ANALYZE of a statement on a new connection: the join lines and the execution time. */
async function explain(url: string, statement: string, parameters: unknown[]): Promise<string[]> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await client.unsafe(
      `EXPLAIN (ANALYZE, BUFFERS) ${statement}`,
      parameters as never[],
    );
    return rows
      .map((row) => String(row['QUERY PLAN']))
      .filter((line) =>
        /Nested Loop|Hash Join|Merge Join|Index Scan|Seq Scan|Bitmap Heap|Execution Time/.test(
          line,
        ),
      )
      .map((line) => line.replace(/\s+\(cost=[^)]*\)/, '').trim());
  } finally {
    await client.end();
  }
}

async function measureReads(url: string, size: number): Promise<Record<string, string>[]> {
  const schema = `r_${randomBytes(6).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const chatId = `reads-${size}`;
  const messages = `"${schema}".ctxgraph_messages`;
  const twin = `"${schema}".floor_messages`;
  try {
    const migrating = new PostgresContextStore({ connectionString: url, schema });
    await migrating.migrate();
    // No autovacuum on the store's tables: the first phase must run without statistics, as a
    // freshly loaded chat does before autovacuum's ANALYZE gets to it.
    for (const table of ['chats', 'messages', 'branches'])
      await admin.unsafe(
        `ALTER TABLE "${schema}".ctxgraph_${table} SET (autovacuum_enabled = false)`,
      );
    await seedChat(migrating, chatId, 'bench-user', size);
    const head = (await migrating.getHead({ chatId, branch: 'main' })).headMessageId as string;
    await migrating.close();
    await admin.unsafe(`CREATE TABLE ${twin} (LIKE ${messages} INCLUDING ALL)`);
    await admin.unsafe(`INSERT INTO ${twin} SELECT * FROM ${messages} WHERE chat_id = $1`, [
      chatId,
    ]);
    await admin.unsafe(`ANALYZE ${twin}`);

    const rows: Record<string, string>[] = [];
    const explained: string[] = [];
    for (const phase of ['no statistics', 'after ANALYZE'] as const) {
      if (phase === 'after ANALYZE') await admin.unsafe(`ANALYZE ${messages}`);
      const [stats] = await admin.unsafe(
        `SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = $1 AND tablename = 'ctxgraph_messages'`,
        [schema],
      );
      const captured = await captureChainStatement(url, schema, chatId, head);
      explained.push(
        `  ${size.toLocaleString('en-US')} messages, ${phase} (pg_stats rows for the table: ${String(stats?.n)})`,
        '    store (runs, LATERAL probes):',
        ...(await explain(url, captured.statement, captured.parameters)).map(
          (line) => `      ${line}`,
        ),
        '    previous store query (plain join):',
        ...(await explain(url, plainJoinSql(messages), [chatId, head])).map(
          (line) => `      ${line}`,
        ),
      );

      const cold = { chain: [] as number[], resolve: [] as number[], floor: [] as number[] };
      const coldRuns = 15;
      for (let run = 0; run < coldRuns; run += 1) {
        // A new store handle each time: new pool, new connection, schema check, no prepared statements.
        let started = performance.now();
        const store = new PostgresContextStore({ connectionString: url, schema });
        const chain = await store.getChain({ chatId, headMessageId: head });
        cold.chain.push(performance.now() - started);
        await store.close();
        if (chain.nodes.length !== size) throw new Error(`read ${chain.nodes.length} of ${size}`);

        started = performance.now();
        const resolving = new PostgresContextStore({ connectionString: url, schema });
        const engine = new ContextEngine({
          store: resolving,
          chatId,
          userId: 'bench-user',
          renderer,
        });
        engine.set(role('You are a benchmark.'), hint('Be quick.'));
        const { messages: resolved } = await engine.resolve();
        cold.resolve.push(performance.now() - started);
        await resolving.close();
        if (resolved.length !== size) throw new Error(`resolved ${resolved.length} of ${size}`);

        started = performance.now();
        const bare = postgres(url, { max: 1, onnotice: () => {} });
        const floorRows = await bare.unsafe(walkFloorSql(twin), [chatId, head]);
        cold.floor.push(performance.now() - started);
        await bare.end();
        if (floorRows.length !== size) throw new Error(`floor read ${floorRows.length}`);
      }

      const warmRuns = 30;
      const store = new PostgresContextStore({ connectionString: url, schema });
      const bare = postgres(url, { max: 1, onnotice: () => {} });
      const engine = new ContextEngine({ store, chatId, userId: 'bench-user', renderer });
      engine.set(role('You are a benchmark.'), hint('Be quick.'));
      await engine.resolve();
      await store.getChain({ chatId, headMessageId: head });
      await bare.unsafe(walkFloorSql(twin), [chatId, head]);
      await bare.unsafe(rangeFloorSql(twin), [chatId]);
      const warm = {
        chain: [] as number[],
        freshEngine: [] as number[],
        resolve: [] as number[],
        floor: [] as number[],
        range: [] as number[],
      };
      for (let run = 0; run < warmRuns; run += 1) {
        let started = performance.now();
        await store.getChain({ chatId, headMessageId: head });
        warm.chain.push(performance.now() - started);
        started = performance.now();
        const fresh = new ContextEngine({ store, chatId, userId: 'bench-user', renderer });
        fresh.set(role('You are a benchmark.'), hint('Be quick.'));
        await fresh.resolve();
        warm.freshEngine.push(performance.now() - started);
        started = performance.now();
        await engine.resolve();
        warm.resolve.push(performance.now() - started);
        started = performance.now();
        await bare.unsafe(walkFloorSql(twin), [chatId, head]);
        warm.floor.push(performance.now() - started);
        started = performance.now();
        await bare.unsafe(rangeFloorSql(twin), [chatId]);
        warm.range.push(performance.now() - started);
      }
      await store.close();
      await bare.end();

      const coldFloor = median(cold.floor);
      const warmFloor = median(warm.floor);
      const row = (read: string, times: number[], floor: number): Record<string, string> => ({
        history: size.toLocaleString('en-US'),
        statistics: phase,
        read,
        'median ms': median(times).toFixed(2),
        'p95 ms': percentile(times, 0.95).toFixed(2),
        'walk floor ms': floor.toFixed(2),
        'x floor': (median(times) / floor).toFixed(2),
      });
      rows.push(
        row('getChain, new store (cold)', cold.chain, coldFloor),
        row('engine.resolve(), new store (cold)', cold.resolve, coldFloor),
        row('engine.resolve(), new engine, open store', warm.freshEngine, warmFloor),
        row('getChain (warm)', warm.chain, warmFloor),
        row('range floor: all rows by sequence (warm)', warm.range, warmFloor),
        row('engine.resolve(), nothing new (warm)', warm.resolve, warmFloor),
      );
    }
    console.log(explained.join('\n'));
    return rows;
  } finally {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Concurrent writers: separate processes, synchronized start.

type WriterMode = 'engine' | 'engine-cas' | 'floor';
const writerPath = fileURLToPath(new URL('./postgres-bench-writer.ts', import.meta.url));
const writerCount = 8;
const writerTurns = 50;

interface WriterReport {
  readonly latencies: number[];
  readonly failed: number;
  readonly errors: string[];
}

/** Starts the writers, waits until all are connected, starts them at once, returns their reports and the wall time. */
async function runWriters(
  mode: WriterMode,
  url: string,
  schema: string,
  chatIds: readonly string[],
): Promise<{ wallMs: number; reports: WriterReport[] }> {
  const children = chatIds.map((chatId, writer) =>
    spawn(
      process.execPath,
      ['--import', 'tsx', writerPath, mode, url, schema, chatId, `w${writer}`, String(writerTurns)],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  const lines = children.map((child, writer) => childLines(child, `${mode} writer ${writer}`));
  await Promise.all(lines.map((next) => next()));
  const started = performance.now();
  for (const child of children) child.stdin.end('go\n');
  const reports = await Promise.all(
    lines.map(async (next) => {
      const report = JSON.parse(await next()) as WriterReport;
      return report;
    }),
  );
  const wallMs = performance.now() - started;
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) resolve();
          else child.on('exit', () => resolve());
        }),
    ),
  );
  return { wallMs, reports };
}

/** Lost turns, duplicated nodes and split turns, read back through the store. */
async function audit(
  store: PostgresContextStore,
  chatIds: readonly string[],
): Promise<{ lost: number; duplicates: number; split: number }> {
  let lost = 0;
  let duplicates = 0;
  let split = 0;
  for (const chatId of new Set(chatIds)) {
    const { headMessageId } = await store.getHead({ chatId, branch: 'main' });
    const chain =
      headMessageId === null ? [] : (await store.getChain({ chatId, headMessageId })).nodes;
    const ids = chain.map((node) => node.id);
    const unique = new Set(ids);
    const graph = await store.getGraph(chatId);
    duplicates += ids.length - unique.size + (graph.nodes.length - ids.length);
    chatIds.forEach((writerChat, writer) => {
      if (writerChat !== chatId) return;
      for (let turnIndex = 0; turnIndex < writerTurns; turnIndex += 1) {
        const tag = `w${writer}-${turnIndex}`;
        if (!unique.has(`${tag}-user`) || !unique.has(`${tag}-reply`)) lost += 1;
        else if (ids.indexOf(`${tag}-reply`) !== ids.indexOf(`${tag}-user`) + 1) split += 1;
      }
    });
  }
  return { lost, duplicates, split };
}

async function measureWriters(url: string, schema: string): Promise<Record<string, string>[]> {
  const rounds = 3;
  const store = new PostgresContextStore({ connectionString: url, schema });
  const rows: Record<string, string>[] = [];
  try {
    for (const layout of ['one chat', `${writerCount} chats`] as const) {
      const results = new Map<
        WriterMode,
        {
          walls: number[];
          latencies: number[];
          failed: number;
          lost: number;
          duplicates: number;
          split: number;
        }
      >();
      // Rounds alternate the modes, so the load of a shared machine hits all of them alike.
      for (let round = 0; round < rounds; round += 1) {
        for (const mode of ['engine', 'floor', 'engine-cas'] as const) {
          const tag = `${mode}-${layout === 'one chat' ? 'one' : 'many'}-${round}`;
          const chatIds = Array.from({ length: writerCount }, (_, writer) =>
            layout === 'one chat' ? tag : `${tag}-${writer}`,
          );
          for (const chatId of new Set(chatIds))
            await store.openChat({ chatId, userId: 'bench-user' });
          const { wallMs, reports } = await runWriters(mode, url, schema, chatIds);
          const checked = await audit(store, chatIds);
          const entry = results.get(mode) ?? {
            walls: [],
            latencies: [],
            failed: 0,
            lost: 0,
            duplicates: 0,
            split: 0,
          };
          entry.walls.push(wallMs);
          for (const report of reports) {
            entry.latencies.push(...report.latencies);
            entry.failed += report.failed;
            for (const error of report.errors) console.error(`  ${mode}: ${error}`);
          }
          entry.lost += checked.lost;
          entry.duplicates += checked.duplicates;
          entry.split += checked.split;
          results.set(mode, entry);
        }
      }
      const floor = results.get('floor');
      const floorWall = median(floor?.walls ?? []);
      const floorP95 = percentile(floor?.latencies ?? [], 0.95);
      const label: Record<WriterMode, string> = {
        engine: 'ContextEngine.save() (append)',
        floor: 'bare postgres.js floor',
        'engine-cas': 'ContextEngine.save(), append hidden (CAS)',
      };
      for (const mode of ['engine', 'floor', 'engine-cas'] as const) {
        const entry = results.get(mode);
        if (!entry) continue;
        const wall = median(entry.walls);
        const p95 = percentile(entry.latencies, 0.95);
        rows.push({
          layout,
          writer: label[mode],
          'wall ms': wall.toFixed(0),
          'turns/s': ((writerCount * writerTurns) / (wall / 1000)).toFixed(0),
          'p50 ms': percentile(entry.latencies, 0.5).toFixed(2),
          'p95 ms': p95.toFixed(2),
          'p99 ms': percentile(entry.latencies, 0.99).toFixed(2),
          'wall / floor': (wall / floorWall).toFixed(2),
          'p95 / floor': (p95 / floorP95).toFixed(2),
          lost: String(entry.lost),
          failed: String(entry.failed),
          duplicates: String(entry.duplicates),
          'split turns': String(entry.split),
        });
      }
    }
  } finally {
    await store.close();
  }
  return rows;
}

async function main(): Promise<void> {
  const sections = new Set(process.argv.slice(2));
  const wants = (section: string) => sections.size === 0 || sections.has(section);
  const server = await startPostgresServer();
  const schema = `b_${randomBytes(6).toString('hex')}`;
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    const [version] = await admin`SHOW server_version`;
    console.log(
      `PostgresContextStore on PostgreSQL ${String(version?.server_version)} (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}), schema ${schema}, store pool max 3`,
    );
    const migrating = new PostgresContextStore({ connectionString: server.url, schema });
    await migrating.migrate();
    await migrating.close();
    if (wants('saves')) {
      console.log(
        `\nPer-save median milliseconds of one turn (user + assistant), ${saveRuns} saves each, interleaved with the floor`,
      );
      const rows: Record<string, string>[] = [];
      for (const size of sizes) rows.push(await measureSaves(server.url, schema, size));
      printTable(rows);
      const first = rows[0];
      const last = rows.at(-1);
      if (first && last) {
        const growth = (key: string) => (Number(last[key]) / Number(first[key])).toFixed(2);
        console.log(
          `10,000 vs 100 messages of history: commit ${growth('store.commit (1 turn)')}x, append ${growth('store.append (1 turn)')}x, engine.save ${growth('engine.save (1 turn)')}x (target: flat)`,
        );
      }
    }
    if (wants('reads')) {
      console.log(
        '\nChain reads (whole chain, oldest first). Cold = a new store handle (new pool and connection,',
      );
      console.log(
        'schema check, nothing prepared) on a freshly loaded chat; the floor is the walk floor on a new',
      );
      console.log(
        'connection (cold rows) or an open one (warm rows). EXPLAIN ANALYZE of the recursive step:',
      );
      const rows: Record<string, string>[] = [];
      for (const size of readSizes) rows.push(...(await measureReads(server.url, size)));
      printTable(rows);
    }
    if (wants('writers')) {
      console.log(
        `\n${writerCount} writer processes x ${writerTurns} turns (user + assistant), started together; ${3} rounds, wall = median round, latencies pooled`,
      );
      printTable(await measureWriters(server.url, schema));
    }
  } finally {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
    await server.stop();
  }
}

await main();
