import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory, textMessage } from './__fixtures__/temp-files';
import { findMessageNodesSql } from './driver/chain-sql';
import { newestNodeSql } from './driver/write-sql';
import { MIGRATIONS, readSqliteSchemaVersion, SCHEMA_VERSION } from './migrations/migrations';
import { tableNames } from './schema/table-names';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('message-versions');
afterAll(() => temp.remove());

const beforeVersions = MIGRATIONS.findIndex((step) => step.name === 'message versions');

/** A file at the schema version before `message versions`, holding a chat of three messages. */
function fileBeforeMessageVersions(): string {
  const path = temp.file();
  const database = new Database(path);
  const tables = tableNames();
  database.exec(`CREATE TABLE ${tables.migrations} (
    version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT;`);
  MIGRATIONS.slice(0, beforeVersions).forEach((step, index) => {
    database.exec(step.sql(tables));
    database.prepare(`INSERT INTO ${tables.migrations} VALUES (?, ?, 0)`).run(index + 1, step.name);
  });
  database
    .prepare(
      `INSERT INTO ${tables.chats} (id, user_id, title, metadata, active_branch, version, rewritten_at, created_at, updated_at)
       VALUES ('old', 'ada', 'Old chat', '{}', 'main', 1, 0, 10, 20)`,
    )
    .run();
  const insert = database.prepare(
    `INSERT INTO ${tables.messages} (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at)
     VALUES ('old', ?, ?, ?, ?, ?, 10, 10)`,
  );
  insert.run('u1', null, 1, 'user', JSON.stringify(textMessage('u1')));
  insert.run('a1', 'u1', 2, 'assistant', JSON.stringify(textMessage('a1', 'hi', 'assistant')));
  insert.run('u2', 'a1', 3, 'user', JSON.stringify(textMessage('u2')));
  database
    .prepare(
      `INSERT INTO ${tables.branches} (chat_id, name, head_message_id, created_at, updated_at) VALUES ('old', 'main', 'u2', 10, 20)`,
    )
    .run();
  database.close();
  return path;
}

describe('message versions in SQLite', () => {
  it('migrates a database of the version before message versions and finds its old messages by message id', async () => {
    expect(beforeVersions).toBe(5);
    expect(beforeVersions).toBeLessThan(SCHEMA_VERSION - 1);
    const path = fileBeforeMessageVersions();
    await using store = new SqliteContextStore(path);
    const found = await store.findMessageNodes({ chatId: 'old', messageId: 'a1' });
    expect(found.map((node) => [node.id, node.message.id, node.parentId])).toEqual([
      ['a1', 'a1', 'u1'],
    ]);
    // An edit of u2, kept under its message id on a branch of its own, is found beside it.
    const fork = await store.commit({
      chatId: 'old',
      branch: 'main',
      expectedHeadId: 'a1',
      fork: { from: 'main' },
      messages: [{ id: 'u2~2', message: textMessage('u2', 'edited') }],
    });
    expect(fork.branch).toBe('main-v2');
    expect(
      (await store.findMessageNodes({ chatId: 'old', messageId: 'u2' })).map((node) => node.id),
    ).toEqual(['u2~2', 'u2']);
    const database = new Database(path, { readonly: true });
    expect(readSqliteSchemaVersion(database)).toBe(SCHEMA_VERSION);
    database.close();
  });

  it('looks nodes up through the primary key and the versions index, never a scan of the chat', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    await store.openChat({ chatId: 'c', userId: 'u' });
    const database = new Database(path, { readonly: true });
    const m = tableNames().messages;
    const plan = database
      .prepare(`EXPLAIN QUERY PLAN ${findMessageNodesSql(tableNames(), 20)}`)
      .all({ chatId: 'c', messageId: 'm' }) as { detail: string }[];
    const details = plan.map((row) => row.detail);
    expect(details.join(' | ')).toContain(`${m}_versions`);
    expect(details.join(' | ')).toContain(`sqlite_autoindex_${m}_1`);
    // No scan of the table (the subquery's few rows are read back, which is no table scan).
    expect(details.filter((detail) => detail.startsWith(`SCAN ${m}`))).toEqual([]);
    // The newest node of a message, which a save of a new version numbers from: the same paths.
    const newest = (
      database
        .prepare(`EXPLAIN QUERY PLAN ${newestNodeSql(tableNames())}`)
        .all('c', 'm', 'c', 'm', 'm') as { detail: string }[]
    ).map((row) => row.detail);
    expect(newest.join(' | ')).toContain(`${m}_versions`);
    expect(newest.filter((detail) => detail.startsWith(`SCAN ${m}`))).toEqual([]);
    // Only versions are indexed: a save of messages under their own ids adds no entry.
    const index = database
      .prepare(`SELECT sql FROM sqlite_master WHERE name = ?`)
      .pluck()
      .get(`${m}_versions`) as string;
    expect(index).toContain("WHERE json_extract(payload, '$.id') <> id");
    expect(
      database.prepare(`SELECT name FROM sqlite_master WHERE name = ?`).get(`${m}_by_message_id`),
    ).toBeUndefined();
    database.close();
  });

  it('finds a message under its own id and its versions, newest first, up to the limit', async () => {
    const path = temp.file();
    await using store = new SqliteContextStore(path);
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [
        { id: 'u1', message: textMessage('u1') },
        { id: 'a1', message: textMessage('a1', 'hi', 'assistant') },
      ],
    });
    for (const n of [2, 3, 4]) {
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        fork: { from: 'main' },
        messages: [{ id: `u1~${n}`, message: textMessage('u1', `edit ${n}`) }],
      });
    }
    const ids = async (messageId: string, limit?: number) =>
      (await store.findMessageNodes({ chatId: 'c', messageId, ...(limit ? { limit } : {}) })).map(
        (node) => node.id,
      );
    expect(await ids('u1')).toEqual(['u1~4', 'u1~3', 'u1~2', 'u1']);
    expect(await ids('u1', 2)).toEqual(['u1~4', 'u1~3']);
    expect(await ids('a1')).toEqual(['a1']);
    // A node id is not a message id: no node holds a message "u1~2".
    expect(await ids('u1~2')).toEqual([]);
    expect(await ids('nothing')).toEqual([]);
  });
});
