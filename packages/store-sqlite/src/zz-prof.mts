import Database from 'better-sqlite3';
import { migrateSqliteDatabase } from './migrations/sqlite-migrations';
import { SqliteContextStore } from './sqlite-context-store';

const path = `/tmp/zz-prof-${process.pid}.db`;
const store = new SqliteContextStore(path);
await store.openChat({ chatId: 'c', userId: 'u' });
const turn = (tag: string) => [
  {
    id: `${tag}-u`,
    message: { id: `${tag}-u`, role: 'user', parts: [{ type: 'text', text: `question ${tag}` }] },
  },
  {
    id: `${tag}-a`,
    message: {
      id: `${tag}-a`,
      role: 'assistant',
      parts: [{ type: 'text', text: `answer ${tag}, a few words` }],
    },
  },
];
const fpath = `/tmp/zz-prof-floor-${process.pid}.db`;
const database = new Database(fpath);
database.pragma('journal_mode = WAL');
database.pragma('synchronous = NORMAL');
database.pragma('foreign_keys = ON');
migrateSqliteDatabase(database, { tablePrefix: 'floor_' });
const now = Date.now();
database
  .prepare('INSERT INTO floor_chats VALUES (?, ?, NULL, ?, ?, 0, 0, ?, ?)')
  .run('c', 'u', '{}', 'main', now, now);
database.prepare('INSERT INTO floor_branches VALUES (?, ?, NULL, ?, ?)').run('c', 'main', now, now);
const insert = database.prepare(
  'INSERT INTO floor_messages (chat_id, id, parent_id, sequence, role, payload, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
);
const moveHead = database.prepare(
  'UPDATE floor_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ?',
);
let fhead: string | null = null;
let seq = 0;
const append = database.transaction((messages: { id: string; role: string; json: string }[]) => {
  for (const m of messages) {
    seq++;
    insert.run('c', m.id, fhead, seq, m.role, m.json, now, now);
    fhead = m.id;
  }
  moveHead.run(fhead, now, 'c', 'main');
});
let head: string | null = null;
const N = 2000;
for (let round = 0; round < 4; round++) {
  let t = performance.now();
  for (let i = 0; i < N; i++)
    head = (
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: head,
        messages: turn(`r${round}-${i}`),
      })
    ).headMessageId;
  const commitUs = ((performance.now() - t) / N) * 1000;
  const prepared = Array.from({ length: N }, (_, i) =>
    turn(`f${round}-${i}`).map((e) => ({
      id: e.id,
      role: e.message.role,
      json: JSON.stringify(e.message),
    })),
  );
  t = performance.now();
  for (let i = 0; i < N; i++) append.immediate(prepared[i]!);
  const floorUs = ((performance.now() - t) / N) * 1000;
  console.log({
    commitUs: commitUs.toFixed(1),
    floorUs: floorUs.toFixed(1),
    ratio: (commitUs / floorUs).toFixed(2),
  });
}
await store.close();
