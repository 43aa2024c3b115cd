// Runs a README's TypeScript examples as written, so a test fails whenever a README drifts from
// the code. Imported by relative path from the README tests (tooling/readme-examples.test.ts for
// the root README, and the packages' own `readme-examples.test.ts`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** One runnable program taken from a README. */
export interface ReadmeProgram {
  /** The program's source: one ```ts block, plus the blocks that continue it. */
  readonly code: string;
  /** Line of the README where its first block starts (1-based), to name it in a test title. */
  readonly line: number;
  /** The bare module specifiers it imports (`ai/test`, `@ctxgraph/engine`, …). */
  readonly imports: readonly string[];
}

const importPattern = /^\s*import\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

/**
 * The ```ts blocks of a Markdown file as programs. A block that imports something starts a new
 * program; a block without imports continues the program before it (an API section's snippet
 * that uses the example's `context`, say). Blocks fenced as anything but `ts` (`sh`, `text`, …)
 * are not run.
 */
export function readmePrograms(markdown: string): ReadmeProgram[] {
  const programs: { code: string; line: number; imports: string[] }[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    if (!/^```ts\s*$/.test(lines[index] ?? '')) continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end] ?? '')) end += 1;
    const code = lines.slice(start, end).join('\n');
    const imports = [...code.matchAll(importPattern)].map((match) => match[1] ?? match[2] ?? '');
    const previous = programs.at(-1);
    if (imports.length === 0 && previous !== undefined) {
      previous.code += `\n\n// README line ${start + 1}\n${code}`;
    } else {
      programs.push({ code, line: start, imports });
    }
    index = end;
  }
  return programs;
}

/**
 * The npm package names a README's ```sh blocks install (`npm install a b` lines), for checking
 * that the install line covers what the examples import.
 */
export function installedPackages(markdown: string): string[] {
  const names: string[] = [];
  for (const match of markdown.matchAll(/^\s*npm (?:install|i|add)\s+([^\n#]+)/gm)) {
    for (const word of (match[1] ?? '').trim().split(/\s+/)) {
      if (!word.startsWith('-')) names.push(word);
    }
  }
  return names;
}

/** The npm package a bare specifier belongs to (`ai/test` → `ai`), or undefined for `node:` ones. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || specifier.startsWith('.')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * What the program should print: the comments of its `console.log(...); // printed text` lines,
 * in order. Programs without such lines are only checked to run.
 */
export function expectedOutput(program: ReadmeProgram): string[] {
  return [...program.code.matchAll(/^\s*console\.log\(.*\);\s*\/\/\s*(.*?)\s*$/gm)].map(
    (match) => match[1] ?? '',
  );
}

/** Options of {@link runReadmeProgram}. */
export interface RunReadmeProgramOptions {
  /**
   * The package whose dependencies the program's imports resolve from, as a user's app resolves
   * them from its own node_modules. The program file is written under its `node_modules/.cache`.
   */
  readonly packageFolder: string;
  /** Specifiers to swap before running, e.g. a package's own name for its `src/index.ts`. */
  readonly replaceImports?: Readonly<Record<string, string>>;
  /** @default 60_000 */
  readonly timeoutMs?: number;
  /** The `node` binary that runs the program. @default process.execPath */
  readonly node?: string;
  /**
   * Modules loaded first (`--import`), as URLs. Default: tsx, then the AI SDK major's hooks
   * (tooling/ai-major), so the program's `ai` is the major's as in the workspace's tests.
   */
  readonly preload?: readonly string[];
}

/** What a program run printed, and how it ended. */
export interface ReadmeProgramRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Writes the program (imports swapped) where its imports resolve, and returns the file. */
async function writeProgram(
  program: ReadmeProgram,
  options: RunReadmeProgramOptions,
): Promise<string> {
  let code = program.code;
  for (const [from, to] of Object.entries(options.replaceImports ?? {})) {
    const quoted = new RegExp(`(['"])${from.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\1`, 'g');
    code = code.replace(quoted, JSON.stringify(to));
  }
  const cache = join(options.packageFolder, 'node_modules', '.cache', 'ctxgraph-readme-examples');
  await mkdir(cache, { recursive: true });
  const file = join(cache, `readme-line-${program.line}-${randomBytes(4).toString('hex')}.mts`);
  await writeFile(file, `${code}\n`);
  return file;
}

/** Runs a command to its end, collecting what it prints; kills it after `timeoutMs`. */
function runToEnd(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<ReadmeProgramRun> {
  return new Promise<ReadmeProgramRun>((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    });
  });
}

/**
 * Runs a program in a child Node process (through tsx, as a `.mts` module, so top-level await
 * works), with a fresh empty working directory under the OS temp directory, which is removed
 * afterwards together with the program file.
 */
export async function runReadmeProgram(
  program: ReadmeProgram,
  options: RunReadmeProgramOptions,
): Promise<ReadmeProgramRun> {
  const file = await writeProgram(program, options);
  const workingDirectory = await mkdtemp(join(tmpdir(), 'ctxgraph-readme-'));
  const preload = options.preload ?? [
    pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
    new URL('./ai-major/register.mjs', import.meta.url).href,
  ];
  try {
    return await runToEnd(
      options.node ?? process.execPath,
      [...preload.flatMap((url) => ['--import', url]), file],
      workingDirectory,
      options.timeoutMs ?? 60_000,
    );
  } finally {
    await rm(file, { force: true });
    await rm(workingDirectory, { recursive: true, force: true });
  }
}

/**
 * Type-checks a program as a strict TypeScript project of a user would (`strict`, bundler
 * resolution, Node types), against the packages' published declarations. Returns tsc's output
 * and exit code (0 when it type-checks).
 */
export async function typecheckReadmeProgram(
  program: ReadmeProgram,
  options: RunReadmeProgramOptions,
): Promise<ReadmeProgramRun> {
  const file = await writeProgram(program, options);
  const tsc = join(
    dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
    'bin',
    'tsc',
  );
  try {
    return await runToEnd(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--lib',
        'es2023',
        '--module',
        'preserve',
        '--moduleResolution',
        'bundler',
        '--types',
        'node',
        '--skipLibCheck',
        '--ignoreConfig',
        file,
      ],
      options.packageFolder,
      options.timeoutMs ?? 60_000,
    );
  } finally {
    await rm(file, { force: true });
  }
}
