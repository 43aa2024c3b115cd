// PostgresContextStore costs against a real PostgreSQL. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/postgres-bench.ts
// Uses DATABASE_URL when it is set; otherwise starts an embedded PostgreSQL under the OS temp
// directory and removes it afterwards (tooling/postgres-server.ts; CTXGRAPH_PGBOUNCER=1 puts
// PgBouncer in front). Everything lives in a random schema that is dropped at the end.
import { randomBytes } from 'node:crypto';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { HeadConflictError, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { printTable, saveRow, seedChat, timeAsync, turn } from './bench-kit.ts';

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

  // Interleaved, one of each per round, so the load of a shared machine hits all three alike.
  const commitTimes: number[] = [];
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
    await floor.append(`floor-${run}`);
    floorTimes.push(performance.now() - started);
    engine.set(user(`question ${run}`), assistantText(`answer ${run}`));
    started = performance.now();
    await engine.save();
    saveTimes.push(performance.now() - started);
  }
  await floor.close();
  await store.close();
  return saveRow(size, { commit: commitTimes, save: saveTimes, floor: floorTimes }, 3);
}

async function measureReads(url: string, schema: string): Promise<Record<string, string>[]> {
  const size = 10_000;
  const seeding = new PostgresContextStore({ connectionString: url, schema });
  await seedChat(seeding, 'reads', 'bench-user', size);
  const head = (await seeding.getHead({ chatId: 'reads', branch: 'main' })).headMessageId as string;
  await seeding.close();

  // Cold: a new store each time (new pool and connection, no prepared statements yet).
  const coldChain = await timeAsync(7, async () => {
    const store = new PostgresContextStore({ connectionString: url, schema });
    const chain = await store.getChain({ chatId: 'reads', headMessageId: head });
    if (chain.nodes.length !== size) throw new Error(`read ${chain.nodes.length} of ${size} nodes`);
    await store.close();
  });
  const coldResolve = await timeAsync(7, async () => {
    const store = new PostgresContextStore({ connectionString: url, schema });
    const engine = new ContextEngine({ store, chatId: 'reads', userId: 'bench-user', renderer });
    engine.set(role('You are a benchmark.'), hint('Be quick.'));
    const { messages } = await engine.resolve();
    if (messages.length !== size)
      throw new Error(`resolved ${messages.length} of ${size} messages`);
    await store.close();
  });

  const store = new PostgresContextStore({ connectionString: url, schema });
  await store.getChain({ chatId: 'reads', headMessageId: head });
  const warmChain = await timeAsync(20, () =>
    store.getChain({ chatId: 'reads', headMessageId: head }),
  );
  const pageChain = await timeAsync(50, () =>
    store.getChain({ chatId: 'reads', headMessageId: head, limit: 50 }),
  );
  const warmHead = await timeAsync(200, () => store.getHead({ chatId: 'reads', branch: 'main' }));
  const engine = new ContextEngine({ store, chatId: 'reads', userId: 'bench-user', renderer });
  engine.set(role('You are a benchmark.'), hint('Be quick.'));
  await engine.resolve();
  const warmResolve = await timeAsync(50, () => engine.resolve());
  await store.close();
  return [
    { read: 'getChain, whole chain', cold: coldChain.toFixed(2), warm: warmChain.toFixed(2) },
    { read: 'getChain, newest 50', cold: '-', warm: pageChain.toFixed(3) },
    { read: 'engine.resolve()', cold: coldResolve.toFixed(2), warm: warmResolve.toFixed(3) },
    { read: 'getHead', cold: '-', warm: warmHead.toFixed(3) },
  ];
}

