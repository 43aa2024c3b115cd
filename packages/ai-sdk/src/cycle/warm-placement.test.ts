import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { simulateReadableStream, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChatCycle, createChatCycle } from './chat-cycle';

// A warm engine places a request on what it knows (the chat read once per request, its own
// path), a new engine reads the graph: the two must place every request alike. Two tabs talk to
// two server processes (two cycles on one store; two handles of one file or database) through a
// script of turns: questions, a stale tab, an edit, a regenerate, a body with the last message
// only, a branch deleted under a tab. The script runs once with warm engines and once with none
// (`warmEngines: 0`), on stores of their own, with the same reply ids: each turn must continue
// the same conversation, and the graphs must end up the same.

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;
const cleanup: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup) await step();
});

/** Two handles on one new database: the two processes' stores. */
const kinds: [string, () => [ContextStore, ContextStore]][] = [
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
      const path = join(tmpdir(), `ctxgraph-warm-${Math.random().toString(36).slice(2)}.db`);
      const pair: [ContextStore, ContextStore] = [
        new SqliteContextStore({ path }),
        new SqliteContextStore({ path }),
      ];
      cleanup.push(async () => {
        for (const store of pair) await store.close();
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      });
      return pair;
    },
  ],
];
if (databaseUrl !== undefined) {
  kinds.push([
    'PostgreSQL, two handles',
    () => {
      const make = () =>
        new PostgresContextStore({ connectionString: databaseUrl, schema: 'ctxgraph_ai_sdk_warm' });
      const pair: [ContextStore, ContextStore] = [make(), make()];
      cleanup.push(async () => {
        for (const store of pair) await store.close();
      });
      return pair;
    },
  ]);
}

/** Answers every call with the text of the last user message, at once. */
function echoModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const last = [...prompt].reverse().find((message) => message.role === 'user');
      const text =
        last?.role === 'user'
          ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
          : '';
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: `You said: ${text}` },
            { type: 'text-end', id: 't' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: undefined },
              usage: {
                inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
                outputTokens: { total: 1, text: 1, reasoning: undefined },
              },
            },
          ],
        }),
      };
    },
  });
}

const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

type Tab = 'A' | 'B';

/** One thing a tab does, through process 1 or 2. */
type Step =
  | { readonly tab: Tab; readonly via: 1 | 2; readonly ask: string }
  | { readonly tab: Tab; readonly via: 1 | 2; readonly askLastOnly: string }
  | { readonly tab: Tab; readonly via: 1 | 2; readonly edit: number; readonly text: string }
  | { readonly tab: Tab; readonly via: 1 | 2; readonly regenerate: true }
  | { readonly tab: Tab; readonly reload: true }
  /** The app deletes the branch the tab's last message heads (its nodes no other branch has). */
  | { readonly deleteBranchOf: Tab };

const script: readonly Step[] = [
  { tab: 'A', via: 1, ask: 'one' },
  { tab: 'A', via: 1, ask: 'two' },
  { tab: 'B', reload: true },
  { tab: 'B', via: 2, ask: 'three, from B' },
  // A has not seen B's turn: its question starts a branch after its own last reply.
  { tab: 'A', via: 1, ask: 'three, from A' },
  { tab: 'A', via: 1, ask: 'four' },
  // A's next request reaches the other process, which holds an engine B's turn left.
  { tab: 'A', via: 2, ask: 'five' },
  { tab: 'A', via: 2, edit: 2, text: 'two, edited' },
  { tab: 'A', via: 2, regenerate: true },
  { tab: 'A', via: 2, askLastOnly: 'six' },
  // The app deletes A's branch (through process 1): process 2's engine stood on its newest node,
  // and deleting a branch moves no revision.
  { deleteBranchOf: 'A' },
  // A's page still shows the deleted branch.
  { tab: 'A', via: 2, ask: 'seven' },
  { tab: 'B', via: 2, ask: 'eight' },
  { tab: 'B', via: 1, ask: 'nine' },
  { tab: 'A', via: 2, ask: 'ten' },
  { tab: 'B', via: 2, ask: 'eleven' },
];

