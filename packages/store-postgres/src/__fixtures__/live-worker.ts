// A child process for the live-reply tests across processes (the conformance kit's
// `runLiveWorker`: its commands are documented there). Usage:
//   node --import tsx live-worker.ts serve <url> <schema>
//   node --import tsx live-worker.ts watch <url> <schema> <chatId> <unsubscribe|close>
// The watch gives the store a client of its own (`sql`) and ends it after: the process must then
// exit by itself, the feed's LISTEN connection and timers gone, though the store was never closed.
import { runLiveWorker } from '@ctxgraph/conformance/process';
import postgres from 'postgres';
import { PostgresContextStore } from '../postgres-context-store';

runLiveWorker({
  storeArguments: 2,
  open: (mode, [url, schema]) => {
    if (mode === 'serve') {
      return {
        store: new PostgresContextStore({
          connectionString: url as string,
          schema: schema as string,
          connection: { max: 1 },
        }),
      };
    }
    const sql = postgres(url as string, { max: 1, onnotice: () => {} });
    return {
      store: new PostgresContextStore({ sql, schema: schema as string }),
      release: () => sql.end(),
    };
  },
});
