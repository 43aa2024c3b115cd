// What search costs an app (issue #23), on SQLite and PostgreSQL, against bare-driver floors
// measured in the same run, interleaved run by run. Prints figures; asserts nothing.
//   cd benchmarks && node --expose-gc --import tsx src/search-cost-bench.ts [sqlite] [postgres] [saves] [branches]
// PostgreSQL: DATABASE_URL, or an embedded server (tooling/postgres-server.ts); a random schema,
// dropped at the end. BATCH_RUNS (21) and TURN_RUNS (1,000) set the number of measured runs,
// TURN_BLOCK (10) the turns of one kind in a row (1: every kind one turn at a time).
// Run with --expose-gc (the package script does): every timed step then starts from a
// collected heap, the floor's as the store's, so a collection another step left is not billed.
//
// - Saves, for an app that never searches: one 10,000-message save and a per-turn save (two
//   messages on a 1,000-message chat), store against the bare floor: the same rows inserted, the
//   head moved where it is still the expected one (compare-and-set) and the chat's revision
//   bumped, nothing else: what the contract obliges any store's commit to do, done the cheapest
//   way (the head and the next sequence known in memory, no read of its own).
// - Saves, for an app that searches: the same save followed by a search of the chat, less the
//   same search once nothing is left to catch up (the save's share of the app's cost), against an
//   indexing floor that writes the same rows plus the same index entries (the same words,
//   computed in JavaScript as the store does) in the save's own transaction, and then runs the
//   same bare index query twice in the same way (FTS5 re-reads its structure after a write; the
//   floor pays that too). The search looks for a word no message holds, so its own query costs
//   next to nothing. Three cases: a new chat of a user who searched through the store (its saves
//   index with the write: the steady state of a searching app, as for any chat once searched); a
//   chat saved before anyone searched it, whose first search catches it up (once per chat); and,
//   per turn, a chat another connection (another process) saves to while this one searches it.
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
const BATCH_RUNS = Number(process.env.BATCH_RUNS ?? 21);
const TURN_HISTORY = 1_000;
const TURN_RUNS = Number(process.env.TURN_RUNS ?? 1000);
const WARMUP = 100;
const TURN_BLOCK = Number(process.env.TURN_BLOCK ?? 10);

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
  /** The bare index query of a search of chat `chatId` for a word no message holds. */
  readonly search: (chatId: string) => Promise<void>;
  readonly close: () => Promise<void>;
}

interface Subject {
  readonly name: string;
  readonly store: ContextStore;
  /**
   * Two more stores on one database of their own (two processes, as far as each knows): one
   * searches a chat, the other saves to it. Apart from `store`, so that `store` is the only
   * connection to its database, as the floor is to its own: on SQLite, a connection whose
   * database another connection changed discards its page cache at its next transaction.
   */
  readonly pair: { readonly searcher: ContextStore; readonly writer: ContextStore };
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
  // commit makes, in its own transaction), and the chat's revision goes up by one: what the
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
  const lookup = database.prepare(
    'SELECT rowid FROM floor_message_search WHERE floor_message_search MATCH ? LIMIT 21',
  );
  return {
    write: async (chatId, entries, indexed) => {
      write.immediate(chatId, entries, indexed);
    },
    search: async (chatId) => {
      lookup.all(`body : "zzzabsent" AND scope : "c${Buffer.from(chatId).toString('hex')}"`);
    },
    close: async () => {
      database.close();
    },
  };
}

async function sqliteSubject(): Promise<Subject> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-search-cost-'));
  const store = new SqliteContextStore(join(directory, 'store.db'));
  const searcher = new SqliteContextStore(join(directory, 'pair.db'));
  const writer = new SqliteContextStore(join(directory, 'pair.db'));
  const floors = sqliteFloors(join(directory, 'floor.db'));
  return {
    name: 'SQLite',
    store,
    pair: { searcher, writer },
    floors,
    close: async () => {
      await store.close();
      await searcher.close();
      await writer.close();
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
 * bumps the chat's revision (one statement); indexed, it also inserts each message's
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
    search: async (chatId) => {
      await sql.unsafe(
        `SELECT message_id FROM ${t('search_words')} WHERE chat_id = $1 AND words @> $2::text[] LIMIT 21`,
        [chatId, ['zzzabsent']],
      );
    },
    close: () => sql.end(),
  };
}

