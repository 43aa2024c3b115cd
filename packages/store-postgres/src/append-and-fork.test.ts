import {
  BranchNotFoundError,
  ChatNotFoundError,
  MessageIdConflictError,
  MessageNotFoundError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  databaseUrl,
  dropSchema,
  randomSchema,
  textNode,
} from './__fixtures__/test-database';
import { PostgresDriver } from './driver/postgres-driver';
import { PostgresContextStore } from './postgres-context-store';

const admin = adminClient();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

function freshStore(options: { max?: number } = {}): PostgresContextStore {
  const schema = randomSchema();
  schemas.push(schema);
  return new PostgresContextStore({
    connectionString: databaseUrl(),
    schema,
    connection: { max: options.max ?? 3 },
  });
}

/** A chat `c` whose main branch holds `ids`, oldest first. */
async function chatWith(store: PostgresContextStore, ids: readonly string[]): Promise<void> {
  await store.openChat({ chatId: 'c', userId: 'u' });
  if (ids.length > 0)
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: ids.map((id) => textNode(id)),
    });
}

async function chainIds(store: PostgresContextStore, branch = 'main'): Promise<string[]> {
  const { headMessageId } = await store.getHead({ chatId: 'c', branch });
  if (headMessageId === null) return [];
  return (await store.getChain({ chatId: 'c', headMessageId })).nodes.map((node) => node.id);
}

/**
 * Waits until a write statement of the store on this test's schema waits for a lock: polled until
 * it does, however busy the machine; refused when `call` ended first (it never waited).
 */
