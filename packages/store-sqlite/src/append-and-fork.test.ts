import {
  HeadConflictError,
  MessageIdConflictError,
  StoreError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runWorker } from './__fixtures__/run-workers';
import { tempDirectory, textMessage } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('append');
afterAll(() => temp.remove());

function entries(ids: readonly string[]) {
  return ids.map((id) => ({ id, message: textMessage(id) }));
}

/** A store over a connection that records every statement it runs, oldest first. */
function tracedStore(): {
  store: SqliteContextStore;
  statements: string[];
  database: Database.Database;
} {
  const statements: string[] = [];
  const database = new Database(temp.file(), { verbose: (sql) => statements.push(String(sql)) });
  database.pragma('journal_mode = WAL');
  return { store: new SqliteContextStore({ database }), statements, database };
}

/** The first word of each statement (`BEGIN IMMEDIATE` kept whole). */
function kinds(statements: readonly string[]): string[] {
  return statements.map((sql) => {
    const words = sql.trim().split(/\s+/);
    const first = words[0]?.toUpperCase() ?? '';
    return first === 'BEGIN' ? `BEGIN ${words[1]?.toUpperCase() ?? ''}`.trim() : first;
  });
}

/** Every row of the store's tables, to show that a refused write changed nothing. */
function dump(database: Database.Database): Record<string, unknown[]> {
  const tables = ['chats', 'messages', 'branches', 'checkpoints'];
  return Object.fromEntries(
    tables.map((table) => [
      table,
      database.prepare(`SELECT * FROM ctxgraph_${table} ORDER BY rowid`).all(),
    ]),
  );
}

describe('append', () => {
  it('is one BEGIN IMMEDIATE transaction of the same statements as commit, at any history length', async () => {
    const { store, statements, database } = tracedStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    const history = Array.from({ length: 10_000 }, (_, index) => `m${index}`);
    for (let start = 0; start < history.length; start += 2000)
      await store.append({
        chatId: 'c',
        branch: 'main',
        messages: entries(history.slice(start, start + 2000)),
      });

    statements.length = 0;
    const result = await store.append({
      chatId: 'c',
      branch: 'main',
      messages: [
        { id: 'u', message: textMessage('u') },
        { id: 'r', message: textMessage('r', 'reply', 'assistant') },
      ],
    });
    expect(result).toMatchObject({ previousHeadId: 'm9999', headMessageId: 'r', revision: 6 });
    // The write lock first, then: the head read, two inserts, the head move, the revision bump.
    // Nothing proportional to the history, and no on-branch walk when every id is new.
    expect(kinds(statements)).toEqual([
      'BEGIN IMMEDIATE',
      'SELECT',
      'INSERT',
      'INSERT',
      'UPDATE',
      'UPDATE',
      'COMMIT',
    ]);

    // A correction of the head: the insert finds the id taken, an update replaces the content in
    // place, and the on-branch walk (which stops at once) runs before the revision bump.
    statements.length = 0;
    await store.append({
      chatId: 'c',
      branch: 'main',
      messages: [{ id: 'r', message: textMessage('r', 'corrected', 'assistant') }],
    });
    expect(kinds(statements)).toEqual([
      'BEGIN IMMEDIATE',
      'SELECT',
      'INSERT',
      'UPDATE',
      'WITH',
      'UPDATE',
      'COMMIT',
    ]);
    await store.close();
    database.close();
  });

  it('takes the write lock before reading the head: a held lock ends in StoreError after busyTimeout, nothing written', async () => {
    const path = temp.file();
    const store = new SqliteContextStore({ path, busyTimeout: 50 });
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.append({ chatId: 'c', branch: 'main', messages: entries(['a']) });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const before = dump(other);
    await expect(
      store.append({ chatId: 'c', branch: 'main', messages: entries(['b']) }),
    ).rejects.toThrow(StoreError);
    await expect(
      store.forkBranch({ chatId: 'c', from: 'main', headMessageId: 'a' }),
    ).rejects.toThrow(/busyTimeout/);
    other.exec('ROLLBACK');
    expect(dump(other)).toEqual(before);
    other.close();
    // Once the lock is free the same calls succeed.
    expect(
      (await store.append({ chatId: 'c', branch: 'main', messages: entries(['b']) }))
        .previousHeadId,
    ).toBe('a');
    await store.close();
  });

  it('8 processes × 25 turns through append on one chat: none fails, none lost, each attached to the head before it', async () => {
    const path = temp.file();
    const setup = new SqliteContextStore(path);
    await setup.openChat({ chatId: 'shared', userId: 'ada' });
    await setup.close();

    const workers = 8;
    const turns = 25;
    const startAt = Date.now() + 1500;
    const results = await Promise.all(
      Array.from({ length: workers }, (_, worker) =>
        runWorker([
          'append-at-head',
          path,
          'shared',
          String(worker),
          String(turns),
          String(startAt),
        ]),
      ),
    );

    const store = new SqliteContextStore(path);
    const head = await store.getHead({ chatId: 'shared', branch: 'main' });
    expect(head.revision).toBe(workers * turns);
    const chain = await store.getChain({
      chatId: 'shared',
      headMessageId: head.headMessageId ?? '',
    });
    const ids = chain.nodes.map((node) => node.id);
    expect(ids).toHaveLength(workers * turns * 2);
    expect(new Set(ids).size).toBe(ids.length);
    // Every turn is a user message right before its reply, and each attached to the reply of the
    // turn before it in the chain: no two appends saw the same head.
    const attached = results.flatMap((result) => result.attachedTo as (string | null)[]);
    expect(attached.filter((id) => id === null)).toHaveLength(1);
    expect(new Set(attached).size).toBe(attached.length);
    for (let index = 0; index < ids.length; index += 2) {
      expect(ids[index + 1]).toBe(ids[index]?.replace('-user', '-reply'));
      expect(attached).toContain(index === 0 ? null : ids[index - 1]);
    }
    expect((await store.getGraph('shared')).nodes).toHaveLength(ids.length);
    await store.close();
  }, 60_000);
});