/** What one run of the script saw and left: each turn's conversation, and the graph. */
interface Run {
  readonly turns: string[][];
  readonly graph: unknown;
  /** Store calls the two processes made. */
  readonly calls: number;
}

async function runScript(stores: [ContextStore, ContextStore], warm: boolean): Promise<Run> {
  const chatId = `warm-placement-${Math.random().toString(36).slice(2, 10)}`;
  // Each run's chat is deleted afterwards (a PostgreSQL schema outlives the test).
  cleanup.unshift(async () => {
    await stores[0].deleteChat(chatId);
  });
  const userId = 'u';
  let calls = 0;
  const counted = (store: ContextStore): ContextStore =>
    new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls += 1;
          return (value as (...parameters: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const cycles = stores.map((store, index) => {
    let count = 0;
    return createChatCycle({
      store: counted(store),
      engine: { renderer: new XmlRenderer() },
      ...(warm ? {} : { warmEngines: 0 }),
      generateId: () => {
        count += 1;
        return `p${index + 1}-${count}`;
      },
    });
  }) as [ChatCycle, ChatCycle];
  const model = echoModel();
  const tabs: Record<Tab, UIMessage[]> = { A: [], B: [] };
  const turns: string[][] = [];
  let asked = 0;
  for (const step of script) {
    if ('deleteBranchOf' in step) {
      const last = tabs[step.deleteBranchOf].at(-1)?.id;
      const [store] = stores;
      const node = (await store.findMessageNodes?.({ chatId, messageId: last as string }))?.[0];
      const branch = (await store.listBranches(chatId)).find(
        (each) => each.headMessageId === node?.id,
      );
      if (branch === undefined) throw new Error('fixture: the tab heads no branch');
      await cycles[0].read(chatId, { userId }, (engine) => engine.deleteBranch(branch.name));
      continue;
    }
    if ('reload' in step) {
      tabs[step.tab] = await cycles[0].messages(chatId, { userId });
      continue;
    }
    const history = tabs[step.tab];
    asked += 1;
    const id = `${step.tab}-q${asked}`;
    let body: Record<string, unknown>;
    if ('ask' in step) body = { messages: [...history, ask(id, step.ask)] };
    else if ('askLastOnly' in step) body = { message: ask(id, step.askLastOnly) };
    else if ('edit' in step) {
      const edited = history[step.edit] as UIMessage;
      body = { messages: [...history.slice(0, step.edit), ask(edited.id, step.text)] };
    } else {
      const reply = history.at(-1) as UIMessage;
      body = {
        trigger: 'regenerate-message',
        messageId: reply.id,
        messages: history.slice(0, -1),
      };
    }
    const cycle = cycles[step.via - 1] as ChatCycle;
    const turn = await cycle.begin({ id: chatId, ...body }, { userId });
    await turn.respond(streamText({ model, messages: turn.messages })).text();
    tabs[step.tab] = await cycle.messages(chatId, { userId, leaf: turn.replyId });
    turns.push(tabs[step.tab].map((message) => message.id));
  }
  const graph = await stores[0].getGraph(chatId);
  const branches = await stores[0].listBranches(chatId);
  return {
    turns,
    calls,
    graph: {
      nodes: graph.nodes
        .map((node) => ({ id: node.id, parentId: node.parentId, message: node.message }))
        .sort((left, right) => left.id.localeCompare(right.id)),
      branches: branches
        .map((branch) => [branch.name, branch.headMessageId])
        .sort((left, right) => String(left[0]).localeCompare(String(right[0]))),
      activeBranch: (await stores[0].getChat(chatId))?.activeBranch,
    },
  };
}

describe.each(kinds)('warm and new engines place alike (%s)', (_name, open) => {
  it('every turn of two tabs on two processes continues the same conversation; the graphs match', async () => {
    const cold = await runScript(open(), false);
    const warm = await runScript(open(), true);
    expect(warm.turns).toEqual(cold.turns);
    expect(warm.graph).toEqual(cold.graph);
    expect(warm.calls).toBeLessThan(cold.calls);
    // The script did what it says: a stale tab branched, an edit made a version, the deleted
    // branch's tab went on from what the chat still holds.
    const { branches } = cold.graph as { branches: [string, string | null][] };
    expect(branches.length).toBeGreaterThan(2);
  });
});