async function waitForLockWait(schema: string, call: Promise<unknown>): Promise<void> {
  let ended = false;
  void call.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  for (;;) {
    const rows = await admin`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE ${`WITH RECURSIVE input AS%${schema}%`}`;
    if ((rows[0]?.n as number) > 0) return;
    if (ended) throw new Error('the statement under test never waited for the lock');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('append', () => {
  it('serves append and forkBranch with statements of its own, not the store kit defaults', () => {
    // The kit appends by getHead + commit and forks by listBranches + createBranch only for a
    // driver without these methods; this store takes the branch or chat row lock itself.
    expect(typeof PostgresDriver.prototype.append).toBe('function');
    expect(typeof PostgresDriver.prototype.forkBranch).toBe('function');
  });

  it('attaches at the head it finds, chains the batch, moves the head and bumps the revision by one', async () => {
    const store = freshStore();
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      const first = await store.append({
        chatId: 'c',
        branch: 'main',
        messages: [textNode('a'), textNode('b', 'reply', 'assistant')],
      });
      expect(first).toMatchObject({ previousHeadId: null, headMessageId: 'b', revision: 1 });
      expect(first.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
        ['a', null, 1],
        ['b', 'a', 2],
      ]);
      // Another writer moves the head; append attaches on top of it instead of conflicting.
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: 'b',
        messages: [textNode('c1')],
      });
      const second = await store.append({ chatId: 'c', branch: 'main', messages: [textNode('d')] });
      expect(second).toMatchObject({ previousHeadId: 'c1', headMessageId: 'd', revision: 3 });
      expect(second.nodes[0]).toMatchObject({ parentId: 'c1', sequence: 4 });
      expect(await chainIds(store)).toEqual(['a', 'b', 'c1', 'd']);
    } finally {
      await store.close();
    }
  });

  it('replaces in place an id on the branch (the head or an ancestor) without moving the head', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a', 'b', 'c1']);
      const result = await store.append({
        chatId: 'c',
        branch: 'main',
        messages: [textNode('a', 'corrected root'), textNode('n')],
      });
      expect(result).toMatchObject({ previousHeadId: 'c1', headMessageId: 'n', revision: 2 });
      expect(result.rewrittenAt).toBe(2);
      expect(result.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
        ['a', null, 1],
        ['n', 'c1', 4],
      ]);
      const root = await store.getMessage({ chatId: 'c', messageId: 'a' });
      expect(root?.message.parts).toEqual([{ type: 'text', text: 'corrected root' }]);
      const onlyHead = await store.append({
        chatId: 'c',
        branch: 'main',
        messages: [textNode('n', 'corrected head')],
      });
      expect(onlyHead).toMatchObject({ previousHeadId: 'n', headMessageId: 'n', revision: 3 });
      expect(await chainIds(store)).toEqual(['a', 'b', 'c1', 'n']);
    } finally {
      await store.close();
    }
  });

  it('refuses an id that is on another branch with MessageIdConflictError and writes nothing', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a', 'b']);
      await store.createBranch({ chatId: 'c', name: 'side', headMessageId: 'a' });
      await store.append({ chatId: 'c', branch: 'side', messages: [textNode('s1')] });
      const before = await store.getGraph('c');
      const error = await store
        .append({ chatId: 'c', branch: 'main', messages: [textNode('new'), textNode('s1', 'x')] })
        .catch((caught: unknown) => caught);
      expect(MessageIdConflictError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ chatId: 'c', branch: 'main', messageId: 's1' });
      // A descendant of the head is not on the branch either.
      await store.createBranch({ chatId: 'c', name: 'back', headMessageId: 'a' });
      await expect(
        store.append({ chatId: 'c', branch: 'back', messages: [textNode('b', 'x')] }),
      ).rejects.toThrow(MessageIdConflictError);
      const after = await store.getGraph('c');
      expect(after.nodes).toEqual(before.nodes);
      expect(after.chat.revision).toBe(before.chat.revision);
    } finally {
      await store.close();
    }
  });

  it('refuses an unknown chat, an unknown branch and bad input, writing nothing', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a']);
      await expect(
        store.append({ chatId: 'nope', branch: 'main', messages: [textNode('x')] }),
      ).rejects.toThrow(ChatNotFoundError);
      await expect(
        store.append({ chatId: 'c', branch: 'nope', messages: [textNode('x')] }),
      ).rejects.toThrow(BranchNotFoundError);
      await expect(store.append({ chatId: 'c', branch: 'main', messages: [] })).rejects.toThrow(
        ValidationError,
      );
      await expect(
        store.append({ chatId: 'c', branch: 'main', messages: [textNode('x'), textNode('x')] }),
      ).rejects.toThrow(ValidationError);
      await expect(store.append(null as never)).rejects.toThrow(ValidationError);
      expect((await store.getGraph('c')).nodes.map((node) => node.id)).toEqual(['a']);
      expect((await store.getHead({ chatId: 'c', branch: 'main' })).revision).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('is one statement: one round trip to the server', async () => {
    const statements: string[] = [];
    const client = postgres(databaseUrl(), {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query) => statements.push(query),
    });
    const schema = randomSchema();
    schemas.push(schema);
    const store = new PostgresContextStore({ sql: client, schema });
    try {
      await chatWith(store, ['a']);
      statements.length = 0;
      await store.append({
        chatId: 'c',
        branch: 'main',
        messages: [textNode('a', 'fixed'), textNode('b')],
      });
      expect(statements).toHaveLength(1);
    } finally {
      await store.close();
      await client.end();
    }
  });

  it('20 appends at once on one branch, each on its own connection: all land, in one chain', async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const stores = Array.from(
      { length: 20 },
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          schema,
          connection: { max: 1 },
        }),
    );
    try {
      await stores[0]?.openChat({ chatId: 'c', userId: 'u' });
      await Promise.all(stores.map((store) => store.getHead({ chatId: 'c', branch: 'main' })));
      const results = await Promise.all(
        stores.map((store, index) =>
          store.append({
            chatId: 'c',
            branch: 'main',
            messages: [textNode(`w${index}-q`), textNode(`w${index}-a`, 'a', 'assistant')],
          }),
        ),
      );
      const chain = await chainIds(stores[0] as PostgresContextStore);
      expect(chain).toHaveLength(40);
      // Each append attached to the head the previous one left: the chain is their order.
      const byPrevious = new Map(results.map((result) => [result.previousHeadId, result]));
      let head: string | null = null;
      const order: string[] = [];
      for (let index = 0; index < results.length; index += 1) {
        const next = byPrevious.get(head);
        expect(next).toBeDefined();
        order.push(...(next?.nodes.map((node) => node.id) ?? []));
        head = next?.headMessageId ?? null;
      }
      expect(order).toEqual(chain);
      expect(results.map((result) => result.revision).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 20 }, (_, index) => index + 1),
      );
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('a replacement that waited for the branch lock while another writer moved the head still lands', async () => {
    // The append's statement starts (and takes its snapshot) while the admin transaction holds
    // the branch row; the admin then adds a node and moves the head before committing, so the
    // head the append finds under the lock is newer than its snapshot.
    const store = freshStore();
    const schema = store.schema;
    try {
      await chatWith(store, ['a', 'b']);
      const other = postgres(databaseUrl(), { max: 1, onnotice: () => {} });
      try {
        let release: () => void = () => {};
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        let holding: () => void = () => {};
        const held = new Promise<void>((resolve) => {
          holding = resolve;
        });
        const holder = other.begin(async (transaction) => {
          await transaction.unsafe(
            `SELECT 1 FROM "${schema}".ctxgraph_branches WHERE chat_id = 'c' AND name = 'main' FOR NO KEY UPDATE`,
          );
          await transaction.unsafe(
            `UPDATE "${schema}".ctxgraph_chats SET last_sequence = last_sequence + 1, version = version + 1 WHERE chat_id = 'c'`,
          );
          await transaction.unsafe(
            `INSERT INTO "${schema}".ctxgraph_messages (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
             VALUES ('c', 'x', 'b', 3, 'user', '{"id":"x","role":"user","parts":[]}', 0, 0)`,
          );
          await transaction.unsafe(
            `UPDATE "${schema}".ctxgraph_branches SET head_message_id = 'x' WHERE chat_id = 'c' AND name = 'main'`,
          );
          holding();
          await released;
        });
        await held;
        const appended = store.append({
          chatId: 'c',
          branch: 'main',
          messages: [textNode('a', 'corrected'), textNode('n')],
        });
        await waitForLockWait(schema, appended);
        release();
        await holder;
        const result = await appended;
        expect(result).toMatchObject({ previousHeadId: 'x', headMessageId: 'n', revision: 3 });
        expect(result.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
          ['a', null, 1],
          ['n', 'x', 4],
        ]);
        expect(await chainIds(store)).toEqual(['a', 'b', 'x', 'n']);
        expect((await store.getMessage({ chatId: 'c', messageId: 'a' }))?.message.parts).toEqual([
          { type: 'text', text: 'corrected' },
        ]);
      } finally {
        await other.end();
      }
    } finally {
      await store.close();
    }
  });
});