describe('the nodes a write returns', () => {
  it('are the stored nodes, independent of the input, parsed once when first read', async () => {
    const store = new SqliteContextStore(temp.file());
    await store.openChat({ chatId: 'c', userId: 'u' });
    const input = {
      id: 'a',
      role: 'user',
      parts: [{ type: 'text', text: 'before' }],
      extra: undefined,
    };
    const result = await store.append({
      chatId: 'c',
      branch: 'main',
      messages: [{ id: 'a', message: input }],
    });
    input.parts[0] = { type: 'text', text: 'changed after the write' };
    const node = result.nodes[0];
    // As stored (JSON drops the undefined key), not as the input is now.
    expect(node?.message).toEqual({
      id: 'a',
      role: 'user',
      parts: [{ type: 'text', text: 'before' }],
    });
    expect(Object.keys(node?.message ?? {})).toEqual(['id', 'role', 'parts']);
    expect(node?.message).toBe(node?.message);
    expect(await store.getMessage({ chatId: 'c', messageId: 'a' })).toEqual(node);
    expect(JSON.parse(JSON.stringify(result.nodes))).toEqual((await store.getGraph('c')).nodes);
    expect({ ...node }).toEqual(node);
    await store.close();
  });
});

describe('the off-branch rule', () => {
  it('a refused batch is rolled back whole: rows, sequence, head, revision, updatedAt', async () => {
    const { store, database } = tracedStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.append({ chatId: 'c', branch: 'main', messages: entries(['a', 'b']) });
    await store.createBranch({ chatId: 'c', name: 'side', headMessageId: 'a' });
    await store.append({ chatId: 'c', branch: 'side', messages: entries(['s']) });
    const before = dump(database);
    // New ids before and after the off-branch one, an on-branch replace in between: the new ids
    // and the replace are written before the refused id is met, and all must be undone.
    for (const write of [
      () => store.append({ chatId: 'c', branch: 'side', messages: entries(['x', 'a', 'b', 'y']) }),
      () =>
        store.commit({
          chatId: 'c',
          branch: 'side',
          expectedHeadId: 's',
          messages: entries(['x', 'a', 'b', 'y']),
        }),
    ]) {
      const error = await write().catch((caught: unknown) => caught);
      expect(MessageIdConflictError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ chatId: 'c', branch: 'side', messageId: 'b' });
      expect(dump(database)).toEqual(before);
    }
    // The head comparison comes first: a stale commit reports the head, not the id.
    await expect(
      store.commit({ chatId: 'c', branch: 'side', expectedHeadId: 'a', messages: entries(['b']) }),
    ).rejects.toBeInstanceOf(HeadConflictError);
    // The sequence the refused batch used is free again.
    const next = await store.append({ chatId: 'c', branch: 'side', messages: entries(['x']) });
    expect(next.nodes[0]).toMatchObject({ id: 'x', parentId: 's', sequence: 4 });
    await store.close();
    database.close();
  });

  it('reports the first off-branch id in batch order, and an id of a deeper fork', async () => {
    const store = new SqliteContextStore(temp.file());
    await store.openChat({ chatId: 'c', userId: 'u' });
    const trunk = Array.from({ length: 50 }, (_, index) => `t${index}`);
    await store.append({ chatId: 'c', branch: 'main', messages: entries(trunk) });
    await store.createBranch({ chatId: 'c', name: 'early', headMessageId: 't10' });
    await store.append({ chatId: 'c', branch: 'early', messages: entries(['e1', 'e2']) });
    // t40 and t20 are past the head of `early` (descendants of t10 on main), e2 is its own.
    const error = await store
      .append({ chatId: 'c', branch: 'early', messages: entries(['e2', 't40', 't20', 't5']) })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'MessageIdConflictError', messageId: 't40' });
    // From main, e1 (on `early` only) is refused; t0 and t49 are its own and replaced in place.
    const refused = await store
      .append({ chatId: 'c', branch: 'main', messages: entries(['t0', 'e1', 't49']) })
      .catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ name: 'MessageIdConflictError', messageId: 'e1' });
    const replaced = await store.append({
      chatId: 'c',
      branch: 'main',
      messages: entries(['t49', 't0']),
    });
    expect(replaced.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
      ['t49', 't48', 50],
      ['t0', null, 1],
    ]);
    await store.close();
  });
});

