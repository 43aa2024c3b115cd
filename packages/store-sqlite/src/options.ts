import { ValidationError } from '@ctxgraph/fragments-core';
import { endedReplyGraceOption } from '@ctxgraph/fragments-core/store-kit';
import type Database from 'better-sqlite3';
import { DEFAULT_TABLE_PREFIX, type TableNames, tableNames } from './schema/table-names';

/**
 * SQLite's `synchronous` setting for a file the store opens. In WAL mode, `'NORMAL'` keeps every
 * committed write through an application crash and loses at most the last transactions on a power
 * loss or OS crash; `'FULL'` also survives power loss, at an fsync per commit; `'EXTRA'` adds an
 * fsync of the directory.
 */
export type SqliteSynchronous = 'NORMAL' | 'FULL' | 'EXTRA';

/** Options shared by both ways of opening a `SqliteContextStore`. */
export interface SqliteStoreCommonOptions {
  /**
   * Prefix of every table and index, so several apps can share one file. Letters, digits and
   * underscores, not starting with a digit.
   * @default 'ctxgraph_'
   */
  readonly tablePrefix?: string;
  /**
   * Create or upgrade the tables when the store is constructed. Pass `false` when the schema is
   * managed elsewhere (`store.migrate()`, `migrateSqliteDatabase()` or the SQL of
   * `getMigrationSql()`); the store then checks the version on first use.
   * @default true
   */
  readonly migrate?: boolean;
  /**
   * The largest message (or chat metadata, title or context lane) the store accepts, in bytes of
   * UTF-8 JSON. Larger ones are refused with `ValidationError` before anything is written.
   * @default 16777216 (16 MiB)
   */
  readonly maxMessageBytes?: number;
  /**
   * The clock live replies are stamped with and their leases compared to, in milliseconds since
   * the epoch (a test passes one it can move forward, to expire a lease without waiting). Give
   * every store over the same file the same clock.
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * How long an ended reply stays readable (`readReply`, with `endedAt` set), in milliseconds of
   * `clock`: a reader that was behind when the reply ended still reads its last chunks. Replies
   * whose grace period is over are deleted by a later end (a bounded batch per end). From
   * `ENDED_REPLY_GRACE.minMs` to `maxMs`; give every store over the same file the same value.
   * @default 60000 (`ENDED_REPLY_GRACE.defaultMs`)
   */
  readonly endedReplyGraceMs?: number;
  /**
   * How often the change feed (`watchChat`) looks for changes made by other connections while
   * something watches, in milliseconds: one `PRAGMA data_version` per look, and a read of the
   * watched chats only when the file changed. Nothing runs while nothing watches.
   * @default 100
   */
  readonly pollIntervalMs?: number;
}

/** Open (and own) the SQLite file at `path`. */
export interface SqliteStorePathOptions extends SqliteStoreCommonOptions {
  /** The database file (created when missing, unless `readonly`), or `':memory:'`. */
  readonly path: string;
  /**
   * Open the file read-only: reads work, every write fails with `StoreError`. The file must exist
   * and already hold the current schema.
   * @default false
   */
  readonly readonly?: boolean;
  /**
   * SQLite `synchronous` setting (see {@link SqliteSynchronous}).
   * @default 'NORMAL'
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * How long a write waits for another connection's lock before failing, in milliseconds.
   * @default 5000
   */
  readonly busyTimeout?: number;
}

/**
 * Use a better-sqlite3 `Database` you opened. The store never closes it and never changes its
 * settings: set WAL, `busy_timeout` and `synchronous` yourself (see the README).
 */
export interface SqliteStoreDatabaseOptions extends SqliteStoreCommonOptions {
  /** An open better-sqlite3 database. */
  readonly database: Database.Database;
}

/** Options of `SqliteContextStore`: a path to open, or a database you already opened. */
export type SqliteContextStoreOptions = SqliteStorePathOptions | SqliteStoreDatabaseOptions;

/** The default of {@link SqliteStoreCommonOptions.maxMessageBytes}. */
export const DEFAULT_MAX_MESSAGE_BYTES: number = 16 * 1024 * 1024;

/** The options, checked, with their defaults: what the driver is built from. */
export interface ResolvedStoreOptions {
  /** The file to open, or undefined when `database` was given. */
  readonly open: SqliteStorePathOptions | undefined;
  /** The database the caller opened, or undefined when the store opens `open.path`. */
  readonly database: Database.Database | undefined;
  /** The table names of the prefix. */
  readonly tables: TableNames;
  /** Migrate when constructed. */
  readonly migrate: boolean;
  /** The size limit of JSON texts and titles, in UTF-8 bytes. */
  readonly maxMessageBytes: number;
  /** The clock of live replies. */
  readonly clock: () => number;
  /** How long an ended reply stays readable, in milliseconds. */
  readonly endedReplyGraceMs: number;
  /** The change feed's poll interval, in milliseconds. */
  readonly pollIntervalMs: number;
}

