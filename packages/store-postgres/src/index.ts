export {
  getMigrationSql,
  MIGRATIONS,
  type Migration,
  type MigrationSqlOptions,
  SCHEMA_VERSION,
} from './migrations/migrations';
export {
  type ChangeFeedOptions,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_POOL_OPTIONS,
  type PostgresClient,
  type PostgresConnectionOptions,
  PostgresContextStore,
  type PostgresContextStoreOptions,
} from './postgres-context-store';
export { PostgresStoreError, type PostgresStoreErrorOptions } from './postgres-store-error';
export {
  DEFAULT_SCHEMA,
  DEFAULT_SEARCH_LANGUAGE,
  DEFAULT_TABLE_PREFIX,
  MAX_TABLE_PREFIX_LENGTH,
  type TableNameOptions,
  type TableNames,
} from './schema/table-names';
