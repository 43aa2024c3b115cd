import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer } from '../../../../tooling/postgres-server.ts';
import { hidePassword, openBackend, type PlaygroundBackend } from './open-backend';
import { createPlaygroundApp } from './playground-app';
import type { StoreChoice } from './playground-config';

const context = [
  { type: 'role', text: 'You are terse.' },
  {
    type: 'fragment',
    name: 'notes',
    children: ['plain text child', { type: 'hint', text: 'Be exact.' }],
  },
];

/** Creates a chat with context and two messages, then reads it back through a reopened backend. */
async function roundTrip(choice: StoreChoice, reopen: boolean): Promise<void> {
  let backend: PlaygroundBackend = await openBackend(choice);
  const appFor = (current: PlaygroundBackend) =>
    createPlaygroundApp({
      store: current.store,
      storeDescription: current.description,
      model: null,
      defaultUserId: 'tester',
    });
  try {
    const app = appFor(backend);
    const json = { 'content-type': 'application/json' };
    const created = await (
      await app.request('/api/chats', { method: 'POST', headers: json, body: '{"title":"t"}' })
    ).json();
    const chatId = created.chat.id as string;
    const put = await app.request(`/api/chats/${chatId}/context`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ fragments: context }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    for (const [role, text] of [
      ['user', 'hi'],
      ['assistant', 'hello'],
    ]) {
      const said = await app.request(`/api/chats/${chatId}/messages`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ role, text }),
      });
      expect(said.status).toBe(200);
    }
    if (reopen) {
      await backend.close();
      backend = await openBackend(choice);
    }
    const view = await (await appFor(backend).request(`/api/chats/${chatId}`)).json();
    expect(view.context).toEqual(context);
    expect(view.prompts[0].prompt).toContain('plain text child');
    expect(view.messages.map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
    ]);
  } finally {
    await backend.close();
  }
}

describe('openBackend', () => {
  it('keeps chats and context in memory for STORE=memory', async () => {
    const backend = await openBackend({ kind: 'memory' });
    expect(backend.description.kind).toBe('memory');
    await backend.close();
    await roundTrip({ kind: 'memory' }, false);
  });

  it('creates the SQLite file’s folder and keeps everything across a reopen', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-backend-'));
    try {
      await roundTrip(
        { kind: 'sqlite', path: join(directory, 'nested', 'folder', 'play.db') },
        true,
      );
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('hides the password of a database URL', () => {
    expect(hidePassword('postgres://me:secret@db.local:5432/ctx')).toBe(
      'postgres://me:***@db.local:5432/ctx',
    );
    expect(hidePassword('postgres://db.local/ctx')).toBe('postgres://db.local/ctx');
    expect(hidePassword('not a url')).toBe('postgres (URL not shown)');
  });
});

describe('openBackend with Postgres', () => {
  // DATABASE_URL when given (CI with a server); otherwise a throwaway embedded PostgreSQL. The
  // playground uses the database's default schema, so the test makes a database of its own: it
  // never meets tables another run (or another version of the store) left in a shared one.
  const database = `playground_backend_${process.pid}_${Date.now()}`;
  let url = '';
  let serverUrl = '';
  let stop = async (): Promise<void> => {};

  beforeAll(async () => {
    const server = await startPostgresServer();
    serverUrl = server.url;
    stop = server.stop;
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE DATABASE "${database}"`);
    } finally {
      await admin.end();
    }
    const own = new URL(serverUrl);
    own.pathname = `/${database}`;
    url = own.toString();
  });

  afterAll(async () => {
    if (serverUrl !== '') {
      const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    }
    await stop();
  });

  it('keeps chats and the context side table in the database across a reopen', async () => {
    await roundTrip({ kind: 'postgres', url }, true);
    const backend = await openBackend({ kind: 'postgres', url });
    try {
      // The password never shows; a URL without one (trust auth) has nothing to hide.
      const password = new URL(url).password;
      if (password !== '') {
        expect(backend.description.location).not.toContain(password);
        expect(backend.description.location).toContain('***');
      }
    } finally {
      await backend.close();
    }
  });
});
