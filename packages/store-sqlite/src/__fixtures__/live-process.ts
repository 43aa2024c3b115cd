import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const workerPath = fileURLToPath(new URL('./live-worker.ts', import.meta.url));
const packageDirectory = fileURLToPath(new URL('../..', import.meta.url));

/** How a worker process ended. */
export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/**
 * A live-worker process: JSON commands in on stdin, one JSON answer line out per command, in
 * order. Every wait is for the process (an answer, its exit), never for time.
 */
export class LiveWorker {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #answers: ((line: string) => void)[] = [];
  readonly #lines: string[] = [];
  readonly exited: Promise<WorkerExit>;
  #gone = false;

  constructor(args: readonly string[]) {
    // tsx (a devDependency) runs the TypeScript worker; cwd makes `--import tsx` resolve here.
    this.#child = spawn(process.execPath, ['--import', 'tsx', workerPath, ...args], {
      cwd: packageDirectory,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    this.#child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      const waiting = this.#answers.shift();
      if (waiting === undefined) this.#lines.push(line);
      else waiting(line);
    });
    this.exited = new Promise((resolve) => {
      this.#child.on('close', (code, signal) => {
        this.#gone = true;
        resolve({ code, signal, stderr });
      });
    });
  }

  /** The next line the worker prints, parsed. */
  next(): Promise<Record<string, unknown>> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(JSON.parse(line));
    return new Promise((resolve, reject) => {
      this.#answers.push((text) => resolve(JSON.parse(text)));
      void this.exited.then((exit) =>
        reject(
          new Error(
            `the worker exited (${exit.code ?? exit.signal}) before answering: ${exit.stderr}`,
          ),
        ),
      );
    });
  }

  /** Sends a command and returns its answer (rejects when the answer is an error). */
  async send(command: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.#child.stdin.write(`${JSON.stringify(command)}\n`);
    const answer = await this.next();
    if (typeof answer.error === 'string') throw new Error(`worker: ${answer.error}`);
    return answer;
  }

  /** Ends the worker's input: a serving worker closes its store and exits. */
  finish(): Promise<WorkerExit> {
    this.#child.stdin.end();
    return this.exited;
  }

  /** Kills the worker at once (SIGKILL: no cleanup of any kind) and waits for it to be gone. */
  kill(): Promise<WorkerExit> {
    if (!this.#gone) this.#child.kill('SIGKILL');
    return this.exited;
  }
}
