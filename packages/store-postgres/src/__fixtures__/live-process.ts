import { WorkerProcess } from '@ctxgraph/conformance/process';

/**
 * A live-worker process of this store (`live-worker.ts`, run by tsx from the package's
 * directory): the conformance kit's {@link WorkerProcess}.
 */
export class LiveWorker extends WorkerProcess {
  constructor(args: readonly string[]) {
    super({
      script: new URL('./live-worker.ts', import.meta.url),
      cwd: new URL('../..', import.meta.url),
      args,
    });
  }
}
