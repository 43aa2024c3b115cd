import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HeadConflictError, MessageIdConflictError } from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, it } from 'vitest';
import { adminClient, databaseUrl, dropSchema, randomSchema } from './__fixtures__/test-database';
import { PostgresContextStore } from './postgres-context-store';

const admin = adminClient();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

const workerPath = fileURLToPath(new URL('./__fixtures__/append-worker.ts', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));

function runWorker(
  schema: string,
  chatId: string,
  workerId: string,
  turns: number,
): Promise<{ committed: number; conflicts: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', workerPath, databaseUrl(), schema, chatId, workerId, String(turns)],
      {
        cwd: packageDir,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
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
      if (code === 0)
        resolve(JSON.parse(stdout.trim()) as { committed: number; conflicts: number });
      else reject(new Error(`worker ${workerId} exited with ${code}: ${stderr}`));
    });
  });
}

/** Every turn appears in the chain exactly once, user before its assistant, sequences increasing. */
async function expectEveryTurnOnce(
  store: PostgresContextStore,
  chatId: string,
  workers: readonly string[],
  turns: number,
): Promise<void> {
  const head = await store.getHead({ chatId, branch: 'main' });
  expect(head.headMessageId).not.toBeNull();
  const chain = await store.getChain({ chatId, headMessageId: head.headMessageId as string });
  const ids = chain.nodes.map((node) => node.id);
  const expected = workers.flatMap((worker) =>
    Array.from({ length: turns }, (_, turn) => [
      `${worker}-t${turn}-user`,
      `${worker}-t${turn}-assistant`,
    ]).flat(),
  );
  expect(ids).toHaveLength(expected.length);
  expect([...ids].sort()).toEqual([...expected].sort());
  for (let index = 0; index < ids.length; index += 2) {
    expect(ids[index + 1]).toBe((ids[index] as string).replace(/-user$/, '-assistant'));
  }
  const sequences = chain.nodes.map((node) => node.sequence);
  expect(sequences).toEqual([...sequences].sort((left, right) => left - right));
  // Nothing was written outside the chain (a lost race that still wrote a node would show here).
  expect((await store.getGraph(chatId)).nodes).toHaveLength(expected.length);
  expect(head.revision).toBe(workers.length * turns);
}

describe('concurrent writers on one chat never lose a turn', () => {
  it('4 processes, each with its own pool, appending with re-read and retry', async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const store = new PostgresContextStore({ connectionString: databaseUrl(), schema });
    try {
      await store.openChat({ chatId: 'shared', userId: 'u' });
      const workers = ['p0', 'p1', 'p2', 'p3'];
      const turns = 15;
      const results = await Promise.all(
        workers.map((worker) => runWorker(schema, 'shared', worker, turns)),
      );
      expect(results.map((result) => result.committed)).toEqual(workers.map(() => turns));
      await expectEveryTurnOnce(store, 'shared', workers, turns);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('8 connections in one process, through separate store objects', async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const stores = Array.from(
      { length: 8 },
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          schema,
          connection: { max: 1 },
        }),
    );
    try {
      await stores[0]?.openChat({ chatId: 'shared', userId: 'u' });
      const workers = stores.map((_, index) => `w${index}`);
      const turns = 10;
      await Promise.all(
        stores.map(async (store, index) => {
          for (let turn = 0; turn < turns; turn += 1) {
            const ids = [`w${index}-t${turn}-user`, `w${index}-t${turn}-assistant`];
            for (;;) {
              const head = await store.getHead({ chatId: 'shared', branch: 'main' });
              try {
                await store.commit({
                  chatId: 'shared',
                  branch: 'main',
                  expectedHeadId: head.headMessageId,
                  messages: ids.map((id, position) => ({
                    id,
                    message: { id, role: position === 0 ? 'user' : 'assistant', parts: [] },
                  })),
                });
                break;
              } catch (error) {
                if (!HeadConflictError.isInstance(error)) throw error;
                expect(error.currentHeadId).not.toBe(head.headMessageId);
              }
            }
          }
        }),
      );
      await expectEveryTurnOnce(stores[0] as PostgresContextStore, 'shared', workers, turns);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  }, 120_000);

  it('concurrent first opens of one chat all succeed, and exactly one creates it', async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const stores = Array.from(
      { length: 6 },
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          schema,
          connection: { max: 1 },
        }),
    );
    try {
      await stores[0]?.migrate();
      for (let round = 0; round < 5; round += 1) {
        const results = await Promise.all(
          stores.map((store) => store.openChat({ chatId: `race-${round}`, userId: 'u' })),
        );
        expect(results.filter((result) => result.created)).toHaveLength(1);
        for (const result of results)
          expect(result.branch).toMatchObject({ name: 'main', headMessageId: null });
      }
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('commits racing with the same new id on two branches: one inserts it, the other is refused', async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const store = new PostgresContextStore({
      connectionString: databaseUrl(),
      schema,
      connection: { max: 4 },
    });
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'root', message: { id: 'root', role: 'user', parts: [] } }],
      });
      await store.createBranch({ chatId: 'c', name: 'other', headMessageId: 'root' });
      const message = (text: string) => ({
        id: 'same',
        message: { id: 'same', role: 'assistant', parts: [{ type: 'text', text }] },
      });
      const outcomes = await Promise.allSettled([
        store.commit({
          chatId: 'c',
          branch: 'main',
          expectedHeadId: 'root',
          messages: [message('left')],
        }),
        store.append({ chatId: 'c', branch: 'other', messages: [message('right')] }),
      ]);
      const graph = await store.getGraph('c');
      expect(graph.nodes.map((node) => node.id)).toEqual(['root', 'same']);
      // Exactly one of the two wrote the node; the other was refused and wrote nothing (the id
      // is on the winner's branch, not its own), whichever statement saw the row first.
      const written = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(written).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(MessageIdConflictError.isInstance((refused[0] as PromiseRejectedResult).reason)).toBe(
        true,
      );
      expect(graph.chat.revision).toBe(2);
      expect(graph.chat.rewrittenAt).toBe(0);
    } finally {
      await store.close();
    }
  });
});
