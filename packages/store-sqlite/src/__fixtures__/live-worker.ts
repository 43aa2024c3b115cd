// A child process for the live-reply tests across processes (the conformance kit's
// `runLiveWorker`: its commands are documented there). Usage:
//   node --import tsx live-worker.ts serve <file>
//   node --import tsx live-worker.ts watch <file> <chatId> <unsubscribe|close>
import { runLiveWorker } from '@ctxgraph/conformance/process';
import { SqliteContextStore } from '../sqlite-context-store';

runLiveWorker({
  storeArguments: 1,
  open: (_mode, [path]) => ({
    store: new SqliteContextStore({ path: path as string, busyTimeout: 30_000 }),
  }),
});
