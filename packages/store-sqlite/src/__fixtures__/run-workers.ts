import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const workerPath = fileURLToPath(new URL('./append-worker.ts', import.meta.url));
const packageDirectory = fileURLToPath(new URL('../..', import.meta.url));

/** Runs one append-worker process; resolves with its parsed stdout, rejects with its stderr. */
export function runWorker(args: readonly string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    // tsx (a devDependency) runs the TypeScript worker; cwd makes `--import tsx` resolve here.
    const child = spawn(process.execPath, ['--import', 'tsx', workerPath, ...args], {
      cwd: packageDirectory,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`worker ${args.join(' ')} exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}
