/// <reference types="node" />
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** How a worker process ended. */
export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Options of {@link WorkerProcess}. */
export interface WorkerProcessOptions {
  /** The worker's script (a `runLiveWorker` script, or any that answers one line per line). */
  readonly script: string | URL;
  /** Its command-line arguments. */
  readonly args: readonly string[];
  /**
   * The directory it runs in: where `execArgv`'s loaders resolve (the package that has `tsx`
   * among its devDependencies). @default the current directory
   */
  readonly cwd?: string | URL;
  /** Node's options before the script. @default ['--import', 'tsx'] (a TypeScript worker) */
  readonly execArgv?: readonly string[];
}

const path = (value: string | URL): string => (value instanceof URL ? fileURLToPath(value) : value);

/**
 * A worker process for tests across processes: JSON commands in on stdin, one JSON answer line
 * out per command, in order. Every wait is for the process (an answer, its exit), never for an
 * amount of time. Node only.
 *
 * @example
 * ```ts
 * const worker = new WorkerProcess({
 *   script: new URL('./live-worker.ts', import.meta.url),
 *   cwd: new URL('../..', import.meta.url),
 *   args: ['serve', databasePath],
 * });
 * await worker.send({ op: 'ask', chatId: 'c1', replyId: 'r1', owner: 'w1' });
 * await worker.kill(); // SIGKILL: no cleanup of any kind
 * ```
 */
export class WorkerProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #answers: ((line: string) => void)[] = [];
  readonly #lines: string[] = [];
  /** Resolves when the process is gone, with how it ended. */
  readonly exited: Promise<WorkerExit>;
  #gone = false;

  constructor(options: WorkerProcessOptions) {
    this.#child = spawn(
      process.execPath,
      [...(options.execArgv ?? ['--import', 'tsx']), path(options.script), ...options.args],
      {
        ...(options.cwd === undefined ? {} : { cwd: path(options.cwd) }),
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
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

  /** The next line the worker prints, parsed; rejects when it exits first. */
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

  /** Sends a command and returns its answer (rejects when the answer is an `{ error }`). */
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
