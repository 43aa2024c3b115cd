// What search costs an app (issue #23), on SQLite and PostgreSQL, against bare-driver floors
// measured in the same run, interleaved run by run. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/search-cost-bench.ts [sqlite] [postgres] [saves] [branches]
// PostgreSQL: DATABASE_URL, or an embedded server (tooling/postgres-server.ts); a random schema,
// dropped at the end. BATCH_RUNS (15) and TURN_RUNS (200) set the number of measured runs.
//
// - Saves, for an app that never searches: one 10,000-message save and a per-turn save (two
//   messages on a 1,000-message chat), store against the bare floor: the same rows inserted, the
//   head moved where it is still the expected one (compare-and-set) and the chat's version
//   bumped, nothing else: what the contract obliges any store's commit to do, done the cheapest
//   way (the head and the next sequence known in memory, no read of its own).
// - Saves, for an app that searches: the same save followed by a search of the chat (the first
//   search indexes what is new, its catch-up; once a store has searched a chat, its saves index
//   with the write and the search has nothing left to do), against an indexing floor that writes the
//   same rows plus the same index entries (the same words, computed in JavaScript as the store
//   does) in the save's own transaction. The search looks for a word no message holds, so its
//   own query costs next to nothing and the figure is the catch-up.
// - Branches: a chat where every reply was regenerated once (one branch per turn) at 40, 80 and
//   160 turns, one search of a word every message holds (a page of 100 hits, each with the
//   branches that reach it): the cost must grow at most linearly with the chat.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore, StoredMessage } from '@ctxgraph/fragments-core';
import { messageSearchText, searchTokens } from '@ctxgraph/fragments-core/store-kit';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { migrateSqliteDatabase, SqliteContextStore } from '@ctxgraph/store-sqlite';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { startPostgresServer } from '../../tooling/postgres-server.ts';
import { median, printTable, seedChat, turn } from './bench-helpers.ts';

const BATCH = 10_000;
const BATCH_RUNS = Number(process.env.BATCH_RUNS ?? 15);
const TURN_HISTORY = 1_000;
const TURN_RUNS = Number(process.env.TURN_RUNS ?? 200);
const WARMUP = 30;

type Entry = { id: string; message: StoredMessage };

function batch(tag: string): Entry[] {
  return Array.from({ length: BATCH }, (_, index) => {
    const id = `${tag}-${index}`;
    const role = index % 2 === 0 ? 'user' : 'assistant';
    return {
      id,
      message: {
        id,
        role,
        parts: [
          {
            type: 'text',
            text: `${role} message ${index} about jane.doe@example.com, version 1.2.${index % 10} and a few more words`,
          },
        ],
      },
    };
  });
}

/** The words the store indexes for a message, as it computes them. */
function words(message: StoredMessage): string[] {
  return searchTokens(messageSearchText(message));
}

interface Floors {
  /** Writes the entries as the next messages of chat `chatId` (created on first use). */
  readonly write: (chatId: string, entries: readonly Entry[], indexed: boolean) => Promise<void>;
  readonly close: () => Promise<void>;
}