/** The default of {@link SqliteStoreCommonOptions.pollIntervalMs}. */
export const DEFAULT_POLL_INTERVAL_MS = 100;

const SYNCHRONOUS_VALUES: readonly SqliteSynchronous[] = ['NORMAL', 'FULL', 'EXTRA'];

function optionsProblem(message: string, path: string): ValidationError {
  return new ValidationError(`SqliteContextStore: ${message}`, { issues: [{ path, message }] });
}

function checkPathOptions(options: SqliteStorePathOptions): void {
  if (typeof options.path !== 'string' || options.path === '') {
    throw optionsProblem('path must be a non-empty string (a file path or ":memory:").', 'path');
  }
  if (options.path.includes('\u0000'))
    throw optionsProblem('path must not contain the NUL character.', 'path');
  const { synchronous, busyTimeout } = options;
  if (synchronous !== undefined && !SYNCHRONOUS_VALUES.includes(synchronous)) {
    throw optionsProblem(
      `synchronous must be one of ${SYNCHRONOUS_VALUES.join(', ')}, received ${String(synchronous)}.`,
      'synchronous',
    );
  }
  if (busyTimeout !== undefined && (!Number.isInteger(busyTimeout) || busyTimeout < 0)) {
    throw optionsProblem(
      `busyTimeout must be a non-negative integer of milliseconds, received ${String(busyTimeout)}.`,
      'busyTimeout',
    );
  }
}

function checkDatabase(database: unknown): asserts database is Database.Database {
  if (
    typeof database !== 'object' ||
    database === null ||
    typeof (database as Database.Database).prepare !== 'function'
  ) {
    throw optionsProblem('database must be an open better-sqlite3 Database.', 'database');
  }
  if (!(database as Database.Database).open)
    throw optionsProblem('database is closed.', 'database');
}

/**
 * Checks the options (a path, or an options object with exactly one of `path` and `database`)
 * and fills in the defaults. Throws `ValidationError` naming the first bad option.
 */
export function resolveStoreOptions(
  options: string | SqliteContextStoreOptions,
): ResolvedStoreOptions {
  const given: SqliteContextStoreOptions =
    typeof options === 'string' ? { path: options } : options;
  if (typeof given !== 'object' || given === null) {
    throw optionsProblem(
      'expected a path or an options object ({ path } or { database }).',
      'options',
    );
  }
  const hasPath = 'path' in given && given.path !== undefined;
  const hasDatabase = 'database' in given && given.database !== undefined;
  if (hasPath === hasDatabase) {
    throw optionsProblem(
      'pass exactly one of `path` (a file to open) or `database` (a better-sqlite3 Database).',
      'options',
    );
  }
  let open: SqliteStorePathOptions | undefined;
  let database: Database.Database | undefined;
  if (hasPath) {
    open = given as SqliteStorePathOptions;
    checkPathOptions(open);
  } else {
    database = (given as SqliteStoreDatabaseOptions).database;
    checkDatabase(database);
  }
  const { maxMessageBytes } = given;
  if (
    maxMessageBytes !== undefined &&
    (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1)
  ) {
    throw optionsProblem(
      `maxMessageBytes must be a positive integer, received ${String(maxMessageBytes)}.`,
      'maxMessageBytes',
    );
  }
  const { clock, pollIntervalMs } = given;
  if (clock !== undefined && typeof clock !== 'function')
    throw optionsProblem(
      'clock must be a function returning milliseconds since the epoch.',
      'clock',
    );
  if (
    pollIntervalMs !== undefined &&
    (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 1 || pollIntervalMs > 60_000)
  ) {
    throw optionsProblem(
      `pollIntervalMs must be an integer of milliseconds from 1 to 60000, received ${String(pollIntervalMs)}.`,
      'pollIntervalMs',
    );
  }
  return {
    open,
    database,
    tables: tableNames(given.tablePrefix ?? DEFAULT_TABLE_PREFIX),
    migrate: given.migrate !== false,
    maxMessageBytes: maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    clock: clock ?? Date.now,
    endedReplyGraceMs: endedReplyGraceOption('SqliteContextStore', given.endedReplyGraceMs),
    pollIntervalMs: pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
  };
}
