import type { JsonValue } from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import type { Sql } from 'postgres';

/**
 * Where the playground keeps each chat's context fragments, as the serialized JSON of
 * `fromFragment`. The context is not part of the conversation graph, so it lives beside the store:
 * a side table in the same SQLite file or Postgres database, or a map for the memory store.
 */
export interface ContextRepository {
  /** The chat's serialized fragments, in order (empty when none were saved). */
  load(chatId: string): Promise<JsonValue[]>;
  /** Replaces the chat's serialized fragments. */
  save(chatId: string, fragments: readonly JsonValue[]): Promise<void>;
  /** Forgets the chat's fragments. */
  remove(chatId: string): Promise<void>;
  /** Releases the connection it opened. */
  close(): Promise<void>;
}

/** Keeps contexts in memory (they go when the process does, like the memory store's chats). */
export class MemoryContextRepository implements ContextRepository {
  readonly #contexts = new Map<string, string>();

  async load(chatId: string): Promise<JsonValue[]> {
    const text = this.#contexts.get(chatId);
    return text === undefined ? [] : (JSON.parse(text) as JsonValue[]);
  }

  async save(chatId: string, fragments: readonly JsonValue[]): Promise<void> {
    // Kept as text so a caller cannot change the stored copy by mutating what it passed in.
    this.#contexts.set(chatId, JSON.stringify(fragments));
  }

  async remove(chatId: string): Promise<void> {
    this.#contexts.delete(chatId);
  }

  async close(): Promise<void> {}
}

/** A side table, `playground_context`, in the same SQLite file as the store's tables. */
export class SqliteContextRepository implements ContextRepository {
  readonly #database: Database.Database;

  /** Opens its own connection to `path` (WAL lets it share the file with the store). */
  constructor(path: string) {
    this.#database = new Database(path);
    this.#database.pragma('journal_mode = WAL');
    this.#database.pragma('busy_timeout = 5000');
    this.#database.exec(
      'CREATE TABLE IF NOT EXISTS playground_context (chat_id TEXT PRIMARY KEY, fragments TEXT NOT NULL, updated_at INTEGER NOT NULL)',
    );
  }

  async load(chatId: string): Promise<JsonValue[]> {
    const row = this.#database
      .prepare('SELECT fragments FROM playground_context WHERE chat_id = ?')
      .get(chatId) as { fragments: string } | undefined;
    return row === undefined ? [] : (JSON.parse(row.fragments) as JsonValue[]);
  }

  async save(chatId: string, fragments: readonly JsonValue[]): Promise<void> {
    this.#database
      .prepare(
        'INSERT INTO playground_context (chat_id, fragments, updated_at) VALUES (?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET fragments = excluded.fragments, updated_at = excluded.updated_at',
      )
      .run(chatId, JSON.stringify(fragments), Date.now());
  }

  async remove(chatId: string): Promise<void> {
    this.#database.prepare('DELETE FROM playground_context WHERE chat_id = ?').run(chatId);
  }

  async close(): Promise<void> {
    if (this.#database.open) this.#database.close();
  }
}

/** A side table, `playground_context`, in the Postgres database the store uses. */
export class PostgresContextRepository implements ContextRepository {
  readonly #sql: Sql;
  #ready: Promise<unknown> | undefined;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  #table(): Promise<unknown> {
    this.#ready ??= this.#sql`CREATE TABLE IF NOT EXISTS playground_context (
      chat_id text PRIMARY KEY, fragments jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`;
    return this.#ready;
  }

  async load(chatId: string): Promise<JsonValue[]> {
    await this.#table();
    const rows = await this.#sql<Array<{ fragments: string }>>`
      SELECT fragments::text AS fragments FROM playground_context WHERE chat_id = ${chatId}`;
    const row = rows[0];
    return row === undefined ? [] : (JSON.parse(row.fragments) as JsonValue[]);
  }

  async save(chatId: string, fragments: readonly JsonValue[]): Promise<void> {
    await this.#table();
    // sql.json sends the list as jsonb; a JSON string cast with ::jsonb would be stored as one string.
    const value = this.#sql.json(fragments as Parameters<Sql['json']>[0]);
    await this.#sql`
      INSERT INTO playground_context (chat_id, fragments) VALUES (${chatId}, ${value})
      ON CONFLICT (chat_id) DO UPDATE SET fragments = excluded.fragments, updated_at = now()`;
  }

  async remove(chatId: string): Promise<void> {
    await this.#table();
    await this.#sql`DELETE FROM playground_context WHERE chat_id = ${chatId}`;
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}
