// searchMessages latency on SQLite and PostgreSQL: 100,000 messages across 1,000 chats (100
// users with 10 chats each; every chat a main branch of 80 messages and a fork of 20 more),
// searched scoped to one branch, one chat and one user, against a bare-driver floor measured in
// the same run: the plain full-text match, ids only, filtered by chat or user in SQL (no branch
// walk, no JSON, no snippets, no branches per hit). On SQLite the store goes under that floor:
// it ANDs the words with the chat's or user's scope token in the FTS5 index, which the plain
// match cannot. The index is built on the first search of each user, timed apart. Prints
// figures; asserts nothing.
//   cd benchmarks && node --import tsx src/search-bench.ts [sqlite|postgres]
// PostgreSQL: DATABASE_URL, or an embedded server (tooling/postgres-server.ts); a random schema,
// dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore, SearchMessagesInput } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { median, printTable } from './bench-helpers.ts';

const USERS = 100;
const CHATS_PER_USER = 10;
const MAIN_LENGTH = 80;
const FORK_LENGTH = 20;
const QUERIES = 60;

// A deterministic word stream: a vocabulary of 2,000 made-up words drawn with a skewed
// (roughly Zipf) distribution, so some words are in most chats and others in a few messages.
let randomState = 42;
function random(): number {
  randomState = (randomState * 1_103_515_245 + 12_345) % 2_147_483_648;
  return randomState / 2_147_483_648;
}
const syllables = ['ka', 'lo', 'mi', 'ra', 'te', 'su', 'no', 'vi', 'de', 'pa', 'zu', 'he'];
const vocabulary = Array.from({ length: 2_000 }, (_, index) => {
  let word = '';
  let rest = index + 1;
  while (rest > 0) {
    word += syllables[rest % syllables.length];
    rest = Math.floor(rest / syllables.length);
  }
  return word;
});
function word(): string {
  return vocabulary[Math.floor(vocabulary.length * random() ** 3)] as string;
}
function sentence(length: number): string {
  return Array.from({ length }, word).join(' ');
}

/** The queries: a common word, a mid-frequency word, two words. */
const queryKinds: readonly [string, () => string][] = [
  ['common word', () => vocabulary[Math.floor(random() * 5)] as string],
  ['rarer word', () => vocabulary[200 + Math.floor(random() * 200)] as string],
  [
    'two words',
    () => `${vocabulary[Math.floor(random() * 20)]} ${vocabulary[Math.floor(random() * 60)]}`,
  ],
];

function messages(prefix: string, from: number, count: number) {
  return Array.from({ length: count }, (_, index) => {
    const id = `${prefix}-${from + index}`;
    const role = (from + index) % 2 === 0 ? 'user' : 'assistant';
    return {
      id,
      message: {
        id,
        role,
        parts: [{ type: 'text', text: sentence(12 + Math.floor(random() * 30)) }],
      },
    };
  });
}

async function seedStore(store: ContextStore): Promise<void> {
  for (let user = 0; user < USERS; user += 1) {
    for (let chat = 0; chat < CHATS_PER_USER; chat += 1) {
      const chatId = `c-${user}-${chat}`;
      await store.openChat({ chatId, userId: `u-${user}` });
      const main = await store.commit({
        chatId,
        branch: 'main',
        expectedHeadId: null,
        messages: messages(chatId, 0, MAIN_LENGTH),
      });
      const forkAt = `${chatId}-${MAIN_LENGTH / 2 - 1}`;
      await store.createBranch({ chatId, name: 'fork', headMessageId: forkAt });
      await store.commit({
        chatId,
        branch: 'fork',
        expectedHeadId: forkAt,
        messages: messages(`${chatId}-f`, 0, FORK_LENGTH),
      });
      if (main.headMessageId === null) throw new Error('seeding failed');
    }
  }
}

/**
 * The index is built lazily, on the first search of a chat: one search per user indexes every
 * chat, timed here, so the latencies below are those of a warm index.
 */
