export { InMemoryContextStore } from './in-memory-context-store';
