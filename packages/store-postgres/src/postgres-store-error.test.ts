import { ChatNotFoundError, SchemaVersionError, StoreError } from '@ctxgraph/fragments-core';
import type postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  databaseUrl,
  dropSchema,
  randomSchema,
  textNode,
} from './__fixtures__/test-database';
import { PostgresContextStore, type PostgresContextStoreOptions } from './postgres-context-store';
import { PostgresStoreError, toStoreError } from './postgres-store-error';

const admin = adminClient();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

/** A store over a fresh schema with a chat whose main branch holds one node `a`. */
async function storeWithChat(
  options: Partial<PostgresContextStoreOptions> = {},
): Promise<{ store: PostgresContextStore; schema: string }> {
  const schema = randomSchema();
  schemas.push(schema);
  const store = new PostgresContextStore({ connectionString: databaseUrl(), schema, ...options });
  await store.openChat({ chatId: 'c', userId: 'u' });
  await store.commit({
    chatId: 'c',
    branch: 'main',
    expectedHeadId: null,
    messages: [textNode('a')],
  });
  return { store, schema };
}

/** Holds the branch row lock from another connection, so the store's commit waits inside its statement. */
async function holdBranchLock(schema: string): Promise<postgres.ReservedSql> {
  const connection = await admin.reserve();
  await connection.unsafe('BEGIN');
  await connection.unsafe(
    `SELECT 1 FROM "${schema}".ctxgraph_branches WHERE chat_id = 'c' FOR UPDATE`,
  );
  return connection;
}

/**
 * The backend pid of the store's statement that waits for a lock in `schema` (on `table` when
 * given): polled until the statement is there, so a test acts on the statement it means to, once
 * it waits, however busy the machine. Refused when `call` ended first (it never waited).
 */
