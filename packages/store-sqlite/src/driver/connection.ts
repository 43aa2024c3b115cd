import { SchemaVersionError, StoreError } from '@ctxgraph/fragments-core';
import { IndexHints } from '@ctxgraph/fragments-core/store-kit';
import Database from 'better-sqlite3';
import {
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SCHEMA_VERSION,
  type SqliteMigrationResult,
} from '../migrations/migrations';
import type { ResolvedStoreOptions, SqliteStorePathOptions } from '../options';
import type { TableNames } from '../schema/table-names';
import { toStoreError } from '../sqlite-store-error';

/**
 * The store's way to the database: the better-sqlite3 connection (opened here, or the caller's),
 * the table names, prepared statements cached by their SQL, the transactions, and the schema
 * check done once before the first call. Shared by the SQL of every use case. Everything is
 * synchronous: better-sqlite3 is.
 */
export class SqliteConnection {
  /** The table names of the store's prefix. */
  readonly tables: TableNames;
  /** The database file (better-sqlite3's `name`: the path, or `:memory:`). */
  readonly path: string;
  /** True when the store opened the database (and so closes it). */
  readonly ownsDatabase: boolean;
  /** What this connection knows of its own writes to the chats it searched (a hint). */
  readonly indexHints: IndexHints = new IndexHints();
  readonly #database: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #built = new Map<(tables: TableNames) => string, Database.Statement>();
  // One transaction wrapper for the store's life, running whatever body it is given: building a
  // wrapper per call costs more than the statements of a small commit. Built on first use: it
  // prepares better-sqlite3's BEGIN / COMMIT / SAVEPOINT statements, which a handle that only
  // reads in single statements (a new handle's first resolve) never needs.
  #transaction: Database.Transaction<(body: () => unknown) => unknown> | undefined;
  #schemaChecked = false;

