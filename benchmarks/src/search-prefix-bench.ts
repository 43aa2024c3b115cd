// Prefix search (`searchMessages({ prefix: true })`, search as you type) against whole-word
// search, on SQLite and PostgreSQL: one user with 10,000 messages, one chat of 10,000 and, for
// the user scope, 9 more chats of 1,000. Queries: a 1-, 2- and 3-letter prefix (many words start
// with them), a 5-letter one, a whole word typed so far, and two words with the second a prefix.
// The index is built by a first search, timed apart. Prints median figures; asserts nothing.
//   cd benchmarks && node --import tsx src/search-prefix-bench.ts [sqlite|postgres]
// PostgreSQL: DATABASE_URL, or an embedded server (tooling/postgres-server.ts); a random schema,
// dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore, SearchMessagesInput } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { median, printTable } from './bench-helpers.ts';

const BIG_CHAT = 10_000;
const SMALL_CHATS = 9;
const SMALL_CHAT = 1_000;
const RUNS = 30;

let randomState = 7;
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
const sentence = (length: number): string =>
  Array.from(
    { length },
    () => vocabulary[Math.floor(vocabulary.length * random() ** 3)] as string,
  ).join(' ');

async function seed(store: ContextStore): Promise<void> {
  const chats: [string, number][] = [['big', BIG_CHAT]];
  for (let index = 0; index < SMALL_CHATS; index += 1) chats.push([`small-${index}`, SMALL_CHAT]);
  for (const [chatId, length] of chats) {
    await store.openChat({ chatId, userId: 'u' });
    let head: string | null = null;
    for (let from = 0; from < length; from += 500) {
      const result = await store.commit({
        chatId,
        branch: 'main',
        expectedHeadId: head,
        messages: Array.from({ length: 500 }, (_, index) => {
          const id = `${chatId}-${from + index}`;
          return {
            id,
            message: {
              id,
              role: index % 2 === 0 ? 'user' : 'assistant',
              parts: [{ type: 'text', text: sentence(12 + Math.floor(random() * 30)) }],
            },
          };
        }),
      });
      head = result.headMessageId;
    }
  }
}

const queries: readonly [string, string, boolean][] = [
  ['1-letter prefix', 'k', true],
  ['2-letter prefix', 'ka', true],
  ['3-letter prefix', 'kal', true],
  ['5-letter prefix', (vocabulary[300] as string).slice(0, 5), true],
  ['whole word, as prefix', vocabulary[300] as string, true],
  ['whole word, whole-word search', vocabulary[300] as string, false],
  ['word + 2-letter prefix', `${vocabulary[3]} mi`, true],
];

async function measure(store: ContextStore, label: string): Promise<Record<string, string>[]> {
  const search = store.searchMessages;
  if (search === undefined) throw new Error(`${label} cannot search`);
  let started = performance.now();
  await search.call(store, { userId: 'u', query: 'zzzabsent' });
  console.log(
    `${label}: the first search indexed ${BIG_CHAT + SMALL_CHATS * SMALL_CHAT} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const rows: Record<string, string>[] = [];
  for (const scope of ['chat of 10,000', 'user (19,000)'] as const) {
    for (const [kind, query, prefix] of queries) {
      const request: SearchMessagesInput = {
        userId: 'u',
        query,
        prefix,
        ...(scope === 'chat of 10,000' ? { chatId: 'big' } : {}),
      };
      const times: number[] = [];
      let hits = 0;
      for (let run = -3; run < RUNS; run += 1) {
        started = performance.now();
        const page = await search.call(store, request);
        if (run >= 0) times.push(performance.now() - started);
        hits = page.items.length;
      }
      rows.push({
        store: label,
        scope,
        query: `${kind} ("${query}")`,
        'hits on page 1': String(hits),
        'median ms': median(times).toFixed(2),
      });
    }
  }
  return rows;
}

async function sqlite(): Promise<Record<string, string>[]> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-prefix-'));
  const store = new SqliteContextStore(join(directory, 'bench.db'));
  try {
    await seed(store);
    return await measure(store, 'SQLite');
  } finally {
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function postgresStore(): Promise<Record<string, string>[]> {
  const server = await startPostgresServer();
  const schema = `s_${randomBytes(6).toString('hex')}`;
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  try {
    await seed(store);
    return await measure(store, 'PostgreSQL');
  } finally {
    await store.close();
    const { default: postgres } = await import('postgres');
    const admin = postgres(server.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
    await server.stop();
  }
}

const wanted = new Set(process.argv.slice(2));
const rows: Record<string, string>[] = [];
if (wanted.size === 0 || wanted.has('sqlite')) rows.push(...(await sqlite()));
if (wanted.size === 0 || wanted.has('postgres')) rows.push(...(await postgresStore()));
printTable(rows);
