// One writer process of postgres-bench.ts's concurrency table. Not run on its own.
//   node --import tsx postgres-bench-writer.ts <mode> <url> <schema> <chatId> <writer> <turns>
// mode: `engine` (ContextEngine.save(), which uses store.append), `engine-cas` (the same engine
// over a store that hides append, so it compares-and-sets and retries), or `floor` (a bare
// postgres.js transaction per turn: lock the branch row, insert the two rows, move the head and
// bump the chat's revision, as every save must).
// It connects and warms up, prints `ready`, waits for a line on stdin, saves <turns> turns (a user
// and an assistant message each, ids `<writer>-<turn>-user` / `-reply`), then prints one JSON line:
// { latencies: number[] (ms per saved turn), failed: number, errors: string[] }.
import { createInterface } from 'node:readline';
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import postgres from 'postgres';

const [mode, url, schema, chatId, writer, turnsText] = process.argv.slice(2) as [
  'engine' | 'engine-cas' | 'floor',
  string,
  string,
  string,
  string,
  string,
];
const turns = Number(turnsText);

function started(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  return new Promise((resolve) =>
    lines.once('line', () => {
      // Let go of stdin, or it keeps the process alive after the last turn.
      lines.close();
      process.stdin.destroy();
      resolve();
    }),
  );
}

/** The same store without the append ability: the engine falls back to compare-and-set. */
function withoutAppend(store: PostgresContextStore): ContextStore {
  const capabilities = { ...store.capabilities, append: false };
  return new Proxy(store, {
    get: (target, property) => {
      if (property === 'capabilities') return capabilities;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ContextStore;
}

/** What a writer measured, and how to close its connection once that is reported. */
interface WriterResult {
  latencies: number[];
  failed: number;
  errors: string[];
  close: () => Promise<void>;
}

async function engineWriter(): Promise<WriterResult> {
  const store = new PostgresContextStore({ connectionString: url, schema, connection: { max: 1 } });
  const engine = new ContextEngine({
    store: mode === 'engine-cas' ? withoutAppend(store) : store,
    chatId,
    userId: 'bench-user',
    renderer: new XmlRenderer(),
    // A shared chat with 8 writers: let compare-and-set retry as long as it needs to.
    ...(mode === 'engine-cas' ? { maxSaveAttempts: 1_000 } : {}),
  });
  await engine.resolve();
  process.stdout.write('ready\n');
  await started();
  const latencies: number[] = [];
  const errors: string[] = [];
  let failed = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const tag = `${writer}-${turn}`;
    engine.set(
      user(`question ${tag}`, { id: `${tag}-user` }),
      assistantText(`answer ${tag}, a few words long`, { id: `${tag}-reply` }),
    );
    const begun = performance.now();
    try {
      await engine.save();
      latencies.push(performance.now() - begun);
    } catch (error) {
      failed += 1;
      errors.push(String(error));
      await engine.discardPending();
    }
  }
  return { latencies, failed, errors: errors.slice(0, 3), close: () => store.close() };
}

/**
 * The floor writes what the store writes and no more: the two message rows, the branch head, and
 * the chat's revision and `updated_at` (the contract requires both of every save; folded into the
 * head's UPDATE, so no extra round trip), the JSON serialized before the transaction begins (as
 * the store does), in one transaction that locks the branch row first.
 */
async function floorWriter(): Promise<WriterResult> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const messages = sql(`${schema}.ctxgraph_messages`);
  const branches = sql(`${schema}.ctxgraph_branches`);
  const chats = sql(`${schema}.ctxgraph_chats`);
  await sql`SELECT 1`;
  process.stdout.write('ready\n');
  await started();
  const latencies: number[] = [];
  const errors: string[] = [];
  let failed = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const tag = `${writer}-${turn}`;
    const begun = performance.now();
    const now = Date.now();
    const entries = [
      { id: `${tag}-user`, role: 'user', text: `question ${tag}` },
      { id: `${tag}-reply`, role: 'assistant', text: `answer ${tag}, a few words long` },
    ].map((entry) => ({
      id: entry.id,
      role: entry.role,
      json: JSON.stringify({
        id: entry.id,
        role: entry.role,
        parts: [{ type: 'text', text: entry.text }],
      }),
    }));
    try {
      await sql.begin(async (transaction) => {
        const [branch] =
          await transaction`SELECT head_message_id FROM ${branches} WHERE chat_id = ${chatId} AND name = 'main' FOR UPDATE`;
        const [last] =
          await transaction`SELECT coalesce(max(sequence), 0)::int AS sequence FROM ${messages} WHERE chat_id = ${chatId}`;
        let parent = (branch?.head_message_id as string | null) ?? null;
        let sequence = Number(last?.sequence ?? 0);
        const rows = entries.map((entry) => {
          sequence += 1;
          const row = {
            chat_id: chatId,
            message_id: entry.id,
            parent_id: parent,
            sequence,
            role: entry.role,
            message: entry.json,
            created_at: now,
            updated_at: now,
          };
          parent = entry.id;
          return row;
        });
        await transaction`INSERT INTO ${messages} ${transaction(rows)}`;
        await transaction`WITH head AS (
            UPDATE ${branches} SET head_message_id = ${parent}, updated_at = ${now}
            WHERE chat_id = ${chatId} AND name = 'main'
          )
          UPDATE ${chats} SET version = version + 1, updated_at = ${now} WHERE chat_id = ${chatId}`;
      });
      latencies.push(performance.now() - begun);
    } catch (error) {
      failed += 1;
      errors.push(String(error));
    }
  }
  return { latencies, failed, errors: errors.slice(0, 3), close: () => sql.end() };
}

// Reported before closing, so the parent's wall time does not include disconnecting.
const { close, ...result } = mode === 'floor' ? await floorWriter() : await engineWriter();
process.stdout.write(`${JSON.stringify(result)}\n`);
await close();