  /**
   * Opens the file (or takes the caller's database) and migrates it unless told not to. Throws
   * `StoreError` when the file cannot be opened or is not a usable database, `SchemaVersionError`
   * when its tables are newer than this code.
   */
  constructor(options: ResolvedStoreOptions) {
    this.tables = options.tables;
    if (options.database !== undefined) {
      this.#database = options.database;
      this.ownsDatabase = false;
      this.path = options.database.name;
    } else {
      const open = options.open as SqliteStorePathOptions;
      this.path = open.path;
      this.#database = openDatabase(open);
      this.ownsDatabase = true;
    }
    if (options.migrate) {
      try {
        // A read-only database cannot be migrated: check its version instead, so the error says
        // what is missing rather than that a write failed.
        if (this.#database.readonly) this.#checkSchema();
        else migrateSqliteDatabase(this.#database, { tablePrefix: this.tables.prefix });
        this.#schemaChecked = true;
      } catch (error) {
        if (this.ownsDatabase) this.#database.close();
        throw toStoreError(error, this.path, 'creating the schema');
      }
    }
  }

  /** True for `:memory:` (and other in-memory databases): nothing persists, nothing is shared. */
  get memory(): boolean {
    return this.#database.memory;
  }

  /** True when the database is open read-only. */
  get readonly(): boolean {
    return this.#database.readonly;
  }

  /** Creates or upgrades the tables now; later calls skip the version check. */
  migrate(): SqliteMigrationResult {
    this.#assertUsable('migrate()');
    const result = migrateSqliteDatabase(this.#database, { tablePrefix: this.tables.prefix });
    this.#schemaChecked = true;
    return result;
  }

  /** Checks the database is still open and the schema current (once), then runs `body`. */
  run<T>(action: string, body: () => T): T {
    this.#assertUsable(action);
    this.#checkSchema();
    return body();
  }

  /**
   * `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken before the first read, so
   * what a write decides from its reads (the head it compares, the next sequence) cannot go stale.
   */
  write<T>(body: () => T): T {
    return this.#transactions().immediate(body) as T;
  }

  /** `body` in a deferred transaction: several reads see one snapshot, without the write lock. */
  read<T>(body: () => T): T {
    return this.#transactions().deferred(body) as T;
  }

  #transactions(): Database.Transaction<(body: () => unknown) => unknown> {
    this.#transaction ??= this.#database.transaction((body: () => unknown) => body());
    return this.#transaction;
  }

  /**
   * The prepared statement `build` writes for this store's tables, built and prepared once per
   * store and found again by `build` itself: for the hot paths (a save), which then neither
   * rebuild the SQL text nor hash it on every call.
   */
  prepared(build: (tables: TableNames) => string): Database.Statement {
    let statement = this.#built.get(build);
    if (statement === undefined) {
      statement = this.statement(build(this.tables));
      this.#built.set(build, statement);
    }
    return statement;
  }

  /** The prepared statement of `sql`, prepared once per store. */
  statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#database.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Forgets the statements and closes the database when the store opened it. */
  close(): void {
    this.#statements.clear();
    this.#built.clear();
    if (this.ownsDatabase && this.#database.open) this.#database.close();
  }

  #assertUsable(action: string): void {
    if (!this.#database.open) {
      throw new StoreError(
        `SqliteContextStore at "${this.path}": ${action} called after the database was closed by its owner.`,
      );
    }
  }

  // With `migrate: false` (or a read-only database) the schema is checked once, with a clear message.
  #checkSchema(): void {
    if (this.#schemaChecked) return;
    const prefix = this.tables.prefix;
    const version = readSqliteSchemaVersion(this.#database, { tablePrefix: prefix });
    if (version !== SCHEMA_VERSION) {
      const state =
        version === 0
          ? `has no "${prefix}" tables`
          : version > SCHEMA_VERSION
            ? `has "${prefix}" tables at schema version ${version}, newer than this @ctxgraph/store-sqlite understands (${SCHEMA_VERSION}); upgrade it`
            : `has "${prefix}" tables at schema version ${version}, older than ${SCHEMA_VERSION}`;
      const advice =
        version > SCHEMA_VERSION
          ? ''
          : this.#database.readonly
            ? 'It is open read-only, so the store cannot migrate it: open it writable once, or migrate it elsewhere. '
            : 'Run store.migrate() or migrateSqliteDatabase(), apply getMigrationSql(), or construct the store without migrate: false. ';
      throw new SchemaVersionError(
        `SqliteContextStore at "${this.path}" ${state}. ${advice}Nothing was changed.`,
      );
    }
    this.#schemaChecked = true;
  }
}

function openDatabase(options: SqliteStorePathOptions): Database.Database {
  const readonly = options.readonly === true;
  let database: Database.Database;
  try {
    database = new Database(options.path, { readonly, fileMustExist: readonly });
  } catch (error) {
    throw toStoreError(error, options.path, 'opening the database');
  }
  try {
    const busyTimeout = options.busyTimeout ?? 5000;
    database.pragma(`busy_timeout = ${busyTimeout}`);
    if (!readonly && !database.memory) {
      const mode = switchToWal(database, busyTimeout);
      if (mode !== 'wal')
        throw new StoreError(
          `SqliteContextStore at "${options.path}": could not switch to WAL mode (journal_mode is ${String(mode)}).`,
        );
    } else {
      // Reading the schema here surfaces "not a database" / corruption at open time.
      database.pragma('schema_version', { simple: true });
    }
    database.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
    database.pragma('foreign_keys = ON');
    return database;
  } catch (error) {
    database.close();
    throw toStoreError(error, options.path, 'opening the database');
  }
}

// Switching a new file to WAL needs an exclusive lock. When two processes open the same new
// file at once, both hold a shared lock and want it: SQLite answers SQLITE_BUSY at once instead
// of calling the busy handler (waiting could not help either of them), or reports the old mode
// unchanged. Once the other one has switched, the switch is a no-op, so retrying for up to
// busyTimeout resolves the race. Returns the journal mode in effect at the end.
function switchToWal(database: Database.Database, busyTimeout: number): unknown {
  const deadline = Date.now() + busyTimeout;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt += 1) {
    let mode: unknown;
    try {
      mode = database.pragma('journal_mode = WAL', { simple: true });
      if (mode === 'wal') return mode;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY')) throw error;
      if (Date.now() >= deadline) throw error;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) return mode;
    // The constructor is synchronous: block this thread briefly, a little longer each time.
    Atomics.wait(pause, 0, 0, Math.min(remaining, attempt * 5));
  }
}
