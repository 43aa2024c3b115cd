import { message } from '@ctxgraph/codecs';
import {
  type ChatRecord,
  type ContextStore,
  MessageNotFoundError,
  OwnershipError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import type { UIMessage } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { countingStore, LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

// `useSnapshot(chat)`: a request that read the chat once gives the record to its engine, which
// then places the request, saves and resolves without reading the chat again when its own path
// settles the request (it stands at the chat's newest node, by the snapshot), and reads as before
// otherwise. A snapshot another writer moved past never makes a write land on stale ground: the
// write is compare-and-set on the head, and starts its own branch when the head moved.

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;
const sqlitePaths: string[] = [];
const made: { store: ContextStore; chatId: string }[] = [];
const opened: ContextStore[] = [];

afterAll(async () => {
  for (const { store, chatId } of made) await store.deleteChat(chatId);
  for (const store of opened) await store.close();
  const fs = (await import('node:fs' as string)) as {
    rmSync(path: string, options: { force: boolean }): void;
  };
  for (const path of sqlitePaths)
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
});

/** Two handles on one database: two server processes (memory: one object). */
const stores: [string, () => [ContextStore, ContextStore]][] = [
  [
    'memory',
    () => {
      const store = new InMemoryContextStore();
      return [store, store];
    },
  ],
  [
    'SQLite file, two handles',
    () => {
      const path = `/tmp/ctxgraph-use-snapshot-${Math.random().toString(36).slice(2)}.db`;
      sqlitePaths.push(path);
      const pair: [ContextStore, ContextStore] = [
        new SqliteContextStore({ path }),
        new SqliteContextStore({ path }),
      ];
      opened.push(...pair);
      return pair;
    },
  ],
];
if (databaseUrl !== undefined) {
  stores.push([
    'PostgreSQL, two handles',
    () => {
      const make = () =>
        new PostgresContextStore({
          connectionString: databaseUrl,
          schema: 'ctxgraph_engine_use_snapshot',
        });
      const pair: [ContextStore, ContextStore] = [make(), make()];
      opened.push(...pair);
      return pair;
    },
  ]);
}

const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const answer = (id: string, text: string): UIMessage => ({
  id,
  role: 'assistant',
  parts: [{ type: 'text', text }],
});
const renderer = new LineRenderer();
const history = [ask('q1', 'one'), answer('a1', 'One.'), ask('q2', 'two'), answer('a2', 'Two.')];

let counter = 0;

/**
 * A chat holding `history` on `main`, written by an engine that stands where its own write left
 * it (as a request cycle's warm engine does after a turn), on a store that counts its calls.
 */
async function warmEngine(store: ContextStore) {
  counter += 1;
  const chatId = `use-snapshot-${counter}-${Math.random().toString(36).slice(2, 8)}`;
  made.push({ store, chatId });
  const counted = countingStore(store);
  const engine = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
  await engine.continueFrom(null);
  engine.set(...history.map((each) => message(each)));
  await engine.save();
  counted.reset();
  return { chatId, engine, counted };
}

/** A request's placement as the cycle makes it: locate, continue from the match, save the rest. */
async function place(engine: ContextEngine, sent: readonly UIMessage[]) {
  const located = await engine.locate(sent);
  await engine.continueFrom(located.nodeIds.at(-1) ?? null);
  const fresh = sent.slice(located.matched);
  if (fresh.length > 0) {
    engine.set(...fresh.map((each) => message(each)));
    await engine.save();
  }
  return (await engine.resolve()).messages.map((each) => each.id);
}

async function chatOf(store: ContextStore, chatId: string): Promise<ChatRecord> {
  const chat = await store.getChat(chatId);
  if (chat === null) throw new Error(`fixture: no chat ${chatId}`);
  return chat;
}

/** Each branch's conversation (message ids, oldest first), by branch name. */
async function branchesOf(store: ContextStore, chatId: string) {
  const shown: Record<string, string[]> = {};
  for (const branch of await store.listBranches(chatId)) {
    const chain =
      branch.headMessageId === null
        ? []
        : (await store.getChain({ chatId, headMessageId: branch.headMessageId })).nodes;
    shown[branch.name] = chain.map((node) => node.message.id as string);
  }
  return shown;
}

describe.each(stores)('useSnapshot on %s', (_name, open) => {
  it('a warm engine places the next turn, saves and resolves with one store call: the write', async () => {
    const [store] = open();
    const { chatId, engine, counted } = await warmEngine(store);
    engine.useSnapshot(await chatOf(store, chatId));
    expect(await place(engine, [...history, ask('q3', 'three')])).toEqual([
      'q1',
      'a1',
      'q2',
      'a2',
      'q3',
    ]);
    expect([...counted.calls]).toEqual([['commit', 1]]);
    // The reply, then the next turn on the snapshot of the chat after it: again one write each.
    engine.set(message(answer('a3', 'Three.')));
    await engine.save();
    counted.reset();
    engine.useSnapshot(await chatOf(store, chatId));
    const next = [...history, ask('q3', 'three'), answer('a3', 'Three.'), ask('q4', 'four')];
    expect(await place(engine, next)).toEqual(next.map((each) => each.id));
    expect([...counted.calls]).toEqual([['commit', 1]]);
    expect(await branchesOf(store, chatId)).toEqual({
      main: next.map((each) => each.id),
    });
    // `null` goes back to reading the chat's revision before each operation.
    counted.reset();
    engine.useSnapshot(null);
    await engine.resolve();
    expect(counted.calls.get('getChat')).toBe(1);
  });

  it("a request that adds nothing to the engine's path is located by a read", async () => {
    const [store] = open();
    const { chatId, engine, counted } = await warmEngine(store);
    engine.useSnapshot(await chatOf(store, chatId));
    expect(await place(engine, history)).toEqual(history.map((each) => each.id));
    expect(counted.calls.get('findMessageNodes')).toBeGreaterThan(0);
    expect(counted.calls.has('commit')).toBe(false);
  });

  it('a snapshot another writer moved past: the write starts its own branch, nothing is overwritten', async () => {
    const [store, other] = open();
    const { chatId, engine } = await warmEngine(store);
    const stale = await chatOf(store, chatId);
    // Another process extends main after the request read the chat.
    const elsewhere = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    elsewhere.set(message(ask('q3b', 'three, from another tab')));
    await elsewhere.save();
    engine.useSnapshot(stale);
    expect(await place(engine, [...history, ask('q3a', 'three')])).toEqual([
      'q1',
      'a1',
      'q2',
      'a2',
      'q3a',
    ]);
    expect(await branchesOf(store, chatId)).toEqual({
      main: ['q1', 'a1', 'q2', 'a2', 'q3b'],
      'main-v2': ['q1', 'a1', 'q2', 'a2', 'q3a'],
    });
  });

  it('a snapshot that shows another writer: the request is located in the graph (a question already saved is not saved twice)', async () => {
    const [store, other] = open();
    const { chatId, engine, counted } = await warmEngine(store);
    // The same request reached another process first and its question was saved there.
    const elsewhere = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    elsewhere.set(message(ask('q3', 'three')));
    await elsewhere.save();
    engine.useSnapshot(await chatOf(store, chatId));
    expect(await place(engine, [...history, ask('q3', 'three')])).toEqual([
      'q1',
      'a1',
      'q2',
      'a2',
      'q3',
    ]);
    expect(counted.calls.get('findMessageNodes')).toBeGreaterThan(0);
    expect(counted.calls.has('commit')).toBe(false);
    expect(await branchesOf(store, chatId)).toEqual({ main: ['q1', 'a1', 'q2', 'a2', 'q3'] });
  });

  it('a snapshot that shows a message rewritten in place: the path is read again', async () => {
    const [store, other] = open();
    const { chatId, engine } = await warmEngine(store);
    const elsewhere = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    elsewhere.set(message(answer('a1', 'One, corrected.')));
    await elsewhere.save();
    engine.useSnapshot(await chatOf(store, chatId));
    const { messages } = await engine.resolve();
    expect(messages.map((each) => (each.parts[0] as { text: string }).text)).toEqual([
      'one',
      'One, corrected.',
      'two',
      'Two.',
    ]);
  });

  it('the node the engine stands on removed with its branch (no revision moves): the save is refused, nothing written', async () => {
    const [store, other] = open();
    counter += 1;
    const chatId = `use-snapshot-gone-${counter}-${Math.random().toString(36).slice(2, 8)}`;
    made.push({ store, chatId });
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(...history.map((each) => message(each)));
    await engine.save();
    // A tab on a branch of its own: the engine stands at its newest node.
    await engine.continueFrom((await engine.findMessage('a1'))[0] ?? null);
    engine.set(message(ask('q2b', 'two, other way')));
    await engine.save();
    const before = await chatOf(store, chatId);
    const admin = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    await admin.deleteBranch('main-v2');
    expect((await chatOf(store, chatId)).revision).toBe(before.revision);
    engine.useSnapshot(await chatOf(store, chatId));
    engine.set(message(answer('a2b', 'Two, other way.')));
    await expect(engine.save()).rejects.toSatisfy((error) =>
      MessageNotFoundError.isInstance(error),
    );
    expect(await branchesOf(store, chatId)).toEqual({ main: ['q1', 'a1', 'q2', 'a2'] });
    expect((await chatOf(store, chatId)).revision).toBe(before.revision);
    // The message is still pending: the engine, put back on the graph, saves it.
    await engine.continueFrom((await engine.findMessage('a2'))[0] ?? null);
    await engine.save();
    expect(await branchesOf(store, chatId)).toEqual({ main: ['q1', 'a1', 'q2', 'a2', 'a2b'] });
  });

  it('refuses a record of another chat, of another user, or of a chat made again; nothing changes', async () => {
    const [store] = open();
    const { chatId, engine, counted } = await warmEngine(store);
    const chat = await chatOf(store, chatId);
    const refusals: [unknown, (error: unknown) => boolean, RegExp][] = [
      [
        { ...chat, id: 'another-chat' },
        (error) => ValidationError.isInstance(error),
        /this engine's chat record/,
      ],
      [
        { ...chat, userId: 'someone-else' },
        (error) => OwnershipError.isInstance(error),
        /belongs to another user/,
      ],
      [
        { ...chat, createdAt: chat.createdAt + 1 },
        (error) => ValidationError.isInstance(error),
        /made again/,
      ],
      [{ ...chat, revision: -1 }, (error) => ValidationError.isInstance(error), /chat\.revision/],
      [
        { ...chat, rewrittenAt: 1.5 },
        (error) => ValidationError.isInstance(error),
        /chat\.rewrittenAt/,
      ],
    ];
    for (const [record, refused, wording] of refusals) {
      let caught: unknown;
      try {
        engine.useSnapshot(record as ChatRecord);
      } catch (error) {
        caught = error;
      }
      expect(refused(caught), String(caught)).toBe(true);
      expect((caught as Error).message).toMatch(wording);
    }
    // None was taken: the engine still reads the chat before it resolves.
    await engine.resolve();
    expect(counted.calls.get('getChat')).toBe(1);
  });
});
