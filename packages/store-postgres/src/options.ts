import { ValidationError } from '@ctxgraph/fragments-core';
import { assertOptionalBoolean, endedReplyGraceOption } from '@ctxgraph/fragments-core/store-kit';
import postgres from 'postgres';
import { resolveTableNames, type TableNameOptions, type TableNames } from './schema/table-names';

/** A postgres.js client (`postgres(...)`), as the app created it. */
export type PostgresClient = postgres.Sql<Record<string, unknown>>;

/** postgres.js connection options, for the client the store creates itself. */
export type PostgresConnectionOptions = postgres.Options<Record<string, postgres.PostgresType>>;

/** Options of {@link PostgresContextStore}. Give exactly one of `sql`, `connectionString` or `connection`. */
export interface PostgresContextStoreOptions extends TableNameOptions {
  /**
   * A ready postgres.js client, shared with the app. The store uses its pool and never closes
   * it. Its `prepare` setting is respected (turn it off behind PgBouncer in transaction mode).
   */
  readonly sql?: PostgresClient;
  /** A connection URL (`postgres://user:password@host:5432/database`); the store opens its own pool. */
  readonly connectionString?: string;
  /**
   * postgres.js options for the pool the store opens (with `connectionString`, or alone with
   * `host`, `database`, …). The store's defaults, which these override: `max: 3`,
   * `idle_timeout: 30`, `connect_timeout: 10`, and notices not printed.
   */
  readonly connection?: PostgresConnectionOptions;
  /**
   * Bring the schema up to date on first use (under an advisory lock; safe when many servers
   * start at once). With `false`, the store only checks the schema version on first use and
   * refuses a missing, older or newer one with `SchemaVersionError`: run {@link PostgresContextStore.migrate}
   * or the SQL of `getMigrationSql()` in your deploy instead.
   * @default true
   */
  readonly migrate?: boolean;
  /**
   * The clock live replies are stamped with and their leases compared to, in milliseconds since
   * the epoch (a test passes one it can move forward, to expire a lease without waiting). Every
   * server of an app should run on the same (NTP-synchronized) time.
   * @default Date.now
   */
  readonly clock?: () => number;
  /**
   * How long an ended reply stays readable (`readReply`, with `endedAt` set), in milliseconds of
   * `clock`: a reader that was behind when the reply ended still reads its last chunks. Replies
   * whose grace period is over are deleted by a later end (a bounded batch per end, in its own
   * statement). From `ENDED_REPLY_GRACE.minMs` to `maxMs`; give every server the same value.
   * @default 60000 (`ENDED_REPLY_GRACE.defaultMs`)
   */
  readonly endedReplyGraceMs?: number;
  /** How the change feed (`watchChat`) learns of changes. */
  readonly changeFeed?: ChangeFeedOptions;
}

/** Options of the change feed ({@link PostgresContextStoreOptions.changeFeed}). */
export interface ChangeFeedOptions {
  /**
   * LISTEN on a connection of its own (opened by the first watcher, closed with the last) for
   * the notices the live-reply writes send. Set it to false behind PgBouncer in transaction mode,
   * where LISTEN does not work: the poll then carries every notice.
   * @default true
   */
  readonly listen?: boolean;
  /**
   * How often the watched chats are polled, in milliseconds (one query for all of them), for
   * the writes that send no notice (a plain commit, a branch write, a deleted chat), and for
   * everything when `listen` is false. Nothing is polled while nothing watches.
   * @default 500
   */
  readonly pollIntervalMs?: number;
}

/** The pool settings the store uses for a pool it opens: small, because an app often runs many servers. */
export const DEFAULT_POOL_OPTIONS: Readonly<PostgresConnectionOptions> = Object.freeze({
  max: 3,
  idle_timeout: 30,
  connect_timeout: 10,
});

/** What the constructor makes of its options: the client, whether the store owns it, the tables. */
export interface ResolvedStoreOptions {
  readonly sql: PostgresClient;
  readonly ownsClient: boolean;
  readonly migrate: boolean;
  readonly names: TableNames;
  readonly clock: () => number;
  readonly endedReplyGraceMs: number;
  readonly changeFeed: { readonly listen: boolean; readonly pollIntervalMs: number };
}

/** The default of {@link ChangeFeedOptions.pollIntervalMs}. */
export const DEFAULT_POLL_INTERVAL_MS = 500;

