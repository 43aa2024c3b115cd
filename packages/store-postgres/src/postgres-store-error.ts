import { CtxGraphError, SchemaVersionError, StoreError } from '@ctxgraph/fragments-core';

/** Options of {@link PostgresStoreError}. */
export interface PostgresStoreErrorOptions {
  /** The driver error, kept as `cause`. */
  readonly cause?: unknown;
  /** The store method that failed, e.g. `commit`. */
  readonly operation: string;
  /** The SQLSTATE of a server error (`57014`), or the driver's code (`CONNECTION_CLOSED`). */
  readonly code?: string | undefined;
  /** True when running the same call again may well succeed (lost connection, timeout, deadlock). */
  readonly retryable: boolean;
}

/**
 * PostgreSQL or the connection to it failed a store call: the connection dropped, a statement
 * timed out, a constraint refused a row. The message says what happened and whether anything
 * was written; the driver's error is the `cause`.
 */
export class PostgresStoreError extends StoreError {
  static override readonly errorName: string = 'PostgresStoreError';
  /** The store method that failed. */
  readonly operation: string;
  /** The SQLSTATE or driver code, when there is one. */
  readonly code: string | undefined;
  /** True when running the same call again may well succeed. */
  readonly retryable: boolean;

  constructor(message: string, options: PostgresStoreErrorOptions) {
    super(message, { cause: options.cause });
    this.operation = options.operation;
    this.code = options.code;
    this.retryable = options.retryable;
  }
}

interface DriverErrorShape {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly constraint_name?: unknown;
  readonly table_name?: unknown;
  readonly detail?: unknown;
}

// postgres.js reports connection trouble with these codes (not SQLSTATEs) and Node adds its own.
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

/**
 * What a write call says about its own outcome when the connection dropped: a statement that
 * was cut off is rolled back by PostgreSQL, but if the connection died while the server was
 * confirming the commit, the caller cannot know; a head re-read settles it.
 */
const UNSURE_WRITE =
  'PostgreSQL rolls back a transaction whose connection drops before it commits, so nothing of it was written unless the connection dropped while the commit itself was being confirmed; re-read the head to be sure before retrying.';

/**
 * Turns whatever the driver threw into a ctxgraph error with a message that says what happened.
 * ctxgraph errors pass through unchanged.
 */
export function toStoreError(operation: string, error: unknown, writes: boolean): CtxGraphError {
  if (CtxGraphError.isInstance(error)) return error;
  const shape: DriverErrorShape =
    typeof error === 'object' && error !== null ? (error as DriverErrorShape) : {};
  const code = typeof shape.code === 'string' ? shape.code : undefined;
  const detail = typeof shape.message === 'string' ? shape.message : String(error);
  const written = writes ? ' Nothing was written.' : '';
  const make = (message: string, retryable: boolean): PostgresStoreError =>
    new PostgresStoreError(`${operation}: ${message}`, {
      cause: error,
      operation,
      code,
      retryable,
    });

  if (code !== undefined && CONNECTION_CODES.has(code)) {
    const outcome = writes ? ` ${UNSURE_WRITE}` : '';
    return make(
      `the connection to PostgreSQL was lost or could not be opened (${code}: ${detail}).${outcome}`,
      true,
    );
  }
  switch (code) {
    case '57014':
      return make(
        `PostgreSQL cancelled the statement (statement_timeout reached or the query was cancelled: ${detail}).${written}`,
        true,
      );
    case '57P01':
    case '57P02':
    case '57P03':
      return make(
        `PostgreSQL terminated the connection (${detail}: an administrator command such as pg_terminate_backend, or a server shutdown).${writes ? ` ${UNSURE_WRITE}` : ''}`,
        true,
      );
    case '25P03':
      return make(
        `PostgreSQL closed the connection because the transaction sat idle too long (${detail}).${written}`,
        true,
      );
    case '40P01':
      return make(
        `PostgreSQL aborted the transaction to break a deadlock (${detail}).${written} Retry the call.`,
        true,
      );
    case '40001':
      return make(
        `PostgreSQL aborted the transaction on a serialization failure (${detail}).${written} Retry the call.`,
        true,
      );
    case '55P03':
      return make(
        `a row or table lock could not be taken in time (lock_timeout: ${detail}).${written}`,
        true,
      );
    case '23505':
      return make(
        `a unique constraint refused the row (${String(shape.constraint_name ?? 'unknown constraint')}: ${String(shape.detail ?? detail)}).${written} The stored data may have been changed outside this store.`,
        false,
      );
    case '23503':
      return make(
        `a foreign key refused the row (${String(shape.constraint_name ?? 'unknown constraint')}: ${String(shape.detail ?? detail)}).${written}`,
        false,
      );
    case '42P01':
    case '3F000':
      return new SchemaVersionError(
        `${operation}: the ctxgraph tables are missing (${detail}). Run store.migrate() (or construct the store without migrate: false) before using it.`,
        { cause: error },
      );
    case '42501':
      return make(
        `the database user lacks a privilege this call needs (${detail}).${written}`,
        false,
      );
    case '53300':
      return make(
        `PostgreSQL has no free connection slots (${detail}). Lower the pool size (max) or use a pooler.`,
        true,
      );
    case '28P01':
    case '28000':
      return make(`PostgreSQL refused the login (${detail}).`, false);
    case '3D000':
      return make(`the database does not exist (${detail}).`, false);
    default:
      return make(
        `PostgreSQL reported an error${code === undefined ? '' : ` (${code})`}: ${detail}.${written}`,
        false,
      );
  }
}
