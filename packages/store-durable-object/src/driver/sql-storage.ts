// The part of a Durable Object's storage this store uses, typed structurally so the package
// needs no ambient Workers types: `ctx.storage` of a SQLite-backed Durable Object has it.

/** A value SQLite hands back or takes as a binding. */
export type SqlValue = string | number | null | ArrayBuffer;

/** The cursor `exec` returns (`SqlStorageCursor`); `toArray` and `raw` are used. */
export interface SqlCursorLike {
  /** Every remaining row, as objects keyed by column name. */
  toArray(): Record<string, SqlValue>[];
  /** The remaining rows as arrays of values in column order (no object a row: cheaper). */
  raw(): IterableIterator<SqlValue[]>;
}

/** `ctx.storage.sql`: synchronous SQL over the object's own SQLite database. */
export interface SqlStorageLike {
  /** Runs one statement (or several, without bindings); `?` placeholders take `bindings` in order. */
  exec(query: string, ...bindings: SqlValue[]): SqlCursorLike;
}

/**
 * The storage of a SQLite-backed Durable Object (`ctx.storage`): its SQL API and the synchronous
 * transaction that replaces `BEGIN`/`COMMIT`, which the platform refuses.
 */
export interface DurableObjectStorageLike {
  /** The object's SQLite database. */
  readonly sql: SqlStorageLike;
  /** Runs `closure` in a transaction: committed when it returns, rolled back when it throws. */
  transactionSync<T>(closure: () => T): T;
}