/** 8 writers (8 store objects of one connection each, like 8 servers) each committing `turns` turns. */
async function storeWriters(
  url: string,
  schema: string,
  chatIds: readonly string[],
  turns: number,
) {
  const writers = chatIds.length;
  const stores = Array.from(
    { length: writers },
    () => new PostgresContextStore({ connectionString: url, schema, connection: { max: 1 } }),
  );
  for (const chatId of new Set(chatIds))
    await stores[0]?.openChat({ chatId, userId: 'bench-user' });
  await Promise.all(
    stores.map((store) => store.getHead({ chatId: chatIds[0] as string, branch: 'main' })),
  );
  let conflicts = 0;
  const started = performance.now();
  await Promise.all(
    stores.map(async (store, writer) => {
      const chatId = chatIds[writer] as string;
      for (let index = 0; index < turns; index += 1) {
        for (;;) {
          const head = await store.getHead({ chatId, branch: 'main' });
          try {
            await store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: head.headMessageId,
              messages: turn(`w${writer}-${index}`),
            });
            break;
          } catch (error) {
            if (!HeadConflictError.isInstance(error)) throw error;
            conflicts += 1;
          }
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  let lost = 0;
  let duplicates = 0;
  for (const chatId of new Set(chatIds)) {
    const head = await stores[0]?.getHead({ chatId, branch: 'main' });
    const chain = await stores[0]?.getChain({
      chatId,
      headMessageId: head?.headMessageId as string,
    });
    const ids = new Set(chain?.nodes.map((node) => node.id));
    duplicates += (chain?.nodes.length ?? 0) - ids.size;
    chatIds.forEach((writerChat, writer) => {
      if (writerChat !== chatId) return;
      for (let index = 0; index < turns; index += 1) {
        if (!ids.has(`w${writer}-${index}-user`) || !ids.has(`w${writer}-${index}-reply`))
          lost += 1;
      }
    });
  }
  await Promise.all(stores.map((store) => store.close()));
  return { turnsPerSecond: (writers * turns) / seconds, conflicts, lost, duplicates };
}

/**
 * The floor for concurrent writers: a bare transaction per turn that locks the branch row
 * (SELECT … FOR UPDATE, so writers queue instead of retrying), inserts the two rows and moves the head.
 */
async function floorWriters(
  url: string,
  schema: string,
  chatIds: readonly string[],
  turns: number,
) {
  const writers = chatIds.length;
  const clients = Array.from({ length: writers }, () =>
    postgres(url, { max: 1, onnotice: () => {} }),
  );
  const admin = clients[0] as postgres.Sql;
  const tables = {
    chats: admin(`${schema}.ctxgraph_chats`),
    messages: admin(`${schema}.ctxgraph_messages`),
    branches: admin(`${schema}.ctxgraph_branches`),
  };
  const now = Date.now();
  for (const chatId of new Set(chatIds)) {
    await admin`INSERT INTO ${tables.chats} (chat_id, user_id, active_branch, created_at, updated_at) VALUES (${chatId}, 'bench-user', 'main', ${now}, ${now})`;
    await admin`INSERT INTO ${tables.branches} (chat_id, name, created_at, updated_at) VALUES (${chatId}, 'main', ${now}, ${now})`;
  }
  await Promise.all(clients.map((client) => client`SELECT 1`));
  const started = performance.now();
  await Promise.all(
    clients.map(async (sql, writer) => {
      const chatId = chatIds[writer] as string;
      for (let index = 0; index < turns; index += 1) {
        await sql.begin(async (transaction) => {
          const [branch] =
            await transaction`SELECT head_message_id FROM ${tables.branches} WHERE chat_id = ${chatId} AND name = 'main' FOR UPDATE`;
          const [last] =
            await transaction`SELECT coalesce(max(sequence), 0)::int AS sequence FROM ${tables.messages} WHERE chat_id = ${chatId}`;
          let parent = (branch?.head_message_id as string | null) ?? null;
          let sequence = Number(last?.sequence ?? 0);
          const rows = turn(`w${writer}-${index}`).map((entry) => {
            sequence += 1;
            const row = {
              chat_id: chatId,
              message_id: entry.id,
              parent_id: parent,
              sequence,
              role: entry.message.role,
              message: JSON.stringify(entry.message),
              created_at: now,
              updated_at: now,
            };
            parent = entry.id;
            return row;
          });
          await transaction`INSERT INTO ${tables.messages} ${transaction(rows)}`;
          await transaction`UPDATE ${tables.branches} SET head_message_id = ${parent}, updated_at = ${now} WHERE chat_id = ${chatId} AND name = 'main'`;
        });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((client) => client.end()));
  return (writers * turns) / seconds;
}

async function measureConcurrency(url: string, schema: string): Promise<Record<string, string>[]> {
  const turns = 150;
  const writers = 8;
  const rows: Record<string, string>[] = [];
  for (const layout of ['one chat', '8 chats'] as const) {
    const tag = layout === 'one chat' ? 'shared' : 'separate';
    const chatIds = Array.from({ length: writers }, (_, writer) =>
      layout === 'one chat' ? `${tag}` : `${tag}-${writer}`,
    );
    const measured = await storeWriters(url, schema, chatIds, turns);
    const floor = await floorWriters(
      url,
      schema,
      chatIds.map((chatId) => `floor-${chatId}`),
      turns,
    );
    rows.push({
      writers: `${writers} on ${layout}`,
      'store turns/s': measured.turnsPerSecond.toFixed(0),
      'floor turns/s': floor.toFixed(0),
      'floor / store': (floor / measured.turnsPerSecond).toFixed(2),
      'conflicts retried': String(measured.conflicts),
      'lost turns': String(measured.lost),
      duplicates: String(measured.duplicates),
    });
  }
  return rows;
}

async function main(): Promise<void> {
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
        `10,000 vs 100 messages of history: commit ${growth('store.commit (1 turn)')}x, engine.save ${growth('engine.save (1 turn)')}x (target: flat); commit within 2x of the floor: ${rows.every((row) => Number(row['commit / floor']) <= 2) ? 'yes' : 'no'}`,
      );
    }
    console.log('\nReads of a 10,000-message chat, median milliseconds');
    printTable(await measureReads(server.url, schema));
    console.log(
      '\nConcurrent writers (each: read head, commit, on HeadConflictError re-read and retry)',
    );
    printTable(await measureConcurrency(server.url, schema));
  } finally {
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
    await server.stop();
  }
}

await main();