interface Subject {
  readonly name: string;
  readonly store: ContextStore;
  readonly floors: Floors;
  readonly close: () => Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// SQLite

/**
 * Bare better-sqlite3 on the store's own schema (prefix `floor_`): one IMMEDIATE transaction
 * that inserts the rows, moves the head if it is still the expected one and bumps the chat's
 * version; indexed, it also writes each message's words into
 * an FTS5 table of the store's definition (` w1  w2 `, scope tokens, word count).
 */
function sqliteFloors(path: string): Floors {
  const database = new Database(path);
  database.pragma('busy_timeout = 5000');
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  migrateSqliteDatabase(database, { tablePrefix: 'floor_' });
  const insert = database.prepare(
    'INSERT INTO floor_messages (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const index = database.prepare(
    'INSERT INTO floor_message_search (rowid, body, scope, words) VALUES (?, ?, ?, ?)',
  );
  // The head moves only where it still is the head the write expects (the compare-and-set every
  // commit makes, in its own transaction), and the chat's version goes up by one: what the
  // contract obliges any store to do on a commit, at its cheapest (no read of its own).
  const moveHead = database.prepare(
    'UPDATE floor_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ? AND head_message_id IS ?',
  );
  const bumpVersion = database.prepare(
    'UPDATE floor_chats SET version = version + 1, updated_at = ? WHERE id = ?',
  );
  const chats = new Map<string, { head: string | null; sequence: number }>();
  const write = database.transaction((chatId: string, entries: readonly Entry[], indexed) => {
    const now = Date.now();
    let chat = chats.get(chatId);
    if (chat === undefined) {
      database
        .prepare('INSERT INTO floor_chats VALUES (?, ?, NULL, ?, ?, 0, 0, ?, ?)')
        .run(chatId, 'u', '{}', 'main', now, now);
      database
        .prepare('INSERT INTO floor_branches VALUES (?, ?, NULL, ?, ?)')
        .run(chatId, 'main', now, now);
      chat = { head: null, sequence: 0 };
      chats.set(chatId, chat);
    }
    const scope = `c${Buffer.from(chatId).toString('hex')} u75`;
    const expected = chat.head;
    for (const entry of entries) {
      chat.sequence += 1;
      const { lastInsertRowid } = insert.run(
        chatId,
        entry.id,
        chat.head,
        chat.sequence,
        entry.message.role,
        JSON.stringify(entry.message),
        now,
        now,
      );
      if (indexed) {
        const tokens = words(entry.message);
        index.run(lastInsertRowid, ` ${tokens.join('  ')} `, scope, tokens.length);
      }
      chat.head = entry.id;
    }
    if (moveHead.run(chat.head, now, chatId, 'main', expected).changes !== 1)
      throw new Error('floor: the head moved');
    bumpVersion.run(now, chatId);
  });
  return {
    write: async (chatId, entries, indexed) => {
      write.immediate(chatId, entries, indexed);
    },
    close: async () => {
      database.close();
    },
  };
}

async function sqliteSubject(): Promise<Subject> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-search-cost-'));
  const store = new SqliteContextStore(join(directory, 'store.db'));
  const floors = sqliteFloors(join(directory, 'floor.db'));
  return {
    name: 'SQLite',
    store,
    floors,
    close: async () => {
      await store.close();
      await floors.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/**
 * Bare postgres.js on the store's own tables in the same schema: one transaction that inserts
 * the rows (one `unnest` statement), then moves the head if it is still the expected one and
 * bumps the chat's version (one statement); indexed, it also inserts each message's
 * words into `search_words` in the same transaction.
 */
function postgresFloors(url: string, schema: string): Floors {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  const t = (name: string) => `"${schema}".ctxgraph_${name}`;
  const chats = new Map<string, { head: string | null; sequence: number }>();
  return {
    write: async (chatId, entries, indexed) => {
      const now = Date.now();
      let chat = chats.get(chatId);
      if (chat === undefined) {
        await sql.unsafe(
          `INSERT INTO ${t('chats')} (chat_id, user_id, active_branch, created_at, updated_at) VALUES ($1, 'u', 'main', $2, $2)`,
          [chatId, now],
        );
        await sql.unsafe(
          `INSERT INTO ${t('branches')} (chat_id, name, created_at, updated_at) VALUES ($1, 'main', $2, $2)`,
          [chatId, now],
        );
        chat = { head: null, sequence: 0 };
        chats.set(chatId, chat);
      }
      const state = chat;
      const expected = chat.head;
      const ids: string[] = [];
      const parents: (string | null)[] = [];
      const sequences: string[] = [];
      const roles: string[] = [];
      const bodies: string[] = [];
      const texts: string[] = [];
      for (const entry of entries) {
        state.sequence += 1;
        ids.push(entry.id);
        parents.push(state.head);
        sequences.push(String(state.sequence));
        roles.push(entry.message.role);
        bodies.push(JSON.stringify(entry.message));
        if (indexed) texts.push(words(entry.message).join(' '));
        state.head = entry.id;
      }
      await sql.begin(async (transaction) => {
        await transaction.unsafe(
          `INSERT INTO ${t('messages')} (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
           SELECT $1, r.id, r.parent, r.sequence, r.role, r.body::json, $7, $7
           FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[]) AS r(id, parent, sequence, role, body)`,
          [chatId, ids, parents as string[], sequences, roles, bodies, now],
        );
        if (indexed)
          await transaction.unsafe(
            `INSERT INTO ${t('search_words')} (chat_id, message_id, words, stamp)
             SELECT $1, r.id, string_to_array(r.words, ' '), 0 FROM unnest($2::text[], $3::text[]) AS r(id, words)`,
            [chatId, ids, texts],
          );
        const moved = await transaction.unsafe(
          `WITH gate AS (
             UPDATE ${t('branches')} SET head_message_id = $1, updated_at = $2
              WHERE chat_id = $3 AND name = 'main' AND head_message_id IS NOT DISTINCT FROM $4::text
             RETURNING chat_id)
           UPDATE ${t('chats')} c SET version = c.version + 1, updated_at = $2 FROM gate WHERE c.chat_id = gate.chat_id`,
          [state.head, now, chatId, expected],
        );
        if (moved.count !== 1) throw new Error('floor: the head moved');
      });
    },
    close: () => sql.end(),
  };
}

async function postgresSubject(): Promise<Subject> {
  const server = await startPostgresServer();
  const schema = `sc_${randomBytes(6).toString('hex')}`;
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  await store.migrate();
  const floors = postgresFloors(server.url, schema);
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  return {
    name: 'PostgreSQL',
    store,
    floors,
    close: async () => {
      await store.close();
      await floors.close();
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await admin.end();
      await server.stop();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The measurements

async function commitAll(store: ContextStore, chatId: string, entries: Entry[]): Promise<void> {
  const head = await store.getHead({ chatId, branch: 'main' });
  await store.commit({
    chatId,
    branch: 'main',
    expectedHeadId: head.headMessageId,
    messages: entries,
  });
}

function search(store: ContextStore, chatId: string, query: string, limit = 20) {
  const method = store.searchMessages;
  if (method === undefined) throw new Error('the store cannot search');
  return method.call(store, { userId: 'u', chatId, query, limit });
}

/** Ratios to the floors of one kind of save, for an app that never searches and one that does. */
function saveRow(save: string, times: Times): Record<string, string> {
  const floor = median(times.floor);
  const commit = median(times.commit);
  const indexFloor = median(times.indexFloor);
  const searched = median(times.searched);
  const searchOnly = median(times.searchOnly);
  // The save's share of the searching app's cost: its save and the search, less the same
  // search once nothing is left to catch up (the query the app asked for, not indexing).
  const indexed = searched - searchOnly;
  return {
    save,
    'floor ms': floor.toFixed(3),
    'store ms (never searches)': commit.toFixed(3),
    'x floor': (commit / floor).toFixed(2),
    'index floor ms': indexFloor.toFixed(3),
    'save + search ms': searched.toFixed(3),
    'search alone ms': searchOnly.toFixed(3),
    'save + catch-up ms': indexed.toFixed(3),
    'x index floor': (indexed / indexFloor).toFixed(2),
  };
}

interface Times {
  readonly floor: number[];
  readonly commit: number[];
  readonly indexFloor: number[];
  readonly searched: number[];
  readonly searchOnly: number[];
}

function times(): Times {
  return { floor: [], commit: [], indexFloor: [], searched: [], searchOnly: [] };
}

async function measureSaves(subject: Subject): Promise<Record<string, string>[]> {
  const { store, floors } = subject;
  const rows: Record<string, string>[] = [];
  // One 10,000-message save into a new chat, each run.
  const big = times();
  for (let run = -1; run < BATCH_RUNS; run += 1) {
    const entries = batch(`b${run + 1}`);
    const quiet = `big-quiet-${run + 1}`;
    const searching = `big-search-${run + 1}`;
    await store.openChat({ chatId: quiet, userId: 'u' });
    await store.openChat({ chatId: searching, userId: 'u' });
    let started = performance.now();
    await floors.write(`floor-${run + 1}`, entries, false);
    const floorMs = performance.now() - started;
    started = performance.now();
    await commitAll(store, quiet, entries);
    const commitMs = performance.now() - started;
    started = performance.now();
    await floors.write(`index-floor-${run + 1}`, entries, true);
    const indexFloorMs = performance.now() - started;
    started = performance.now();
    await commitAll(store, searching, batch(`s${run + 1}`));
    await search(store, searching, 'zzzabsent');
    const searchedMs = performance.now() - started;
    started = performance.now();
    await search(store, searching, 'zzzabsent');
    const searchOnlyMs = performance.now() - started;
    if (run < 0) continue;
    big.searchOnly.push(searchOnlyMs);
    big.floor.push(floorMs);
    big.commit.push(commitMs);
    big.indexFloor.push(indexFloorMs);
    big.searched.push(searchedMs);
  }
  rows.push(saveRow(`one save of ${BATCH.toLocaleString('en')} messages`, big));

  // A turn (two messages) on a chat of 1,000 messages, the searching app searching after each.
  await seedChat(store, 'turn-quiet', 'u', TURN_HISTORY);
  await seedChat(store, 'turn-search', 'u', TURN_HISTORY);
  await search(store, 'turn-search', 'zzzabsent');
  const history = (tag: string): Entry[] => batch(tag).slice(0, TURN_HISTORY);
  await floors.write('turn-floor', history('hf'), false);
  await floors.write('turn-index-floor', history('hi'), true);
  const small = times();
  for (let run = 0; run < WARMUP + TURN_RUNS; run += 1) {
    let started = performance.now();
    await floors.write('turn-floor', turn(`f${run}`), false);
    const floorMs = performance.now() - started;
    started = performance.now();
    await commitAll(store, 'turn-quiet', turn(`q${run}`));
    const commitMs = performance.now() - started;
    started = performance.now();
    await floors.write('turn-index-floor', turn(`i${run}`), true);
    const indexFloorMs = performance.now() - started;
    started = performance.now();
    await commitAll(store, 'turn-search', turn(`s${run}`));
    await search(store, 'turn-search', 'zzzabsent');
    const searchedMs = performance.now() - started;
    started = performance.now();
    await search(store, 'turn-search', 'zzzabsent');
    const searchOnlyMs = performance.now() - started;
    if (run < WARMUP) continue;
    small.searchOnly.push(searchOnlyMs);
    small.floor.push(floorMs);
    small.commit.push(commitMs);
    small.indexFloor.push(indexFloorMs);
    small.searched.push(searchedMs);
  }
  rows.push(saveRow(`per turn (2 messages, chat of ${TURN_HISTORY.toLocaleString('en')})`, small));
  // Search results do not depend on when the index caught up: the searching chat, indexed turn by
  // turn, and the quiet one, indexed in one catch-up now, give the same hits for the same turn.
  const lazy = await search(store, 'turn-search', 'answer s7', 5);
  const late = await search(store, 'turn-quiet', 'answer q7', 5);
  if (lazy.items.length !== late.items.length || lazy.items[0]?.score !== late.items[0]?.score)
    throw new Error('the two chats ranked the same turn differently');
  return rows;
}

/** A chat of `turns` turns where every reply was regenerated once: one branch per turn. */
async function regeneratedChat(store: ContextStore, chatId: string, turns: number): Promise<void> {
  await store.openChat({ chatId, userId: 'u' });
  let head: string | null = null;
  for (let index = 0; index < turns; index += 1) {
    const question = `${chatId}-q${index}`;
    const first = `${chatId}-a${index}`;
    const second = `${chatId}-r${index}`;
    const text = (id: string, role: string, words: string) => ({
      id,
      message: { id, role, parts: [{ type: 'text', text: words }] },
    });
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: head,
      messages: [
        text(question, 'user', `turn ${index}: a question`),
        text(first, 'assistant', `turn ${index}: a first answer`),
      ],
    });
    // The regenerated reply: a branch at the question.
    const name = `regen-${index}`;
    await store.createBranch({ chatId, name, headMessageId: question });
    await store.commit({
      chatId,
      branch: name,
      expectedHeadId: question,
      messages: [text(second, 'assistant', `turn ${index}: a second answer`)],
    });
    head = first;
  }
}

async function measureBranches(subject: Subject): Promise<Record<string, string>[]> {
  const rows: Record<string, string>[] = [];
  let base: number | undefined;
  for (const turns of [40, 80, 160]) {
    const chatId = `regen-${turns}`;
    await regeneratedChat(subject.store, chatId, turns);
    await search(subject.store, chatId, 'turn', 100);
    const times: number[] = [];
    let branchesSeen = 0;
    for (let run = 0; run < 20; run += 1) {
      const started = performance.now();
      const page = await search(subject.store, chatId, 'turn', 100);
      times.push(performance.now() - started);
      branchesSeen = page.items.reduce((sum, hit) => sum + hit.branches.length, 0);
    }
    const ms = median(times);
    base ??= ms / turns;
    rows.push({
      store: subject.name,
      turns: String(turns),
      branches: String(turns + 1),
      messages: String(turns * 3),
      'search ms (page of 100)': ms.toFixed(2),
      'ms per turn': (ms / turns).toFixed(3),
      'per turn vs 40 turns': (ms / turns / base).toFixed(2),
      'hit-branch pairs': String(branchesSeen),
    });
  }
  return rows;
}

async function main(): Promise<void> {
  const wanted = new Set(process.argv.slice(2));
  const pick = (names: string[]) => {
    const named = names.filter((name) => wanted.has(name));
    return named.length > 0 ? named : names;
  };
  const stores = pick(['sqlite', 'postgres']);
  const sections = pick(['saves', 'branches']);
  const saves: Record<string, string>[] = [];
  const branches: Record<string, string>[] = [];
  for (const name of stores) {
    const subject = name === 'sqlite' ? await sqliteSubject() : await postgresSubject();
    try {
      if (sections.includes('saves'))
        for (const row of await measureSaves(subject)) saves.push({ store: subject.name, ...row });
      if (sections.includes('branches')) branches.push(...(await measureBranches(subject)));
    } finally {
      await subject.close();
    }
  }
  if (saves.length > 0) {
    console.log(
      `\nSaves, median ms (${BATCH_RUNS} runs of the 10,000-message save, ${TURN_RUNS} turns), interleaved with the floors. Targets: x floor <= 1.3 (batch) and <= 1.5 (turn) for an app that never searches; the same against the index floor for one that does.`,
    );
    printTable(saves);
  }
  if (branches.length > 0) {
    console.log(
      '\nSearch of a chat with one branch per turn (every reply regenerated once), median of 20:',
    );
    printTable(branches);
  }
}

await main();