describe('commit: the off-branch rule', () => {
  it('replaces an ancestor deep in the chain in place, together with new nodes', async () => {
    const store = freshStore();
    try {
      const ids = Array.from({ length: 60 }, (_, index) => `m${index}`);
      await chatWith(store, ids);
      const result = await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: 'm59',
        messages: [textNode('m3', 'fixed'), textNode('n')],
      });
      expect(result.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
        ['m3', 'm2', 4],
        ['n', 'm59', 61],
      ]);
      expect(result.rewrittenAt).toBe(result.revision);
    } finally {
      await store.close();
    }
  });

  it('refuses an id that exists only on another branch, and one that is a descendant of the head', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a', 'b', 'c1']);
      await store.createBranch({ chatId: 'c', name: 'side', headMessageId: 'a' });
      const before = await store.getGraph('c');
      const sideways = await store
        .commit({
          chatId: 'c',
          branch: 'side',
          expectedHeadId: 'a',
          messages: [textNode('s'), textNode('b', 'would rewrite main')],
        })
        .catch((caught: unknown) => caught);
      expect(MessageIdConflictError.isInstance(sideways)).toBe(true);
      expect(sideways).toMatchObject({ branch: 'side', messageId: 'b' });
      expect((sideways as Error).message).toContain('give the message a new id');
      await expect(
        store.commit({
          chatId: 'c',
          branch: 'side',
          expectedHeadId: 'a',
          messages: [textNode('c1', 'x')],
        }),
      ).rejects.toThrow(MessageIdConflictError);
      expect(await store.getGraph('c')).toEqual(before);
    } finally {
      await store.close();
    }
  });

  it('a stale expected head still wins over the off-branch check: HeadConflictError first', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a', 'b']);
      await store.createBranch({ chatId: 'c', name: 'side', headMessageId: 'a' });
      await expect(
        store.commit({
          chatId: 'c',
          branch: 'side',
          expectedHeadId: 'b',
          messages: [textNode('b', 'x')],
        }),
      ).rejects.toMatchObject({ name: 'HeadConflictError', currentHeadId: 'a' });
    } finally {
      await store.close();
    }
  });
});

