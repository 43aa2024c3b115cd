import { existsSync } from 'node:fs';
import { ContextConflictError, type ContextStore, type JsonValue } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import postgres from 'postgres';

// Before the stores had a context lane, the playground kept each chat's context in a table of its
// own, `playground_context` (chat_id, fragments), beside the store's tables. These functions read
// that table once, when the backend opens, copy each chat's fragments into the store's context
// lane, and drop the table: afterwards the store is the only place a context lives.

// The name of the old side table.
const LEGACY_CONTEXT_TABLE = 'playground_context';

/** One row of the old table: a chat's serialized fragments. */
export interface LegacyContext {
  readonly chatId: string;
  readonly fragments: JsonValue[];
}

/**
 * Copies old contexts into the store's context lane. A chat that no longer exists, or whose lane
 * was already saved (revision above 0: the lane is newer than the old table), is skipped.
 * Returns how many were copied. Running it twice copies nothing the second time.
 */
async function copyLegacyContexts(
  store: ContextStore,
  contexts: Iterable<LegacyContext>,
): Promise<number> {
  let copied = 0;
  for (const { chatId, fragments } of contexts) {
    if ((await store.getChat(chatId)) === null) continue;
    if ((await store.getContext(chatId)).revision > 0) continue;
    try {
      await store.saveContext({ chatId, fragments, expectedRevision: 0 });
      copied += 1;
    } catch (error) {
      // Saved by someone else meanwhile: theirs is newer.
      if (!ContextConflictError.isInstance(error)) throw error;
    }
  }
  return copied;
}

/**
 * Moves the old `playground_context` table of a SQLite file into the store's context lane, then
 * drops it. Opens a connection only for this, and only when the file exists. Returns how many
 * contexts were copied.
 */
export async function importLegacySqliteContexts(
  path: string,
  store: ContextStore,
): Promise<number> {
  if (!existsSync(path)) return 0;
  const database = new Database(path, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 5000');
    const table = database
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(LEGACY_CONTEXT_TABLE);
    if (table === undefined) return 0;
    const rows = database
      .prepare(`SELECT chat_id, fragments FROM ${LEGACY_CONTEXT_TABLE}`)
      .all() as { chat_id: string; fragments: string }[];
    const copied = await copyLegacyContexts(store, rows.map(legacyContext));
    database.exec(`DROP TABLE ${LEGACY_CONTEXT_TABLE}`);
    return copied;
  } finally {
    database.close();
  }
}

/**
 * Moves the old `playground_context` table of a Postgres database (in the connection's search
 * path) into the store's context lane, then drops it. Opens one connection only for this.
 * Returns how many contexts were copied.
 */
export async function importLegacyPostgresContexts(
  url: string,
  store: ContextStore,
): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [found] = await sql<{ table: string | null }[]>`
      SELECT to_regclass(${LEGACY_CONTEXT_TABLE})::text AS table`;
    if (found?.table == null) return 0;
    const rows = await sql<{ chat_id: string; fragments: string }[]>`
      SELECT chat_id, fragments::text AS fragments FROM playground_context`;
    const copied = await copyLegacyContexts(store, rows.map(legacyContext));
    await sql`DROP TABLE playground_context`;
    return copied;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function legacyContext(row: { chat_id: string; fragments: string }): LegacyContext {
  const parsed: unknown = JSON.parse(row.fragments);
  return { chatId: row.chat_id, fragments: Array.isArray(parsed) ? (parsed as JsonValue[]) : [] };
}
