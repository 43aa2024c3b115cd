// Branch operations of a warm engine, a new store handle's first read and the per-turn save,
// each against a bare-driver floor measured in the same run. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/branch-ops-bench.ts [memory] [sqlite] [postgres] [branches] [cold] [turns]
// PostgreSQL: DATABASE_URL, or an embedded server (tooling/postgres-server.ts); random schemas,
// dropped at the end. CHATS (5) sets how many chats the cycles run on, COLD_RUNS (31) the new
// handles opened, TURNS (500) the turns saved.
//
// - Branches: on a chat of 1,000 messages, a warm engine (one resolve() first) runs 10 cycles of
//   rewind → checkpoint → restore → switchBranch('main') → btw. The floor of each operation is
//   what the store must do for it, done with the bare driver on a twin chat of the same shape
//   (same schema, same rows): a fork is one transaction that checks the node, reads the branch
//   names, inserts the branch and touches the chat; a checkpoint reads the head and upserts the
//   checkpoint; a restore reads the checkpoint and forks; a switch checks the branch and sets
//   the active one; a btw reads the head and forks. On memory, the floor is the same store calls
//   made straight on the store (no engine). Beside them, on every store, `store calls`: the
//   calls each operation needs made straight on the store, on a third chat of the same shape
//   (what the engine adds over its store). The three alternate operation by operation.
// - Cold read (SQLite): a new store handle, a new engine and its first resolve() of a
//   1,000-message chat, against a new better-sqlite3 connection (same settings) that reads the
//   active branch's head, walks the chain in one recursive statement and makes each node's
//   record (ids, sequence, times, engine record, parsed message: what the store must return).
//   Beside it, the older floor that reads and parses the messages only (payload-only).
// - Turns (SQLite): TURNS turns (a user message and a reply) saved one at a time on a chat of
//   1,000 messages, by store.commit and by engine.save, against a bare IMMEDIATE transaction that
//   reads the chat's highest sequence (a store shared by processes cannot keep it in memory),
//   inserts the two rows, moves the head where it is still the expected one and bumps the chat's
//   version. The three alternate turn by turn.
// x floor: the median of each run's time over its floor's in the same run (ratio of medians
// beside it). CLOCK=cpu times this process's CPU (user + system) instead of the wall clock: on a
// busy machine it moves far less (on PostgreSQL it leaves out the server's work).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { type ContextStore, nextBranchName, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { median, printTable, seedChat, turn } from './bench-helpers.ts';

const HISTORY = 1_000;
const CYCLES = 10;
const CHATS = Number(process.env.CHATS ?? 5);
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 31);
const TURNS = Number(process.env.TURNS ?? 500);
const renderer = new XmlRenderer();
const OPERATIONS = ['rewind', 'checkpoint', 'restore', 'switchBranch', 'btw'] as const;
type Operation = (typeof OPERATIONS)[number];

/** One chat's branch operations, as the engine names them; the floor keeps its own position. */
interface Floor {
  rewind(nodeId: string): Promise<unknown>;
  checkpoint(name: string): Promise<unknown>;
  restore(name: string): Promise<unknown>;
  switchBranch(name: string): Promise<unknown>;
  btw(): Promise<unknown>;
}

/** A backend: its store, and a floor for a chat the caller seeded in the twin store. */
interface Backend {
  readonly name: string;
  readonly store: ContextStore;
  readonly twin: ContextStore;
  floor(chatId: string): Promise<Floor>;
  close(): Promise<void>;
}

const seedId = (chatId: string, index: number) => `${chatId}-seed-${index}`;

// ---------------------------------------------------------------------------------------------
// Floors

