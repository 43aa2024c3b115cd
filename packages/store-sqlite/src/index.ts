export {
  getMigrationSql,
  MIGRATIONS,
  type Migration,
  type MigrationSqlOptions,
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SCHEMA_VERSION,
  type SqliteMigrationOptions,
  type SqliteMigrationResult,
} from './migrations/migrations';
export { DEFAULT_TABLE_PREFIX, type TableNames, tableNames } from './schema/table-names';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
  SqliteContextStore,
  type SqliteContextStoreOptions,
  type SqliteStoreCommonOptions,
  type SqliteStoreDatabaseOptions,
  type SqliteStorePathOptions,
  type SqliteSynchronous,
} from './sqlite-context-store';
