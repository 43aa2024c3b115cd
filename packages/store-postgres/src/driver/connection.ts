import { ChatNotFoundError, MessageNotFoundError } from '@ctxgraph/fragments-core';
import { IndexHints } from '@ctxgraph/fragments-core/store-kit';
import type postgres from 'postgres';
import { assertSchemaCurrent, runMigrations } from '../migrations/migrations';
import type { PostgresClient } from '../options';
import type { TableNames } from '../schema/table-names';
import type { Parameter, Row } from './rows';

/** What a statement runs on: the pool, or a transaction. */
export type Queryable = Pick<postgres.Sql, 'unsafe'>;

/**
 * The store's way to the database: the client, the table names, and the schema check done once
 * before the first call. Shared by the SQL of every use case.
 */
export class PostgresConnection {
  readonly names: TableNames;
  /** What this connection knows of the chats it searched (a save to one indexes with the write). */
  readonly indexHints: IndexHints = new IndexHints();
  readonly #client: postgres.Sql;
  readonly #migrate: boolean;
  #ready: Promise<void> | undefined;

  constructor(sql: PostgresClient, names: TableNames, migrate: boolean) {
    this.#client = sql as unknown as postgres.Sql;
    this.names = names;
    this.#migrate = migrate;
  }

  /** The pool, as a {@link Queryable}. */
  get sql(): Queryable {
    return this.#client;
  }

  /** Brings the schema up to date now; later calls skip the check. */
  async migrate(): Promise<{ readonly from: number; readonly to: number }> {
    const result = await runMigrations(this.#client, this.names);
    this.#ready = Promise.resolve();
    return result;
  }

  /** Migrates (or checks the schema version) once, then runs `body` on the pool. */
  async run<T>(body: (sql: Queryable) => Promise<T>): Promise<T> {
    await this.#ensureReady();
    return body(this.#client);
  }

  #ensureReady(): Promise<void> {
    if (this.#ready === undefined) {
      const pending = this.#migrate
        ? runMigrations(this.#client, this.names).then(() => undefined)
        : assertSchemaCurrent(this.#client, this.names);
      // A failure (say, the database was not up yet) is not remembered: the next call tries again.
      this.#ready = pending.catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
    }
    return this.#ready;
  }

  /** Runs `body` in one transaction (`mode`: `isolation level …`, say). */
  async transaction<T>(body: (sql: Queryable) => Promise<T>, mode?: string): Promise<T> {
    const run = (transaction: Queryable): Promise<T> => body(transaction);
    const result =
      mode === undefined ? await this.#client.begin(run) : await this.#client.begin(mode, run);
    return result as T;
  }

  /** Runs one statement and returns its rows as arrays. */
  async query(
    sql: Queryable,
    statement: string,
    parameters: readonly Parameter[] = [],
  ): Promise<Row[]> {
    // prepare: true still defers to the client's own `prepare: false` (PgBouncer transaction mode).
    const rows = await sql
      .unsafe(statement, parameters as postgres.ParameterOrJSON<never>[], { prepare: true })
      .values();
    return rows as unknown as Row[];
  }

  /** Locks the chat row for the rest of the transaction (and touches it); ChatNotFoundError when missing. */
  async lockChat(
    sql: Queryable,
    chatId: string,
    now: number,
    activate: string | null,
  ): Promise<void> {
    const rows = await this.query(
      sql,
      `UPDATE ${this.names.chats} c SET
         updated_at = greatest(c.updated_at, $2::bigint),
         active_branch = coalesce($3::text, c.active_branch)
       WHERE c.chat_id = $1
       RETURNING 1`,
      [chatId, now, activate],
    );
    if (rows.length === 0) throw new ChatNotFoundError(chatId);
  }

  /** MessageNotFoundError unless the chat holds the node. */
  async assertMessageExists(sql: Queryable, chatId: string, messageId: string): Promise<void> {
    const rows = await this.query(
      sql,
      `SELECT 1 FROM ${this.names.messages} WHERE chat_id = $1 AND message_id = $2`,
      [chatId, messageId],
    );
    if (rows.length === 0) throw new MessageNotFoundError(chatId, messageId);
  }
}
