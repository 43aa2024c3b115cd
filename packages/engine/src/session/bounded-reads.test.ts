import { assistantText, message, user } from '@ctxgraph/codecs';
import type { CommitMessage, ContextStore } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { LineRenderer, type ReadCounts, readCountingStore } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

// A branch operation and a save cost the same whatever the history: these tests count what each
// one reads through the store (nodes returned, messages opened) on a chat of 10,000 messages.
// Counts, not timings. The bound of a branch operation: the store's index lookup of a rewind's
// id (the node it names) and nothing of the chain.

const HISTORY = 10_000;
const BOUND = 2;
/** Seeding and resolving 10,000 messages takes seconds on a busy machine (PostgreSQL most). */
const SLOW = 180_000;

// The engine's package type-checks without Node's types (runtime-neutral); the test reads the
// environment and removes its SQLite files through these two narrow views.
const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;
const sqlitePaths: string[] = [];
/** Chats the tests made, deleted after them (a PostgreSQL schema outlives the run). */
const made: { store: ContextStore; chatId: string }[] = [];

afterAll(async () => {
  for (const { store, chatId } of made) await store.deleteChat(chatId);
  for (const store of new Set(made.map((entry) => entry.store))) await store.close();
  const fs = (await import('node:fs' as string)) as {
    rmSync(path: string, options: { force: boolean }): void;
  };
  for (const path of sqlitePaths)
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
});

const stores: [string, () => ContextStore][] = [
  ['memory', () => new InMemoryContextStore()],
  [
    'SQLite file',
    () => {
      const path = `/tmp/ctxgraph-branch-reads-${Math.random().toString(36).slice(2)}.db`;
      sqlitePaths.push(path);
      return new SqliteContextStore({ path });
    },
  ],
];
if (databaseUrl !== undefined) {
  stores.push([
    'PostgreSQL',
    () =>
      new PostgresContextStore({
        connectionString: databaseUrl,
        schema: 'ctxgraph_engine_branch_reads',
      }),
  ]);
}

const id = (index: number) => `m${index}`;

/** A chat of `HISTORY` alternating user / assistant messages on `main`, written by the store. */
async function seeded(store: ContextStore): Promise<string> {
  const chatId = `branch-reads-${Math.random().toString(36).slice(2)}`;
  made.push({ store, chatId });
  const opened = await store.openChat({ chatId, userId: 'u' });
  let head = opened.branch.headMessageId;
  for (let start = 0; start < HISTORY; start += 2_500) {
    const messages: CommitMessage[] = [];
    for (let index = start; index < start + 2_500; index += 1) {
      const role = index % 2 === 0 ? 'user' : 'assistant';
      messages.push({
        id: id(index),
        message: { id: id(index), role, parts: [{ type: 'text', text: `${role} ${index}` }] },
      });
    }
    head = (await store.commit({ chatId, branch: 'main', expectedHeadId: head, messages }))
      .headMessageId;
  }
  return chatId;
}

/** What `task` read through the counting store. */
async function reads(
  counting: { counts: ReadCounts; reset(): void },
  task: () => Promise<unknown>,
): Promise<{ nodes: number; parsed: number }> {
  counting.reset();
  await task();
  return { nodes: counting.counts.nodes, parsed: counting.counts.parsed };
}

