export {
  migrateSqliteDatabase,
  readSqliteSchemaVersion,
  SQLITE_MIGRATIONS,
  SQLITE_SCHEMA_VERSION,
  type SqliteMigration,
  type SqliteMigrationOptions,
  type SqliteMigrationResult,
  type SqliteMigrationSqlOptions,
  sqliteMigrationSql,
} from './migrations/sqlite-migrations';
export { DEFAULT_TABLE_PREFIX, type TableNames, tableNames } from './schema/table-names';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  SqliteContextStore,
  type SqliteContextStoreOptions,
  type SqliteStoreCommonOptions,
  type SqliteStoreDatabaseOptions,
  type SqliteStorePathOptions,
  type SqliteSynchronous,
} from './sqlite-context-store';