async function postgresSubject(): Promise<Subject> {
  const server = await startPostgresServer();
  const schema = `sc_${randomBytes(6).toString('hex')}`;
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  await store.migrate();
  const searcher = new PostgresContextStore({ connectionString: server.url, schema });
  const writer = new PostgresContextStore({ connectionString: server.url, schema });
  const floors = postgresFloors(server.url, schema);
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  return {
    name: 'PostgreSQL',
    store,
    pair: { searcher, writer },
    floors,
    close: async () => {
      await store.close();
      await searcher.close();
      await writer.close();
      await floors.close();
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await admin.end();
      await server.stop();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The measurements

/** Per store, the head of each chat's main branch as its last commit left it, known in memory. */
const heads = new WeakMap<ContextStore, Map<string, string | null>>();

/**
 * Commits the entries after the head this process knows (read once, the first time), as an
 * engine does: it keeps the head its last save left, so a save reads nothing first. The floors
 * know theirs the same way.
 */
async function commitAll(store: ContextStore, chatId: string, entries: Entry[]): Promise<void> {
  let known = heads.get(store);
  if (known === undefined) {
    known = new Map();
    heads.set(store, known);
  }
  let expectedHeadId = known.get(chatId);
  if (expectedHeadId === undefined)
    expectedHeadId = (await store.getHead({ chatId, branch: 'main' })).headMessageId;
  const result = await store.commit({ chatId, branch: 'main', expectedHeadId, messages: entries });
  known.set(chatId, result.headMessageId);
}

function search(
  store: ContextStore,
  chatId: string | undefined,
  userId: string,
  query: string,
  limit = 20,
) {
  const method = store.searchMessages;
  if (method === undefined) throw new Error('the store cannot search');
  return method.call(store, { userId, ...(chatId === undefined ? {} : { chatId }), query, limit });
}

const collect = (globalThis as { gc?: () => void }).gc;

/**
 * Milliseconds `task` takes; with `collected`, from a collected heap when the bench runs with
 * --expose-gc (for the 10,000-message saves, whose garbage would otherwise be collected during
 * whichever step comes next; a turn leaves next to none, and a collection before each would only
 * age the code V8 keeps).
 */
async function timed(task: () => Promise<unknown>, collected: boolean): Promise<number> {
  if (collected) collect?.();
  const started = performance.now();
  await task();
  return performance.now() - started;
}

/**
 * The save's share of a searching app's cost: the save and the search after it, less the same
 * search once more (nothing left to catch up), each timed from a collected heap.
 */
async function saveShare(
  save: () => Promise<unknown>,
  lookup: () => Promise<unknown>,
  collected: boolean,
): Promise<number> {
  const both = await timed(async () => {
    await save();
    await lookup();
  }, collected);
  return both - (await timed(lookup, collected));
}

/** One kind of save: its times, run by run, for each case measured. */
type Times = Record<string, number[]>;

/** Runs the steps of one run, in order on even runs and in reverse on odd ones (drift cancels). */
async function runSteps(
  run: number,
  steps: Record<string, () => Promise<number>>,
  into: Times | undefined,
): Promise<void> {
  const names = Object.keys(steps);
  if (run % 2 === 1) names.reverse();
  for (const name of names) {
    const ms = await (steps[name] as () => Promise<number>)();
    if (into === undefined) continue;
    const list = into[name] ?? [];
    list.push(ms);
    into[name] = list;
  }
}

/** Ratios to the floors of one kind of save, for an app that never searches and one that does. */
function saveRows(save: string, times: Times): Record<string, string>[] {
  const floors = times.floor ?? [];
  // The indexing floor of run k: the mean of its two steps in that run.
  const first = times['index floor'] ?? [];
  const again = times['index floor, again'] ?? [];
  const indexFloors = first.map((ms, k) => (ms + (again[k] ?? ms)) / 2);
  const row = (app: string, name: string, against: number[]) => {
    const store = times[name] ?? [];
    return {
      save,
      app,
      'floor ms': median(against).toFixed(3),
      'store ms': median(store).toFixed(3),
      // Run k of the store against run k of its floor, measured next to it: what the machine
      // was doing then weighs on both sides alike.
      'x floor': median(store.map((ms, k) => ms / (against[k] ?? Number.NaN))).toFixed(2),
      'x floor (medians)': (median(store) / median(against)).toFixed(2),
    };
  };
  const rows = [row('never searches', 'never searches', floors)];
  for (const [name, app] of [
    ['indexed with the save', 'searches (a searched chat, or a new one of a user who searched)'],
    [
      'first search catches up',
      'searches (a chat saved before anyone searched it: its first search)',
    ],
    ['another process wrote', 'searches (another process saves to a chat this one searches)'],
  ] as const) {
    if (times[name] !== undefined) rows.push(row(app, name, indexFloors));
  }
  return rows;
}

async function measureSaves(subject: Subject): Promise<Record<string, string>[]> {
  const { store, pair, floors } = subject;
  const rows: Record<string, string>[] = [];
  // User `u` searches through the store (from the warm-up on); user `quiet` never does; each run
  // has a user of its own, `late-N`, who saved a chat before they ever searched.
  await store.openChat({ chatId: 'first-search', userId: 'u' });
  await search(store, 'first-search', 'u', 'zzzabsent');
  // One 10,000-message save into a new chat, each run.
  const big: Times = {};
  for (let run = -1; run < BATCH_RUNS; run += 1) {
    const n = run + 1;
    const quiet = `big-quiet-${n}`;
    const searching = `big-search-${n}`;
    const late = `big-late-${n}`;
    await store.openChat({ chatId: quiet, userId: 'quiet' });
    await store.openChat({ chatId: searching, userId: 'u' });
    await store.openChat({ chatId: late, userId: `late-${n}` });
    // Each step's messages are built before its clock starts.
    const f = batch(`f${n}`);
    const q = batch(`q${n}`);
    const i = batch(`i${n}`);
    const j = batch(`j${n}`);
    const b = batch(`s${n}`);
    const l = batch(`l${n}`);
    await runSteps(
      run,
      {
        floor: () => timed(() => floors.write(`floor-${n}`, f, false), true),
        'never searches': () => timed(() => commitAll(store, quiet, q), true),
        'index floor': () =>
          saveShare(
            () => floors.write(`index-floor-${n}`, i, true),
            () => floors.search(`index-floor-${n}`),
            true,
          ),
        // Twice, as the store indexes two chats per run: both FTS tables grow at the same pace,
        // so FTS5's merges of its segments fall as often on the floor as on the store.
        'index floor, again': () =>
          saveShare(
            () => floors.write(`index-floor-again-${n}`, j, true),
            () => floors.search(`index-floor-again-${n}`),
            true,
          ),
        'indexed with the save': () =>
          saveShare(
            () => commitAll(store, searching, b),
            () => search(store, searching, 'u', 'zzzabsent'),
            true,
          ),
        'first search catches up': () =>
          saveShare(
            () => commitAll(store, late, l),
            () => search(store, late, `late-${n}`, 'zzzabsent'),
            true,
          ),
      },
      run < 0 ? undefined : big,
    );
  }
  rows.push(...saveRows(`one save of ${BATCH.toLocaleString('en')} messages`, big));

  // A turn (two messages) on a chat of 1,000 messages, the searching app searching after each.
  await seedChat(store, 'turn-quiet', 'quiet', TURN_HISTORY);
  await seedChat(store, 'turn-search', 'u', TURN_HISTORY);
  await seedChat(pair.searcher, 'turn-other', 'u', TURN_HISTORY);
  await search(store, 'turn-search', 'u', 'zzzabsent');
  await search(pair.searcher, 'turn-other', 'u', 'zzzabsent');
  const history = (tag: string): Entry[] => batch(tag).slice(0, TURN_HISTORY);
  await floors.write('turn-floor', history('hf'), false);
  await floors.write('turn-index-floor', history('hi'), true);
  await floors.write('turn-index-floor-again', history('hj'), true);
  const small: Times = {};
  // Each kind of turn runs TURN_BLOCK times in a row, the kinds taking turns block by block (in
  // reverse order every other block): a save's cost as a server saving turn after turn pays it,
  // not the cost of the caches another kind of save left cold just before (which, interleaved
  // one by one, fell on whichever ran next).
  const steps: Record<string, (run: number) => Promise<number>> = {
    floor: (run) => {
      const entries = turn(`f${run}`);
      return timed(() => floors.write('turn-floor', entries, false), false);
    },
    'never searches': (run) => {
      const entries = turn(`q${run}`);
      return timed(() => commitAll(store, 'turn-quiet', entries), false);
    },
    'index floor': (run) => {
      const entries = turn(`i${run}`);
      return saveShare(
        () => floors.write('turn-index-floor', entries, true),
        () => floors.search('turn-index-floor'),
        false,
      );
    },
    'index floor, again': (run) => {
      const entries = turn(`j${run}`);
      return saveShare(
        () => floors.write('turn-index-floor-again', entries, true),
        () => floors.search('turn-index-floor-again'),
        false,
      );
    },
    'indexed with the save': (run) => {
      const entries = turn(`s${run}`);
      return saveShare(
        () => commitAll(store, 'turn-search', entries),
        () => search(store, 'turn-search', 'u', 'zzzabsent'),
        false,
      );
    },
    'another process wrote': (run) => {
      const entries = turn(`o${run}`);
      return saveShare(
        () => commitAll(pair.writer, 'turn-other', entries),
        () => search(pair.searcher, 'turn-other', 'u', 'zzzabsent'),
        false,
      );
    },
  };
  for (let block = 0; block * TURN_BLOCK < WARMUP + TURN_RUNS; block += 1) {
    const names = Object.keys(steps);
    if (block % 2 === 1) names.reverse();
    for (const name of names) {
      const step = steps[name] as (run: number) => Promise<number>;
      for (let run = block * TURN_BLOCK; run < (block + 1) * TURN_BLOCK; run += 1) {
        const ms = await step(run);
        if (run < WARMUP) continue;
        const list = small[name] ?? [];
        list.push(ms);
        small[name] = list;
      }
    }
  }
  rows.push(
    ...saveRows(`per turn (2 messages, chat of ${TURN_HISTORY.toLocaleString('en')})`, small),
  );
  // Search results do not depend on when the index caught up: the searching chat, indexed turn by
  // turn, and the quiet one, indexed in one catch-up now, give the same hits for the same turn.
  const lazy = await search(store, 'turn-search', 'u', 'answer s7', 5);
  const late = await search(store, 'turn-quiet', 'quiet', 'answer q7', 5);
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
    await search(subject.store, chatId, 'u', 'turn', 100);
    const times: number[] = [];
    let branchesSeen = 0;
    for (let run = 0; run < 20; run += 1) {
      const started = performance.now();
      const page = await search(subject.store, chatId, 'u', 'turn', 100);
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
      `\nSaves, median ms (${BATCH_RUNS} runs of the 10,000-message save, interleaved with the floors${collect === undefined ? ' (run with --expose-gc to start each from a collected heap)' : ', each from a collected heap'}; ${TURN_RUNS} turns of each kind, ${TURN_BLOCK} in a row). x floor: the median of each run's store time over its floor's in the same run (and the ratio of the medians). Targets: x floor <= 1.3 (batch) and <= 1.5 (turn); for an app that searches, the floor is the indexing floor.`,
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