describe.each(stores)('branch operations read O(1) nodes (%s)', (_name, makeStore) => {
  it(
    'a warm engine: rewind, checkpoint, restore, switchBranch and btw, cycle after cycle',
    async () => {
      const inner = makeStore();
      const chatId = await seeded(inner);
      const counting = readCountingStore(inner);
      const open = () =>
        new ContextEngine({
          store: counting.store,
          chatId,
          userId: 'u',
          renderer: new LineRenderer(),
        });
      const engine = open();
      expect((await engine.resolve()).messages).toHaveLength(HISTORY);
      for (let cycle = 0; cycle < 3; cycle += 1) {
        const target = id(HISTORY / 2 + 2 * cycle);
        const operations: [string, () => Promise<unknown>][] = [
          ['rewind', () => engine.rewind(target)],
          ['checkpoint', () => engine.checkpoint('here', { replace: true })],
          ['restore', () => engine.restore('here')],
          ['switchBranch', () => engine.switchBranch('main')],
          ['btw', () => engine.btw()],
        ];
        for (const [operation, run] of operations) {
          const read = await reads(counting, run);
          expect({ operation, cycle, ...read }).toEqual({
            operation,
            cycle,
            nodes: expect.toSatisfy((count: number) => count <= BOUND),
            parsed: expect.toSatisfy((count: number) => count <= BOUND),
          });
        }
        const checkpoint = await counting.store.getCheckpoint({ chatId, name: 'here' });
        expect(checkpoint?.messageId).toBe(target);
      }
      // After the cycles, the warm engine shows what a fresh engine on the chat shows.
      expect((await engine.resolve()).messages).toEqual((await open().resolve()).messages);
      expect((await engine.resolve()).messages).toHaveLength(HISTORY);
    },
    SLOW,
  );

  it(
    'a warm engine keeps the chain beyond a rewind: switching back and rewinding again read nothing',
    async () => {
      const inner = makeStore();
      const chatId = await seeded(inner);
      const counting = readCountingStore(inner);
      const open = () =>
        new ContextEngine({
          store: counting.store,
          chatId,
          userId: 'u',
          renderer: new LineRenderer(),
        });
      const engine = open();
      await engine.resolve();
      const calls = async (task: () => Promise<unknown>) => {
        counting.reset();
        counting.counts.calls.clear();
        await task();
        return Object.fromEntries(counting.counts.calls);
      };
      expect(await calls(() => engine.rewind(id(HISTORY / 2)))).toEqual({ forkBranch: 1 });
      expect(await calls(() => engine.switchBranch('main'))).toEqual({ setActiveBranch: 1 });
      // The chain the rewind cut off is still held: main's path is known, so is its m5002.
      expect(await calls(() => engine.rewind(id(HISTORY / 2 + 2)))).toEqual({ forkBranch: 1 });
      const rewound = await engine.resolve();
      expect(rewound.messages).toHaveLength(HISTORY / 2 + 3);
      expect(rewound.messages.at(-1)?.id).toBe(id(HISTORY / 2 + 2));

      // A write on the rewound branch replaces what lay beyond the head: main is read again.
      engine.set(user('on the side'));
      await engine.save();
      const side = (await engine.resolve()).messages;
      expect(side.at(-1)?.parts).toEqual([{ type: 'text', text: 'on the side' }]);
      expect(side).toHaveLength(HISTORY / 2 + 4);
      await engine.switchBranch('main');
      const main = (await engine.resolve()).messages;
      expect(main).toHaveLength(HISTORY);
      expect(main).toEqual((await open().resolve()).messages);
    },
    SLOW,
  );

  it(
    'a fresh engine: each operation as the first call of a new engine',
    async () => {
      const inner = makeStore();
      const chatId = await seeded(inner);
      const counting = readCountingStore(inner);
      const open = () =>
        new ContextEngine({
          store: counting.store,
          chatId,
          userId: 'u',
          renderer: new LineRenderer(),
        });
      const operations: [string, () => Promise<unknown>][] = [
        ['rewind', () => open().rewind(id(4_000))],
        ['checkpoint', () => open().checkpoint('here', { replace: true })],
        ['restore', () => open().restore('here')],
        ['switchBranch', () => open().switchBranch('main')],
        ['btw', () => open().btw()],
      ];
      for (const [operation, run] of operations) {
        const read = await reads(counting, run);
        expect({ operation, ...read }).toEqual({
          operation,
          nodes: expect.toSatisfy((count: number) => count <= BOUND),
          parsed: expect.toSatisfy((count: number) => count <= BOUND),
        });
      }
      // The rewind forked at m4000 and made that branch active; the checkpoint named its head.
      expect((await counting.store.getCheckpoint({ chatId, name: 'here' }))?.messageId).toBe(
        id(4_000),
      );
      const { messages } = await open().resolve();
      expect(messages.at(-1)?.id).toBe(id(HISTORY - 1));
    },
    SLOW,
  );

  it(
    "rewind to an edited message's id forks at the version on the engine's path, reading back only to it",
    async () => {
      const inner = makeStore();
      const chatId = await seeded(inner);
      const counting = readCountingStore(inner);
      const open = () =>
        new ContextEngine({
          store: counting.store,
          chatId,
          userId: 'u',
          renderer: new LineRenderer(),
        });
      // Message m9990 edited: a second node holding it, on a branch of its own (not active).
      const edited = id(HISTORY - 10);
      const editor = open();
      await editor.continueFrom(id(HISTORY - 11));
      editor.set(
        message({ id: edited, role: 'user', parts: [{ type: 'text', text: 'edited question' }] }),
      );
      await editor.save();
      const versions = await editor.findMessage(edited);
      expect(versions).toHaveLength(2);
      const newest = versions[0] as string;
      expect(newest).not.toBe(edited);

      // On main, the path holds the original: the rewind forks there, not at the newest version.
      const onMain = open();
      const read = await reads(counting, () => onMain.rewind(edited));
      expect((await onMain.resolve()).messages.at(-1)?.parts).toEqual([
        { type: 'text', text: `user ${HISTORY - 10}` },
      ]);
      // The index lookup, the node named by the id, and the path back to the versions' parent.
      expect(read.nodes).toBeLessThan(40);
      expect(read.parsed).toBeLessThan(40);

      // On the edit's branch, the same id names the edited version.
      const onEdit = open();
      await onEdit.switchBranch(editor.branch);
      await onEdit.rewind(edited);
      expect((await onEdit.resolve()).messages.at(-1)?.parts).toEqual([
        { type: 'text', text: 'edited question' },
      ]);
      // A fresh engine and a warm one agree.
      const warm = open();
      await warm.resolve();
      await warm.rewind(edited);
      expect((await warm.resolve()).messages).toEqual((await open().resolve()).messages);
    },
    SLOW,
  );

  it(
    "a fresh engine's first resolve reads each node of the chain once: openChat and the chain's pages",
    async () => {
      const inner = makeStore();
      const chatId = await seeded(inner);
      const counting = readCountingStore(inner);
      const engine = new ContextEngine({
        store: counting.store,
        chatId,
        userId: 'u',
        renderer: new LineRenderer(),
      });
      counting.counts.calls.clear();
      const read = await reads(counting, () => engine.resolve());
      expect(read).toEqual({ nodes: HISTORY, parsed: HISTORY });
      // openChat gives the head, the revision and rewrittenAt: no getHead or getChat after it.
      // The chain comes newest first in pages of 64, 1,024 and 16,384 (a compaction node in an
      // early page stops the read there); 10,000 nodes take three.
      expect(Object.fromEntries(counting.counts.calls)).toEqual({ openChat: 1, getChain: 3 });
    },
    SLOW,
  );

  it(
    'a save reads no node and opens none of the messages the store wrote',
    async () => {
      const inner = makeStore();
      const chatId = await seeded(inner);
      const counting = readCountingStore(inner);
      const open = () =>
        new ContextEngine({
          store: counting.store,
          chatId,
          userId: 'u',
          renderer: new LineRenderer(),
        });
      const engine = open();
      await engine.resolve();
      for (let turn = 0; turn < 3; turn += 1) {
        engine.set(user(`question ${turn}`), assistantText(`answer ${turn}`));
        counting.counts.calls.clear();
        expect(await reads(counting, () => engine.save())).toEqual({ nodes: 0, parsed: 0 });
        // One store call: the append (no head read, no chat read before it).
        expect(Object.fromEntries(counting.counts.calls)).toEqual({ append: 1 });
      }
      // The engine kept what it saved: it shows what a fresh engine reads back.
      expect((await engine.resolve()).messages).toEqual((await open().resolve()).messages);
      expect((await engine.resolve()).messages).toHaveLength(HISTORY + 6);
    },
    SLOW,
  );
});
