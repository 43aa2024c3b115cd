// The PostgreSQL server the Postgres suites share: it starts as root or not, lives directly under
// the OS temp directory, and PgBouncer in front of it pools by transaction with prepare: false.

import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findPgbouncer,
  type PostgresServer,
  PostgresServerError,
  startPostgresServer,
} from './postgres-server.ts';

const given = process.env.DATABASE_URL ?? '';
const ci = process.env.CI === 'true' || process.env.CI === '1';

describe('startPostgresServer', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer({ pgbouncer: false });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('gives a server that answers, never as root', async () => {
    const sql = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`SELECT current_user AS name, 1 + ${1}::int AS two`;
      expect(row?.two).toBe(2);
      if (given === '') {
        const [owner] = await sql`SELECT current_setting('data_directory') AS directory`;
        // Directly under the OS temp directory, away from wherever the checkout lives.
        expect(dirname(owner?.directory)).toBe(tmpdir());
      }
    } finally {
      await sql.end();
    }
  });

  it('never shows the password in its description', () => {
    const password = new URL(server.url).password;
    if (password !== '') expect(server.description).not.toContain(password);
  });
});

describe.skipIf(findPgbouncer() === undefined && !ci)('startPostgresServer with PgBouncer', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer({ pgbouncer: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('puts PgBouncer in front, and its URL turns prepared statements off', async () => {
    const url = new URL(server.url);
    expect(url.searchParams.get('prepare')).toBe('false');
    expect(server.description).toContain('through PgBouncer (transaction pooling)');
    const sql = postgres(server.url, { max: 4, onnotice: () => {} });
    try {
      const [row] = await sql`SELECT inet_server_port() AS port`;
      expect(row?.port).not.toBe(Number(url.port));
      // Transaction-scoped advisory locks work through a transaction pooler.
      await sql.begin(async (transaction) => {
        await transaction`SELECT pg_advisory_xact_lock(42)`;
        const [inside] = await transaction`SELECT ${'x'}::text AS value`;
        expect(inside?.value).toBe('x');
      });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) => sql`SELECT ${index}::int AS value`),
      );
      expect(results.map((result) => result[0]?.value)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const [prepared] = await sql`SELECT count(*)::int AS count FROM pg_prepared_statements`;
      expect(prepared?.count).toBe(0);
    } finally {
      await sql.end();
    }
  });
});

describe.skipIf(findPgbouncer() === undefined)('startPostgresServer failures', () => {
  it('a URL PgBouncer cannot use fails with one sentence that says what to do', async () => {
    const failure = await startPostgresServer({ databaseUrl: 'not a url', pgbouncer: true }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(PostgresServerError);
    const message = (failure as PostgresServerError).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(/^DATABASE_URL .*: give it as postgres:\/\/.+\.$/);
    expect((failure as PostgresServerError).stack).toBe(`PostgresServerError: ${message}`);
  });
});
