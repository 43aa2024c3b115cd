import { CtxGraphError, StoreError } from '@ctxgraph/fragments-core';

// What each SQLite result code means for someone holding a ctxgraph store, and what to do about
// it. better-sqlite3 reports extended codes (SQLITE_READONLY_DBMOVED, ...), so prefixes are matched.
const HINTS: ReadonlyArray<readonly [prefix: string, hint: string]> = [
  [
    'SQLITE_NOTADB',
    'the file is not a SQLite database (or is encrypted). Point the store at a SQLite file or a new path; the file was left as it was',
  ],
  [
    'SQLITE_CORRUPT',
    'the database file is corrupt ("database disk image is malformed"). Restore it from a backup; the store wrote nothing',
  ],
  [
    'SQLITE_READONLY',
    'the database is read-only (opened with readonly: true, or the file or its directory is not writable). Nothing was written',
  ],
  [
    'SQLITE_BUSY',
    'another connection held the database lock longer than busyTimeout. Nothing was written; retry, or raise busyTimeout',
  ],
  [
    'SQLITE_LOCKED',
    'the database is locked by another statement of the same connection. Nothing was written',
  ],
  [
    'SQLITE_CANTOPEN',
    'the file cannot be opened (its directory is missing, a directory is in its place, or permission is denied)',
  ],
  ['SQLITE_FULL', 'the disk is full. Nothing was written; free space and retry'],
  ['SQLITE_TOOBIG', 'a value is larger than SQLite accepts. Nothing was written'],
  ['SQLITE_IOERR', 'the disk reported an I/O error. The transaction was rolled back'],
  ['SQLITE_PERM', 'permission was denied'],
];

function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * Turns whatever the driver threw into a ctxgraph error that names the database file and says what
 * to do. ctxgraph errors (validation, conflicts, not found) pass through unchanged.
 */
export function toStoreError(error: unknown, location: string, action: string): Error {
  if (CtxGraphError.isInstance(error)) return error as Error;
  const detail = error instanceof Error ? error.message : String(error);
  const code = sqliteCode(error);
  const hint =
    code === undefined ? undefined : HINTS.find(([prefix]) => code.startsWith(prefix))?.[1];
  const reason = hint === undefined ? detail : `${hint} (${code}: ${detail})`;
  return new StoreError(`SqliteContextStore at "${location}": ${action} failed: ${reason}.`, {
    cause: error,
  });
}