describe('forkBranch', () => {
  it('is one BEGIN IMMEDIATE transaction: chat, head, names, insert, chat touch', async () => {
    const { store, statements, database } = tracedStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.append({ chatId: 'c', branch: 'main', messages: entries(['a']) });
    statements.length = 0;
    const fork = await store.forkBranch({
      chatId: 'c',
      from: 'main',
      headMessageId: 'a',
      activate: true,
    });
    expect(fork).toMatchObject({ name: 'main-v2', headMessageId: 'a' });
    expect(kinds(statements)).toEqual([
      'BEGIN IMMEDIATE',
      'SELECT',
      'SELECT',
      'SELECT',
      'INSERT',
      'UPDATE',
      'COMMIT',
    ]);
    expect((await store.getChat('c'))?.activeBranch).toBe('main-v2');
    await store.close();
    database.close();
  });

  it('refuses a from whose next name is over 512 bytes, creating nothing', async () => {
    const store = new SqliteContextStore(temp.file());
    await store.openChat({ chatId: 'c', userId: 'u' });
    const from = '漢'.repeat(170); // 510 bytes: `-v2` makes 513
    await expect(store.forkBranch({ chatId: 'c', from, headMessageId: null })).rejects.toThrow(
      ValidationError,
    );
    expect((await store.listBranches('c')).map((branch) => branch.name)).toEqual(['main']);
    await store.close();
  });

  it('refuses calls after close() with StoreError', async () => {
    const store = new SqliteContextStore(temp.file());
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.close();
    await expect(
      store.forkBranch({ chatId: 'c', from: 'main', headMessageId: null }),
    ).rejects.toThrow('forkBranch(input): this SqliteContextStore is closed.');
    await expect(
      store.append({ chatId: 'c', branch: 'main', messages: entries(['a']) }),
    ).rejects.toThrow('append(input): this SqliteContextStore is closed.');
  });

  it('6 processes × 8 forks from one branch at once: 48 distinct names, main-v2 … main-v49', async () => {
    const path = temp.file();
    const setup = new SqliteContextStore(path);
    await setup.openChat({ chatId: 'forks', userId: 'ada' });
    await setup.close();
    const startAt = Date.now() + 1500;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, worker) =>
        runWorker(['fork', path, 'forks', String(worker), '8', String(startAt)]),
      ),
    );
    const names = results.flatMap((result) => result.names as string[]);
    expect(names).toHaveLength(48);
    expect([...names].sort()).toEqual(
      Array.from({ length: 48 }, (_, index) => `main-v${index + 2}`).sort(),
    );
    const store = new SqliteContextStore(path);
    expect(await store.listBranches('forks')).toHaveLength(49);
    await store.close();
  }, 60_000);
});