async function waitingBackend(
  schema: string,
  table?: string,
  call?: Promise<unknown>,
): Promise<number> {
  let ended = false;
  const end = () => {
    ended = true;
  };
  void call?.then(end, end);
  const pattern = table === undefined ? `%"${schema}"%` : `%"${schema}"."${table}"%`;
  for (;;) {
    const rows = await admin`
      SELECT pid FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE ${pattern} AND pid <> pg_backend_pid()`;
    if (rows[0] !== undefined) return Number(rows[0].pid);
    if (ended) throw new Error(`the store's call ended without waiting for a lock in ${schema}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Cancels the store's statement once it waits for the lock: the server then fails it with SQLSTATE
 * 57014, exactly as when `statement_timeout` is reached (the same error, the same path in the
 * store), but at the statement the test means, whatever the machine's speed. A timeout set on the
 * store's connections would also apply to every other statement (its migration's DDL, the writes
 * before the one meant to wait), which a busy machine can slow past it.
 */
async function cancelWhenWaiting(
  schema: string,
  table: string,
  call: Promise<unknown>,
): Promise<void> {
  const pid = await waitingBackend(schema, table, call);
  const [row] = await admin`SELECT pg_cancel_backend(${pid}) AS cancelled`;
  expect(row?.cancelled).toBe(true);
}

/** The chat exactly as it was after `storeWithChat`: head `a`, version 1, one node. */
async function expectUntouched(store: PostgresContextStore): Promise<void> {
  expect(await store.getHead({ chatId: 'c', branch: 'main' })).toEqual({
    revision: 1,
    rewrittenAt: 0,
    headMessageId: 'a',
  });
  const graph = await store.getGraph('c');
  expect(graph.nodes.map((node) => node.id)).toEqual(['a']);
}

describe('server faults become clear StoreErrors and leave nothing half-written', () => {
  it('a connection terminated (pg_terminate_backend) while a commit runs', async () => {
    const { store, schema } = await storeWithChat();
    try {
      const lock = await holdBranchLock(schema);
      const pending = store
        .commit({
          chatId: 'c',
          branch: 'main',
          expectedHeadId: 'a',
          messages: [textNode('b'), textNode('c', 'reply', 'assistant')],
        })
        .catch((error: unknown) => error);
      try {
        const pid = await waitingBackend(schema, undefined, pending);
        await admin`SELECT pg_terminate_backend(${pid})`;
      } finally {
        await lock.unsafe('ROLLBACK');
        lock.release();
      }
      const error = await pending;
      expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
      expect(StoreError.isInstance(error)).toBe(true);
      const storeError = error as PostgresStoreError;
      expect(storeError.operation).toBe('commit');
      expect(storeError.retryable).toBe(true);
      expect(storeError.message).toMatch(
        /^commit: (PostgreSQL terminated the connection|the connection to PostgreSQL was lost)/,
      );
      expect(storeError.message).toContain('re-read the head');
      expect(storeError.cause).toBeInstanceOf(Error);
      // The pool reconnects; the failed commit left nothing behind, and the same commit now lands.
      await expectUntouched(store);
      const retried = await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: 'a',
        messages: [textNode('b'), textNode('c', 'reply', 'assistant')],
      });
      expect(retried.headMessageId).toBe('c');
    } finally {
      await store.close();
    }
  });

  it('a statement cancelled during a commit (SQLSTATE 57014, as at a statement_timeout)', async () => {
    const { store, schema } = await storeWithChat();
    try {
      const lock = await holdBranchLock(schema);
      const pending = store
        .commit({ chatId: 'c', branch: 'main', expectedHeadId: 'a', messages: [textNode('b')] })
        .catch((caught: unknown) => caught);
      let error: unknown;
      try {
        await cancelWhenWaiting(schema, 'ctxgraph_branches', pending);
        error = await pending;
      } finally {
        await lock.unsafe('ROLLBACK');
        lock.release();
      }
      expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ operation: 'commit', code: '57014', retryable: true });
      expect((error as Error).message).toContain(
        'commit: PostgreSQL cancelled the statement (statement_timeout reached or the query was cancelled',
      );
      expect((error as Error).message).toContain('Nothing was written.');
      await expectUntouched(store);
    } finally {
      await store.close();
    }
  });

  it('a statement cancelled inside a multi-statement write (createCheckpoint) rolls all of it back', async () => {
    const { store, schema } = await storeWithChat();
    try {
      // Lock the checkpoint name from another connection: the store's insert, after it touched
      // the chat row in the same transaction, waits on it, and is the statement cancelled.
      const connection = await admin.reserve();
      await connection.unsafe('BEGIN');
      await connection.unsafe(
        `INSERT INTO "${schema}".ctxgraph_checkpoints (chat_id, name, message_id, created_at) VALUES ('c', 'cp', 'a', 0)`,
      );
      const before = (await store.getChat('c'))?.updatedAt;
      const pending = store
        .createCheckpoint({ chatId: 'c', name: 'cp', messageId: 'a' })
        .catch((caught: unknown) => caught);
      let error: unknown;
      try {
        await cancelWhenWaiting(schema, 'ctxgraph_checkpoints', pending);
        error = await pending;
      } finally {
        await connection.unsafe('ROLLBACK');
        connection.release();
      }
      expect(error).toMatchObject({
        name: 'PostgresStoreError',
        operation: 'createCheckpoint',
        code: '57014',
      });
      expect(await store.listCheckpoints('c')).toEqual([]);
      // The chat row touched earlier in the same transaction was rolled back too.
      expect((await store.getChat('c'))?.updatedAt).toBe(before);
    } finally {
      await store.close();
    }
  });

  it('a unique violation from data changed behind the store', async () => {
    const { store, schema } = await storeWithChat();
    try {
      // Take the sequence number the next node would get.
      await admin.unsafe(
        `INSERT INTO "${schema}".ctxgraph_messages (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
         VALUES ('c', 'intruder', 'a', 2, 'user', '{}', 0, 0)`,
      );
      const error = await store
        .commit({ chatId: 'c', branch: 'main', expectedHeadId: 'a', messages: [textNode('b')] })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'PostgresStoreError', code: '23505', retryable: false });
      expect((error as Error).message).toContain(
        'commit: a unique constraint refused the row (ctxgraph_messages_sequence_key',
      );
      expect((error as Error).message).toContain('Nothing was written.');
      expect(await store.getHead({ chatId: 'c', branch: 'main' })).toEqual({
        revision: 1,
        rewrittenAt: 0,
        headMessageId: 'a',
      });
      expect(await store.getMessage({ chatId: 'c', messageId: 'b' })).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('a server nobody listens on', async () => {
    const store = new PostgresContextStore({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      connection: { connect_timeout: 2 },
    });
    try {
      const error = await store
        .openChat({ chatId: 'c', userId: 'u' })
        .catch((caught: unknown) => caught);
      expect(PostgresStoreError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /^openChat: the connection to PostgreSQL was lost or could not be opened \((ECONNREFUSED|CONNECT_TIMEOUT)/,
      );
      expect((error as PostgresStoreError).retryable).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('tables dropped behind a running store', async () => {
    const { store, schema } = await storeWithChat();
    try {
      await admin.unsafe(`DROP TABLE "${schema}".ctxgraph_checkpoints`);
      const error = await store.listCheckpoints('c').catch((caught: unknown) => caught);
      expect(SchemaVersionError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toContain(
        'listCheckpoints: the ctxgraph tables are missing',
      );
    } finally {
      await store.close();
    }
  });
});

describe('toStoreError', () => {
  it('passes ctxgraph errors through and wraps anything else with the operation and the cause', () => {
    const notFound = new ChatNotFoundError('c');
    expect(toStoreError('getHead', notFound, false)).toBe(notFound);
    const cause = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const wrapped = toStoreError('deleteChat', cause, true);
    expect(wrapped).toMatchObject({
      name: 'PostgresStoreError',
      code: '40P01',
      retryable: true,
      cause,
    });
    expect(wrapped.message).toBe(
      'deleteChat: PostgreSQL aborted the transaction to break a deadlock (deadlock detected). Nothing was written. Retry the call.',
    );
    const odd = toStoreError('getChat', 'a string was thrown', false);
    expect(odd.message).toBe('getChat: PostgreSQL reported an error: a string was thrown.');
  });
});