function liveOptions(
  method: string,
  options: PostgresContextStoreOptions,
): Pick<ResolvedStoreOptions, 'clock' | 'endedReplyGraceMs' | 'changeFeed'> {
  const { clock, changeFeed } = options;
  if (clock !== undefined && typeof clock !== 'function') {
    throw new ValidationError(`${method}: clock must be a function returning milliseconds.`, {
      issues: [{ path: 'clock', message: 'expected a function' }],
    });
  }
  if (changeFeed !== undefined && (typeof changeFeed !== 'object' || changeFeed === null)) {
    throw new ValidationError(`${method}: changeFeed must be an object.`, {
      issues: [{ path: 'changeFeed', message: 'expected an object' }],
    });
  }
  assertOptionalBoolean(method, 'changeFeed.listen', changeFeed?.listen);
  const interval = changeFeed?.pollIntervalMs;
  if (
    interval !== undefined &&
    (!Number.isInteger(interval) || interval < 1 || interval > 60_000)
  ) {
    const message = `expected an integer of milliseconds from 1 to 60000, received ${String(interval)}`;
    throw new ValidationError(`${method}: changeFeed.pollIntervalMs ${message}.`, {
      issues: [{ path: 'changeFeed.pollIntervalMs', message }],
    });
  }
  return {
    clock: clock ?? Date.now,
    endedReplyGraceMs: endedReplyGraceOption(method, options.endedReplyGraceMs),
    changeFeed: {
      listen: changeFeed?.listen ?? true,
      pollIntervalMs: interval ?? DEFAULT_POLL_INTERVAL_MS,
    },
  };
}

/**
 * Checks the options of `new PostgresContextStore(options)` and opens the pool when the store
 * owns it (never before every option is checked).
 */
export function resolveStoreOptions(
  options: string | PostgresContextStoreOptions,
): ResolvedStoreOptions {
  const method = 'new PostgresContextStore(options)';
  const resolved: PostgresContextStoreOptions =
    typeof options === 'string' ? { connectionString: options } : options;
  if (typeof resolved !== 'object' || resolved === null) {
    throw new ValidationError(`${method}: options must be a connection string or an object.`, {
      issues: [{ path: 'options', message: 'expected a string or an object' }],
    });
  }
  const names = resolveTableNames(method, resolved);
  assertOptionalBoolean(method, 'migrate', resolved.migrate);
  const live = liveOptions(method, resolved);
  const migrate = resolved.migrate ?? true;
  const given = [resolved.sql, resolved.connectionString].filter(
    (value) => value !== undefined,
  ).length;
  if (given > 1) {
    throw new ValidationError(
      `${method}: give either sql (a client you own) or connectionString, not both.`,
      {
        issues: [{ path: 'sql', message: 'sql and connectionString are exclusive' }],
      },
    );
  }
  if (resolved.sql !== undefined) {
    if (
      typeof resolved.sql !== 'function' ||
      typeof (resolved.sql as { unsafe?: unknown }).unsafe !== 'function'
    ) {
      throw new ValidationError(
        `${method}: sql must be a postgres.js client (the function postgres() returns).`,
        {
          issues: [{ path: 'sql', message: 'expected a postgres.js Sql instance' }],
        },
      );
    }
    if (resolved.connection !== undefined) {
      throw new ValidationError(
        `${method}: connection options apply to a pool the store opens; they cannot change the client given as sql.`,
        {
          issues: [{ path: 'connection', message: 'not allowed together with sql' }],
        },
      );
    }
    return { sql: resolved.sql, ownsClient: false, migrate, names, ...live };
  }
  if (
    resolved.connectionString !== undefined &&
    (typeof resolved.connectionString !== 'string' || resolved.connectionString === '')
  ) {
    throw new ValidationError(`${method}: connectionString must be a non-empty string.`, {
      issues: [{ path: 'connectionString', message: 'expected a non-empty string' }],
    });
  }
  if (resolved.connectionString === undefined && resolved.connection === undefined) {
    throw new ValidationError(
      `${method}: give sql (a postgres.js client), connectionString, or connection options.`,
      {
        issues: [{ path: 'options', message: 'no way to reach the database' }],
      },
    );
  }
  const poolOptions: PostgresConnectionOptions = {
    ...DEFAULT_POOL_OPTIONS,
    onnotice: () => {},
    ...resolved.connection,
  };
  const sql = (resolved.connectionString === undefined
    ? postgres(poolOptions)
    : postgres(resolved.connectionString, poolOptions)) as unknown as PostgresClient;
  return { sql, ownsClient: true, migrate, names, ...live };
}