async function indexEveryUser(store: ContextStore, label: string): Promise<void> {
  const started = performance.now();
  for (let user = 0; user < USERS; user += 1)
    await store.searchMessages?.({ userId: `u-${user}`, query: 'zzzabsent' });
  console.log(
    `${label}: the first search of each user indexed ${USERS * CHATS_PER_USER * (MAIN_LENGTH + FORK_LENGTH)} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

type Scope = 'branch' | 'chat' | 'user';

function input(scope: Scope, query: string): SearchMessagesInput {
  const user = Math.floor(random() * USERS);
  const chatId = `c-${user}-${Math.floor(random() * CHATS_PER_USER)}`;
  return {
    userId: `u-${user}`,
    query,
    ...(scope === 'user' ? {} : { chatId }),
    ...(scope === 'branch' ? { branch: 'fork' } : {}),
  };
}

type Floor = (search: SearchMessagesInput) => Promise<number>;

async function measure(
  store: ContextStore,
  floor: Floor,
  label: string,
): Promise<Record<string, string>[]> {
  const search = store.searchMessages;
  if (search === undefined) throw new Error(`${label} cannot search`);
  const rows: Record<string, string>[] = [];
  for (const scope of ['branch', 'chat', 'user'] as const) {
    for (const [kind, makeQuery] of queryKinds) {
      const storeTimes: number[] = [];
      const floorTimes: number[] = [];
      let hits = 0;
      // Warm-up, then interleaved runs so both see the same cache state.
      for (let run = -5; run < QUERIES; run += 1) {
        const request = input(scope, makeQuery());
        let started = performance.now();
        const page = await search.call(store, request);
        const storeMs = performance.now() - started;
        started = performance.now();
        await floor(request);
        const floorMs = performance.now() - started;
        if (run < 0) continue;
        storeTimes.push(storeMs);
        floorTimes.push(floorMs);
        hits += page.items.length;
      }
      const storeMedian = median(storeTimes);
      const floorMedian = median(floorTimes);
      const sorted = [...storeTimes].sort((left, right) => left - right);
      rows.push({
        store: label,
        scope,
        query: kind,
        'hits/page': (hits / QUERIES).toFixed(1),
        'search p50 ms': storeMedian.toFixed(2),
        'search p95 ms': (sorted[Math.floor(sorted.length * 0.95)] ?? 0).toFixed(2),
        'floor p50 ms': floorMedian.toFixed(2),
        'search / floor': (storeMedian / floorMedian).toFixed(2),
      });
    }
  }
  return rows;
}

async function sqlite(): Promise<Record<string, string>[]> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-search-bench-'));
  const path = join(directory, 'search.db');
  const store = new SqliteContextStore(path);
  const database = new Database(path);
  try {
    const started = performance.now();
    await seedStore(store);
    console.log(
      `SQLite: seeded ${USERS * CHATS_PER_USER * (MAIN_LENGTH + FORK_LENGTH)} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    await indexEveryUser(store, 'SQLite');
    database.exec('ANALYZE');
    const byChat = database.prepare(
      `SELECT m.id FROM ctxgraph_message_search s JOIN ctxgraph_messages m ON m.rowid = s.rowid
       WHERE ctxgraph_message_search MATCH ? AND m.chat_id = ? ORDER BY bm25(ctxgraph_message_search) LIMIT 21`,
    );
    const byUser = database.prepare(
      `SELECT m.id FROM ctxgraph_message_search s JOIN ctxgraph_messages m ON m.rowid = s.rowid
       JOIN ctxgraph_chats c ON c.id = m.chat_id
       WHERE ctxgraph_message_search MATCH ? AND c.user_id = ? ORDER BY bm25(ctxgraph_message_search) LIMIT 21`,
    );
    const match = (query: string) =>
      query
        .split(' ')
        .map((term) => `body : "${term}"`)
        .join(' ');
    return await measure(
      store,
      async (request) =>
        request.chatId === undefined
          ? byUser.all(match(request.query), request.userId).length
          : byChat.all(match(request.query), request.chatId).length,
      'SQLite',
    );
  } finally {
    database.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function postgresStore(): Promise<Record<string, string>[]> {
  const server = await startPostgresServer();
  const schema = `s_${randomBytes(6).toString('hex')}`;
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  try {
    const started = performance.now();
    await seedStore(store);
    console.log(
      `PostgreSQL: seeded ${USERS * CHATS_PER_USER * (MAIN_LENGTH + FORK_LENGTH)} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    await indexEveryUser(store, 'PostgreSQL');
    await admin.unsafe(
      `ANALYZE "${schema}".ctxgraph_messages, "${schema}".ctxgraph_chats, "${schema}".ctxgraph_search_words`,
    );
    const wordsTable = `"${schema}".ctxgraph_search_words`;
    const chatsTable = `"${schema}".ctxgraph_chats`;
    return await measure(
      store,
      async (request) => {
        const rows =
          request.chatId === undefined
            ? await admin.unsafe(
                `SELECT w.message_id FROM ${wordsTable} w
                 WHERE w.words @> string_to_array($1, ' ') AND w.chat_id IN (SELECT chat_id FROM ${chatsTable} WHERE user_id = $2)
                 ORDER BY cardinality(w.words) LIMIT 21`,
                [request.query, request.userId],
              )
            : await admin.unsafe(
                `SELECT w.message_id FROM ${wordsTable} w
                 WHERE w.words @> string_to_array($1, ' ') AND w.chat_id = $2
                 ORDER BY cardinality(w.words) LIMIT 21`,
                [request.query, request.chatId],
              );
        return rows.length;
      },
      'PostgreSQL',
    );
  } finally {
    await store.close();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
    await server.stop();
  }
}

const wanted = new Set(process.argv.slice(2));
const rows: Record<string, string>[] = [];
if (wanted.size === 0 || wanted.has('sqlite')) rows.push(...(await sqlite()));
if (wanted.size === 0 || wanted.has('postgres')) rows.push(...(await postgresStore()));
console.log(
  `\nsearchMessages, ${USERS * CHATS_PER_USER * (MAIN_LENGTH + FORK_LENGTH)} messages in ${USERS * CHATS_PER_USER} chats (${CHATS_PER_USER} per user), page of 20, ${QUERIES} queries per row (random users and chats), interleaved with the floor:`,
);
printTable(rows);