/** The store calls each operation needs, made straight on the store (no engine). */
function storeCalls(store: ContextStore, chatId: string): Floor {
  let branch = 'main';
  const fork = async (head: string | null, activate: boolean) => {
    const made = await store.forkBranch?.({ chatId, from: branch, headMessageId: head, activate });
    if (made === undefined) throw new Error('the store cannot fork');
    if (activate) branch = made.name;
  };
  const head = async () => (await store.getHead({ chatId, branch })).headMessageId;
  return {
    rewind: (nodeId) => fork(nodeId, true),
    checkpoint: async (name) =>
      store.createCheckpoint({ chatId, name, messageId: (await head()) as string, replace: true }),
    restore: async (name) =>
      fork((await store.getCheckpoint({ chatId, name }))?.messageId ?? null, true),
    switchBranch: async (name) => {
      branch = (await store.setActiveBranch({ chatId, name })).name;
    },
    btw: async () => fork(await head(), false),
  };
}

/** Bare better-sqlite3 on the twin store's tables (prefix `floor_`). */
function sqliteFloor(database: Database.Database, chatId: string): Floor {
  const statement = (text: string) => database.prepare(text);
  const nodeExists = statement('SELECT 1 FROM floor_messages WHERE chat_id = ? AND id = ?');
  const branchNames = statement('SELECT name FROM floor_branches WHERE chat_id = ?').pluck();
  const insertBranch = statement(
    'INSERT INTO floor_branches (chat_id, name, head_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  );
  const touch = statement(
    'UPDATE floor_chats SET updated_at = ?, active_branch = coalesce(?, active_branch) WHERE id = ?',
  );
  const head = statement(
    'SELECT head_message_id FROM floor_branches WHERE chat_id = ? AND name = ?',
  ).pluck();
  const branchExists = statement('SELECT 1 FROM floor_branches WHERE chat_id = ? AND name = ?');
  const upsertCheckpoint = statement(
    `INSERT INTO floor_checkpoints (chat_id, name, message_id, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (chat_id, name) DO UPDATE SET message_id = excluded.message_id, created_at = excluded.created_at`,
  );
  const checkpointOf = statement(
    'SELECT message_id FROM floor_checkpoints WHERE chat_id = ? AND name = ?',
  ).pluck();
  let branch = 'main';
  const fork = database.transaction((node: string | null, activate: boolean) => {
    if (node !== null && nodeExists.get(chatId, node) === undefined) throw new Error('no node');
    const name = nextBranchName(branch, branchNames.all(chatId) as string[]);
    const now = Date.now();
    insertBranch.run(chatId, name, node, now, now);
    touch.run(now, activate ? name : null, chatId);
    if (activate) branch = name;
  });
  const checkpoint = database.transaction((name: string, node: string) => {
    if (nodeExists.get(chatId, node) === undefined) throw new Error('no node');
    const now = Date.now();
    upsertCheckpoint.run(chatId, name, node, now);
    touch.run(now, null, chatId);
  });
  const activate = database.transaction((name: string) => {
    if (branchExists.get(chatId, name) === undefined) throw new Error('no branch');
    touch.run(Date.now(), name, chatId);
    branch = name;
  });
  return {
    rewind: async (nodeId) => fork.immediate(nodeId, true),
    checkpoint: async (name) => checkpoint.immediate(name, head.get(chatId, branch) as string),
    restore: async (name) => fork.immediate(checkpointOf.get(chatId, name) as string, true),
    switchBranch: async (name) => activate.immediate(name),
    btw: async () => fork.immediate(head.get(chatId, branch) as string | null, false),
  };
}

/** Bare postgres.js on the twin store's tables (schema `schema`), the chat row locked per write. */
function postgresFloor(sql: postgres.Sql, schema: string, chatId: string): Floor {
  const t = (name: string) => `"${schema}".ctxgraph_${name}`;
  let branch = 'main';
  const lock = (tx: postgres.TransactionSql, now: number, activate: string | null) =>
    tx.unsafe(
      `UPDATE ${t('chats')} SET updated_at = $2, active_branch = coalesce($3::text, active_branch) WHERE chat_id = $1`,
      [chatId, now, activate],
      { prepare: true },
    );
  const fork = async (node: string | null, activate: boolean) => {
    await sql.begin(async (tx) => {
      const now = Date.now();
      await lock(tx, now, null);
      const [found] = await tx.unsafe(
        `SELECT (SELECT array_agg(name) FROM ${t('branches')} WHERE chat_id = $1) AS names,
           $2::text IS NULL OR EXISTS (SELECT 1 FROM ${t('messages')} WHERE chat_id = $1 AND message_id = $2::text) AS found`,
        [chatId, node],
        { prepare: true },
      );
      if (found?.found !== true) throw new Error('no node');
      const name = nextBranchName(branch, (found.names as string[] | null) ?? []);
      await tx.unsafe(
        `WITH created AS (
           INSERT INTO ${t('branches')} (chat_id, name, head_message_id, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $4) RETURNING 1
         )
         UPDATE ${t('chats')} SET active_branch = $2 WHERE chat_id = $1 AND $5 AND EXISTS (SELECT 1 FROM created)`,
        [chatId, name, node, now, activate],
        { prepare: true },
      );
      if (activate) {
        branch = name;
      }
    });
  };
  const head = async () => {
    const [row] = await sql.unsafe(
      `SELECT head_message_id FROM ${t('branches')} WHERE chat_id = $1 AND name = $2`,
      [chatId, branch],
      { prepare: true },
    );
    return (row?.head_message_id as string | null) ?? null;
  };
  return {
    rewind: (nodeId) => fork(nodeId, true),
    checkpoint: async (name) => {
      const node = await head();
      await sql.begin(async (tx) => {
        const now = Date.now();
        await lock(tx, now, null);
        const rows = await tx.unsafe(
          `INSERT INTO ${t('checkpoints')} (chat_id, name, message_id, created_at)
           SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM ${t('messages')} WHERE chat_id = $1 AND message_id = $3)
           ON CONFLICT (chat_id, name) DO UPDATE SET message_id = excluded.message_id, created_at = excluded.created_at
           RETURNING 1`,
          [chatId, name, node, now],
          { prepare: true },
        );
        if (rows.length === 0) throw new Error('no node');
      });
    },
    restore: async (name) => {
      const [row] = await sql.unsafe(
        `SELECT message_id FROM ${t('checkpoints')} WHERE chat_id = $1 AND name = $2`,
        [chatId, name],
        { prepare: true },
      );
      await fork(row?.message_id as string, true);
    },
    switchBranch: async (name) => {
      const rows = await sql.unsafe(
        `UPDATE ${t('chats')} c SET active_branch = $2, updated_at = $3
         WHERE c.chat_id = $1 AND EXISTS (SELECT 1 FROM ${t('branches')} b WHERE b.chat_id = $1 AND b.name = $2)
         RETURNING 1`,
        [chatId, name, Date.now()],
        { prepare: true },
      );
      if (rows.length === 0) throw new Error('no branch');
      branch = name;
    },
    btw: async () => fork(await head(), false),
  };
}

// ---------------------------------------------------------------------------------------------
// Backends

function memoryBackend(): Backend {
  const store = new InMemoryContextStore();
  const twin = new InMemoryContextStore();
  return {
    name: 'memory',
    store,
    twin,
    floor: async (chatId) => storeCalls(twin, chatId),
    close: async () => {
      await store.close();
      await twin.close();
    },
  };
}

function sqliteBackend(directory: string): Backend {
  const store = new SqliteContextStore(join(directory, 'store.db'));
  const twinPath = join(directory, 'twin.db');
  const twin = new SqliteContextStore({ path: twinPath, tablePrefix: 'floor_' });
  let database: Database.Database | undefined;
  return {
    name: 'SQLite',
    store,
    twin,
    floor: async (chatId) => {
      if (database === undefined) {
        database = new Database(twinPath);
        database.pragma('busy_timeout = 5000');
        database.pragma('journal_mode = WAL');
        database.pragma('synchronous = NORMAL');
        database.pragma('foreign_keys = ON');
      }
      return sqliteFloor(database, chatId);
    },
    close: async () => {
      database?.close();
      await store.close();
      await twin.close();
    },
  };
}

async function postgresBackend(url: string): Promise<Backend> {
  const schema = `o_${randomBytes(6).toString('hex')}`;
  const twinSchema = `${schema}_floor`;
  const store = new PostgresContextStore({ connectionString: url, schema });
  const twin = new PostgresContextStore({ connectionString: url, schema: twinSchema });
  await store.migrate();
  await twin.migrate();
  const sql = postgres(url, { max: 3, onnotice: () => {} });
  return {
    name: 'PostgreSQL',
    store,
    twin,
    floor: async (chatId) => postgresFloor(sql, twinSchema, chatId),
    close: async () => {
      await store.close();
      await twin.close();
      await sql.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
      await sql.unsafe(`DROP SCHEMA "${twinSchema}" CASCADE`);
      await sql.end();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measurements

const CPU_CLOCK = process.env.CLOCK === 'cpu';

/** Milliseconds `task` takes, by the wall clock or (CLOCK=cpu) this process's CPU time. */
async function timed(task: () => Promise<unknown>): Promise<number> {
  if (CPU_CLOCK) {
    const started = process.cpuUsage();
    await task();
    const spent = process.cpuUsage(started);
    return (spent.user + spent.system) / 1000;
  }
  const started = performance.now();
  await task();
  return performance.now() - started;
}

/** Ratio columns: the median of paired ratios, and the ratio of the medians. */
function ratios(engine: readonly number[], floor: readonly number[]): Record<string, string> {
  return {
    'engine ms': median(engine).toFixed(3),
    'floor ms': median(floor).toFixed(3),
    'x floor': median(engine.map((ms, k) => ms / (floor[k] ?? Number.NaN))).toFixed(2),
    'x floor (medians)': (median(engine) / median(floor)).toFixed(2),
  };
}

async function measureBranches(backend: Backend): Promise<Record<string, string>[]> {
  const times: Record<string, Record<'engine' | 'calls' | 'floor', number[]>> = Object.fromEntries(
    OPERATIONS.map((operation) => [operation, { engine: [], calls: [], floor: [] }]),
  );
  // Chat -1 warms the code up and is not counted.
  for (let chat = -1; chat < CHATS; chat += 1) {
    const chatId = `branches-${chat + 1}`;
    await seedChat(backend.store, chatId, 'bench-user', HISTORY);
    await seedChat(backend.store, `${chatId}-calls`, 'bench-user', HISTORY);
    await seedChat(backend.twin, chatId, 'bench-user', HISTORY);
    const floor = await backend.floor(chatId);
    const calls = storeCalls(backend.store, `${chatId}-calls`);
    const engine = new ContextEngine({
      store: backend.store,
      chatId,
      userId: 'bench-user',
      renderer,
    });
    engine.set(role('You are a benchmark.'));
    const { messages } = await engine.resolve();
    if (messages.length !== HISTORY) throw new Error(`resolved ${messages.length} messages`);
    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      const index = HISTORY / 2 + 2 * cycle;
      const target = seedId(chatId, index);
      const ofCalls = seedId(`${chatId}-calls`, index);
      const steps: Record<
        Operation,
        Record<'engine' | 'calls' | 'floor', () => Promise<unknown>>
      > = {
        rewind: {
          engine: () => engine.rewind(target),
          calls: () => calls.rewind(ofCalls),
          floor: () => floor.rewind(target),
        },
        checkpoint: {
          engine: () => engine.checkpoint('bench', { replace: true }),
          calls: () => calls.checkpoint('bench'),
          floor: () => floor.checkpoint('bench'),
        },
        restore: {
          engine: () => engine.restore('bench'),
          calls: () => calls.restore('bench'),
          floor: () => floor.restore('bench'),
        },
        switchBranch: {
          engine: () => engine.switchBranch('main'),
          calls: () => calls.switchBranch('main'),
          floor: () => floor.switchBranch('main'),
        },
        btw: { engine: () => engine.btw(), calls: () => calls.btw(), floor: () => floor.btw() },
      };
      for (const operation of OPERATIONS) {
        // The order turns with the cycle, so drift falls on all three alike.
        const order = (['engine', 'calls', 'floor'] as const).map(
          (_, position, all) =>
            all[(position + cycle) % all.length] as 'engine' | 'calls' | 'floor',
        );
        for (const way of order) {
          const ms = await timed(steps[operation][way]);
          if (chat >= 0) times[operation]?.[way].push(ms);
        }
      }
    }
  }
  return OPERATIONS.map((operation) => {
    const { engine, calls, floor } = times[operation] as Record<
      'engine' | 'calls' | 'floor',
      number[]
    >;
    return {
      store: backend.name,
      operation,
      ...ratios(engine, floor),
      'store calls ms': median(calls).toFixed(3),
      'x store calls': median(engine.map((ms, k) => ms / (calls[k] ?? Number.NaN))).toFixed(2),
    };
  });
}

async function measureColdRead(directory: string): Promise<Record<string, string>[]> {
  const path = join(directory, 'cold.db');
  const seeding = new SqliteContextStore(path);
  await seedChat(seeding, 'cold', 'bench-user', HISTORY);
  await seeding.close();
  const resolveCold = async () => {
    const store = new SqliteContextStore(path);
    const engine = new ContextEngine({ store, chatId: 'cold', userId: 'bench-user', renderer });
    engine.set(role('You are a benchmark.'));
    const { messages } = await engine.resolve();
    if (messages.length !== HISTORY) throw new Error(`resolved ${messages.length} messages`);
    await store.close();
  };
  // Both floors open a connection with the store's settings and read the active branch's head.
  const openFloor = () => {
    const database = new Database(path);
    database.pragma('busy_timeout = 5000');
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    const head = database
      .prepare(
        `SELECT b.head_message_id FROM ctxgraph_chats c JOIN ctxgraph_branches b
           ON b.chat_id = c.id AND b.name = c.active_branch WHERE c.id = ?`,
      )
      .pluck()
      .get('cold') as string;
    return { database, head };
  };
  // The floor: what the store must hand over for each node (a `MessageNodeRecord`: ids, sequence,
  // times, engine record and message), read in the plain way: one recursive statement that
  // selects those columns, each message and engine record parsed.
  const floorCold = async () => {
    const { database, head } = openFloor();
    const rows = database
      .prepare(
        `WITH RECURSIVE chain (id, parent_id, sequence, created_at, updated_at, engine_record, payload, depth) AS (
           SELECT id, parent_id, sequence, created_at, updated_at, engine_record, payload, 1
             FROM ctxgraph_messages WHERE chat_id = @chat AND id = @head
           UNION ALL
           SELECT m.id, m.parent_id, m.sequence, m.created_at, m.updated_at, m.engine_record, m.payload, chain.depth + 1
             FROM chain JOIN ctxgraph_messages m ON m.chat_id = @chat AND m.id = chain.parent_id
         )
         SELECT id, parent_id, sequence, created_at, updated_at, engine_record, payload FROM chain ORDER BY depth DESC`,
      )
      .raw(true)
      .all({ chat: 'cold', head }) as [
      string,
      string | null,
      number,
      number,
      number,
      string | null,
      string,
    ][];
    const nodes = rows.map((row) => ({
      chatId: 'cold',
      id: row[0],
      parentId: row[1],
      sequence: row[2],
      message: JSON.parse(row[6]) as unknown,
      engineRecord: row[5] === null ? null : (JSON.parse(row[5]) as unknown),
      createdAt: row[3],
      updatedAt: row[4],
    }));
    if (nodes.length !== HISTORY) throw new Error(`read ${nodes.length} nodes`);
    database.close();
  };
  // The older, lower floor, kept beside it for comparison with earlier figures: only the
  // messages (no ids, sequence, times or engine records, which the store must return too).
  const payloadFloorCold = async () => {
    const { database, head } = openFloor();
    const rows = database
      .prepare(
        `WITH RECURSIVE chain (id, parent_id, payload, depth) AS (
           SELECT id, parent_id, payload, 1 FROM ctxgraph_messages WHERE chat_id = @chat AND id = @head
           UNION ALL
           SELECT m.id, m.parent_id, m.payload, chain.depth + 1
             FROM chain JOIN ctxgraph_messages m ON m.chat_id = @chat AND m.id = chain.parent_id
         )
         SELECT payload FROM chain ORDER BY depth DESC`,
      )
      .pluck()
      .all({ chat: 'cold', head }) as string[];
    const messages = rows.map((payload) => JSON.parse(payload) as unknown);
    if (messages.length !== HISTORY) throw new Error(`read ${messages.length} messages`);
    database.close();
  };
  const engine: number[] = [];
  const floor: number[] = [];
  const payloadFloor: number[] = [];
  const ways = [resolveCold, floorCold, payloadFloorCold];
  const times = [engine, floor, payloadFloor];
  for (let run = -3; run < COLD_RUNS; run += 1) {
    // The order turns with the run, so drift falls on all three alike.
    for (let step = 0; step < ways.length; step += 1) {
      const way = (step + run + 3) % ways.length;
      const ms = await timed(ways[way] as () => Promise<void>);
      if (run >= 0) times[way]?.push(ms);
    }
  }
  return [
    {
      store: 'SQLite',
      read: `new store handle + first resolve(), ${HISTORY.toLocaleString('en')} messages`,
      ...ratios(engine, floor),
      'payload-only floor ms': median(payloadFloor).toFixed(3),
      'x payload-only floor': median(
        engine.map((ms, k) => ms / (payloadFloor[k] ?? Number.NaN)),
      ).toFixed(2),
    },
  ];
}

async function measureTurns(directory: string): Promise<Record<string, string>[]> {
  const store = new SqliteContextStore(join(directory, 'turns.db'));
  await seedChat(store, 'commits', 'bench-user', HISTORY);
  await seedChat(store, 'saves', 'bench-user', HISTORY);
  const twinPath = join(directory, 'turns-twin.db');
  const twin = new SqliteContextStore({ path: twinPath, tablePrefix: 'floor_' });
  await seedChat(twin, 'floor', 'bench-user', HISTORY);
  await twin.close();
  const database = new Database(twinPath);
  database.pragma('busy_timeout = 5000');
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  const insert = database.prepare(
    'INSERT INTO floor_messages (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const moveHead = database.prepare(
    'UPDATE floor_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ? AND head_message_id IS ?',
  );
  const bump = database.prepare(
    'UPDATE floor_chats SET version = version + 1, updated_at = ? WHERE id = ?',
  );
  let floorHead = database
    .prepare("SELECT head_message_id FROM floor_branches WHERE chat_id = 'floor' AND name = 'main'")
    .pluck()
    .get() as string | null;
  const maxSequence = database
    .prepare('SELECT max(sequence) FROM floor_messages WHERE chat_id = ?')
    .pluck();
  let sequence = 0;
  // The next sequence is read under the write lock, as any store shared by several processes
  // must (another process may have written since); the head is the expected one, checked by the
  // guarded move (a commit's compare-and-set).
  const floorWrite = database.transaction((entries: ReturnType<typeof turn>) => {
    const now = Date.now();
    const expected = floorHead;
    sequence = maxSequence.get('floor') as number;
    for (const entry of entries) {
      sequence += 1;
      insert.run(
        'floor',
        entry.id,
        floorHead,
        sequence,
        entry.message.role,
        JSON.stringify(entry.message),
        now,
        now,
      );
      floorHead = entry.id;
    }
    if (moveHead.run(floorHead, now, 'floor', 'main', expected).changes !== 1)
      throw new Error('floor: the head moved');
    bump.run(now, 'floor');
  });
  let head = (await store.getHead({ chatId: 'commits', branch: 'main' })).headMessageId;
  const engine = new ContextEngine({ store, chatId: 'saves', userId: 'bench-user', renderer });
  engine.set(role('You are a benchmark.'));
  await engine.resolve();
  const times = { commit: [] as number[], save: [] as number[], floor: [] as number[] };
  const warmup = 50;
  for (let run = -warmup; run < TURNS; run += 1) {
    const entries = turn(`c${run}`);
    const floorEntries = turn(`f${run}`);
    const steps = {
      commit: () =>
        timed(async () => {
          const result = await store.commit({
            chatId: 'commits',
            branch: 'main',
            expectedHeadId: head,
            messages: entries,
          });
          head = result.headMessageId;
        }),
      save: () => {
        engine.set(user(`question ${run}`), assistantText(`answer ${run}`));
        return timed(() => engine.save());
      },
      floor: () => timed(async () => floorWrite.immediate(floorEntries)),
    };
    const names = Object.keys(steps) as (keyof typeof steps)[];
    if (run % 2 !== 0) names.reverse();
    for (const name of names) {
      const ms = await steps[name]();
      if (run >= 0) times[name].push(ms);
    }
  }
  database.close();
  await store.close();
  return [
    {
      store: 'SQLite',
      save: 'store.commit (1 turn)',
      ...ratios(times.commit, times.floor),
    },
    {
      store: 'SQLite',
      save: 'engine.save (1 turn)',
      ...ratios(times.save, times.floor),
    },
  ];
}

async function main(): Promise<void> {
  const wanted = new Set(process.argv.slice(2));
  const pick = (names: string[]) => {
    const named = names.filter((name) => wanted.has(name));
    return named.length > 0 ? named : names;
  };
  const stores = pick(['memory', 'sqlite', 'postgres']);
  const sections = pick(['branches', 'cold', 'turns']);
  if (CPU_CLOCK) console.log("Clock: this process's CPU time (CLOCK=cpu).");
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-branch-ops-'));
  try {
    if (sections.includes('branches')) {
      const rows: Record<string, string>[] = [];
      for (const name of stores) {
        let backend: Backend;
        let stop: (() => Promise<void>) | undefined;
        if (name === 'memory') backend = memoryBackend();
        else if (name === 'sqlite') backend = sqliteBackend(directory);
        else {
          const server = await startPostgresServer();
          stop = server.stop;
          backend = await postgresBackend(server.url);
        }
        try {
          rows.push(...(await measureBranches(backend)));
        } finally {
          await backend.close();
          await stop?.();
        }
      }
      console.log(
        `\nBranch operations of a warm engine on a chat of ${HISTORY.toLocaleString('en')} messages, ${CYCLES} cycles (rewind → checkpoint → restore → switchBranch → btw) on each of ${CHATS} chats, median ms. Target: x floor <= 2.`,
      );
      printTable(rows);
    }
    if (sections.includes('cold') && stores.includes('sqlite')) {
      console.log(`\nA new store handle's first read, median ms of ${COLD_RUNS} runs:`);
      printTable(await measureColdRead(directory));
    }
    if (sections.includes('turns') && stores.includes('sqlite')) {
      console.log(
        `\nTurns saved one at a time on a chat of ${HISTORY.toLocaleString('en')} messages, median ms of ${TURNS}. Target: x floor <= 1.5.`,
      );
      printTable(await measureTurns(directory));
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
