export { InMemoryContextStore, type InMemoryContextStoreOptions } from './in-memory-context-store';
