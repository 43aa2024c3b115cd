// `@ctxgraph/conformance/process`: helpers for tests of a store across real processes (Node
// only, apart from the runtime-neutral kits).
export {
  type LiveWorkerOptions,
  type OpenedWorkerStore,
  runLiveWorker,
} from './live-worker';
export { type WorkerExit, WorkerProcess, type WorkerProcessOptions } from './worker-process';
