// The start command's contract: PORT, CTXGRAPH_SQLITE and CTXGRAPH_POSTGRES (+ CTXGRAPH_PG_SCHEMA),
// the URL printed when ready, a turn served with the mock model by default, a clean exit on SIGTERM. Runs src/server/main.ts (what
// `start` runs once built) in a child process.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostgresServer, startPostgresServer } from '../../../../tooling/postgres-server.ts';
import { spawnAppProcess } from '../__fixtures__/app-process';

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-start-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function start(env: Record<string, string>): { child: ChildProcess; url: Promise<string> } {
  const { child, ready } = spawnAppProcess(env, directory);
  return { child, url: ready.then((running) => running.url) };
}

describe('the start command', () => {
  it('prints its URL, answers with the mock by default, stores in CTXGRAPH_SQLITE, exits on SIGTERM', async () => {
    const sqlite = join(directory, 'contract.db');
    const { child, url } = start({ PORT: '0', CTXGRAPH_SQLITE: sqlite, MOCK_CHUNK_DELAY_MS: '0' });
    const base = await url;
    const response = await fetch(`${base}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'start-chat',
        trigger: 'submit-message',
        messages: [{ id: 'q', role: 'user', parts: [{ type: 'text', text: 'ping' }] }],
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"type":"text-delta"');
    const stored = (await (await fetch(`${base}/api/chat/start-chat/messages`)).json()) as {
      messages: { parts: { type: string; text?: string }[] }[];
    };
    expect(
      stored.messages.map((message) => message.parts.find((part) => part.type === 'text')?.text),
    ).toEqual(['ping', 'You said: ping']);
    expect(existsSync(sqlite)).toBe(true);
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('CTXGRAPH_POSTGRES wins over CTXGRAPH_SQLITE and creates CTXGRAPH_PG_SCHEMA when missing', async () => {
    const server: PostgresServer = await startPostgresServer();
    const schema = `chat_start_${process.pid}_${Date.now().toString(36)}`;
    const admin = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      const sqlite = join(directory, 'not-used.db');
      const { child, url } = start({
        PORT: '0',
        CTXGRAPH_SQLITE: sqlite,
        CTXGRAPH_POSTGRES: server.url,
        CTXGRAPH_PG_SCHEMA: schema,
        MOCK_CHUNK_DELAY_MS: '0',
      });
      const base = await url;
      const response = await fetch(`${base}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'pg-chat',
          trigger: 'submit-message',
          messages: [{ id: 'q', role: 'user', parts: [{ type: 'text', text: 'ping' }] }],
        }),
      });
      expect(response.status).toBe(200);
      await response.text();
      const rows = await admin.unsafe(
        `SELECT count(*)::int AS n FROM "${schema}".ctxgraph_chats WHERE chat_id = 'pg-chat'`,
      );
      expect(rows[0]?.n).toBe(1);
      expect(existsSync(sqlite)).toBe(false);
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      await server.stop();
    }
  });

  it('refuses a CTXGRAPH_POSTGRES that is no connection string, before serving', async () => {
    const { url } = start({ PORT: '0', CTXGRAPH_POSTGRES: 'not a url' });
    await expect(url).rejects.toThrow(/CTXGRAPH_POSTGRES must be a PostgreSQL connection string/);
  });
});