describe('forkBranch', () => {
  it('names forks main-v2, main-v3, then the next above every fork number; activates when asked', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a', 'b']);
      const v2 = await store.forkBranch({ chatId: 'c', from: 'main', headMessageId: 'a' });
      expect(v2).toMatchObject({ chatId: 'c', name: 'main-v2', headMessageId: 'a' });
      const v3 = await store.forkBranch({ chatId: 'c', from: 'main-v2', headMessageId: 'b' });
      expect(v3.name).toBe('main-v3');
      expect((await store.getChat('c'))?.activeBranch).toBe('main');
      const v4 = await store.forkBranch({
        chatId: 'c',
        from: 'main-v2',
        headMessageId: null,
        activate: true,
      });
      expect(v4).toMatchObject({ name: 'main-v4', headMessageId: null });
      expect((await store.getChat('c'))?.activeBranch).toBe('main-v4');
      // `from` need not exist.
      expect(
        (await store.forkBranch({ chatId: 'c', from: 'draft', headMessageId: 'a' })).name,
      ).toBe('draft-v2');
      expect((await store.listBranches('c')).map((branch) => branch.name)).toEqual([
        'main',
        'main-v2',
        'main-v3',
        'main-v4',
        'draft-v2',
      ]);
    } finally {
      await store.close();
    }
  });

  it('refuses a head that is not in the chat, a missing chat and bad input, creating nothing', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a']);
      await expect(
        store.forkBranch({ chatId: 'c', from: 'main', headMessageId: 'nope' }),
      ).rejects.toThrow(MessageNotFoundError);
      await expect(
        store.forkBranch({ chatId: 'nope', from: 'main', headMessageId: null }),
      ).rejects.toThrow(ChatNotFoundError);
      await expect(
        store.forkBranch({ chatId: 'c', from: '', headMessageId: null }),
      ).rejects.toThrow(ValidationError);
      await expect(
        store.forkBranch({ chatId: 'c', from: 'main', headMessageId: null, activate: 1 as never }),
      ).rejects.toThrow(ValidationError);
      expect((await store.listBranches('c')).map((branch) => branch.name)).toEqual(['main']);
    } finally {
      await store.close();
    }
  });

  it('refuses a fork whose next name would be longer than an identifier may be', async () => {
    const store = freshStore();
    try {
      await chatWith(store, ['a']);
      const long = 'b'.repeat(512);
      await store.createBranch({ chatId: 'c', name: long, headMessageId: 'a' });
      await expect(
        store.forkBranch({ chatId: 'c', from: long, headMessageId: 'a' }),
      ).rejects.toThrow(ValidationError);
      expect(await store.listBranches('c')).toHaveLength(2);
    } finally {
      await store.close();
    }
  });

  it('12 forks at once, each on its own connection, all succeed with 12 different names', async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const stores = Array.from(
      { length: 12 },
      () =>
        new PostgresContextStore({
          connectionString: databaseUrl(),
          schema,
          connection: { max: 1 },
        }),
    );
    try {
      await chatWith(stores[0] as PostgresContextStore, ['a']);
      await Promise.all(stores.map((store) => store.getHead({ chatId: 'c', branch: 'main' })));
      const forks = await Promise.all(
        stores.map((store) => store.forkBranch({ chatId: 'c', from: 'main', headMessageId: 'a' })),
      );
      expect(forks.map((fork) => fork.name).sort()).toEqual(
        Array.from({ length: 12 }, (_, index) => `main-v${index + 2}`).sort(),
      );
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
