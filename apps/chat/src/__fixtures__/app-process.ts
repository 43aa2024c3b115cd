// The app as its users run it: its start command (src/server/main.ts, what `start` runs once
// built) in a child process, on a port the OS picks, configured by its environment only.
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const main = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'server', 'main.ts');
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
// The AI SDK major of the test run (tooling/ai-major): the child runs the one the tests run.
const aiMajor = new URL('../../../../tooling/ai-major/register.mjs', import.meta.url).href;

/** An app process that printed its URL. */
export interface AppProcess {
  /** Where it serves, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, as a deploy stops it: resolves with its exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, as a crash or an out-of-memory kill ends it: resolves once it is gone. */
  kill(): Promise<void>;
}

/** An app process being started: its child at once, its URL once it printed it. */
export interface StartingAppProcess {
  readonly child: ChildProcess;
  /** The running process; rejects with its output when it exits before printing its URL. */
  readonly ready: Promise<AppProcess>;
}

/**
 * Starts the app's start command with `env` over this process's environment (without any model
 * provider's API key, so the mock answers), in `cwd`.
 */
export function spawnAppProcess(env: Record<string, string>, cwd: string): StartingAppProcess {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'AI_GATEWAY_API_KEY', 'CHAT_MODEL'])
    delete clean[key];
  const child = spawn(process.execPath, ['--import', tsx, '--import', aiMajor, main], {
    cwd,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done(child.exitCode);
    else child.once('exit', (code) => done(code));
  });
  const ready = new Promise<AppProcess>((resolveReady, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /running at (http:\/\/(?:127\.0\.0\.1|localhost):\d+)/.exec(output);
      if (match?.[1]) {
        resolveReady({
          url: match[1],
          child,
          output: () => output,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            return exited;
          },
          async kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) =>
      reject(new Error(`The app exited with ${code} before printing its URL: ${output}`)),
    );
  });
  return { child, ready };
}

/** {@link spawnAppProcess}, resolved once the app serves. */
export function startAppProcess(env: Record<string, string>, cwd: string): Promise<AppProcess> {
  return spawnAppProcess(env, cwd).ready;
}
