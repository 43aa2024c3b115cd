// The history tools (issue #39) called by a model: a MockLanguageModelV3 whose first step calls a
// tool with the input the test writes, and whose second step sees the result. On every store:
// memory, a SQLite file, and PostgreSQL when DATABASE_URL is set (its own schema).
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { type ContextStore, createEstimatorTokenizer } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import {
  generateText,
  simulateReadableStream,
  stepCountIs,
  streamText,
  type ToolSet,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatCycle } from '../cycle/chat-cycle';
import { CUT_MARK } from './bounded-result';
import {
  type HistoryTools,
  historyTools,
  type ListBranchesResult,
  type ReadBranchResult,
  type SearchHistoryResult,
} from './history-tools';

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;

const opened: ContextStore[] = [];
const files: string[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  const fs = await import('node:fs');
  for (const path of files)
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
});

const kinds: Array<[string, () => ContextStore]> = [
  ['memory', () => new InMemoryContextStore()],
  [
    'SQLite',
    () => {
      const path = `/tmp/ctxgraph-ai-sdk-history-${Math.random().toString(36).slice(2)}.db`;
      files.push(path);
      return new SqliteContextStore({ path });
    },
  ],
];
if (databaseUrl !== undefined) {
  kinds.push([
    'PostgreSQL',
    () =>
      new PostgresContextStore({ connectionString: databaseUrl, schema: 'ai_sdk_history_tools' }),
  ]);
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

type Prompt = Parameters<MockLanguageModelV3['doGenerate']>[0]['prompt'];

/** A model whose first step calls `toolName` with `input`, and whose second answers `done`. */
function callingModel(
  toolName: string,
  input: unknown,
): { model: MockLanguageModelV3; prompts: Prompt[] } {
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      if (prompts.length === 1)
        return {
          content: [
            { type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        };
      return {
        content: [{ type: 'text', text: 'done' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

/** What the model's call of `toolName` got back: the tool's output, or the tool error it was shown. */
async function callTool(
  tools: HistoryTools,
  toolName: string,
  input: unknown,
): Promise<{ output?: unknown; toolError?: string; secondPrompt: string }> {
  const { model, prompts } = callingModel(toolName, input);
  const result = await generateText({
    model,
    prompt: 'Recall.',
    tools: tools as ToolSet,
    stopWhen: stepCountIs(2),
  });
  const first = result.steps[0];
  const secondPrompt = JSON.stringify(prompts[1] ?? []);
  for (const part of first?.content ?? []) {
    if (part.type === 'tool-result') return { output: part.output, secondPrompt };
    if (part.type === 'tool-error')
      return { toolError: String((part.error as Error)?.message ?? part.error), secondPrompt };
  }
  throw new Error(`the tool was not called: ${JSON.stringify(first?.content)}`);
}

let counter = 0;
const newId = (name: string): string => {
  counter += 1;
  return `${name}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
};

const renderer = new XmlRenderer();

/**
 * Alice's chat: `main` is m1..m4 with a compaction (c1) that replaced m1 and m2; `main-v2` forks
 * at m2 with m5. Alice has a second chat; Bob has one that says "zebras" too.
 */
async function seed(store: ContextStore) {
  const chatId = newId('recall');
  const otherChatId = newId('recall-other');
  const bobChatId = newId('recall-bob');
  // Users of this run alone: a PostgreSQL schema outlives the run, and 'user' scope reads all
  // of a user's chats.
  const alice = newId('alice');
  const bob = newId('bob');
  const engine = new ContextEngine({ store, chatId, userId: alice, renderer });
  engine.set(
    user('We planned the zebras migration route.', { id: 'm1' }),
    assistantText('Zebras cross the Mara river in July.', { id: 'm2' }),
  );
  await engine.save();
  engine.set(
    user('Now about penguins.', { id: 'm3' }),
    assistantText('Penguins live in Antarctica.', { id: 'm4' }),
  );
  await engine.save();
  await engine.compact({ summarize: () => 'Migration planning.', keep: 1, id: 'c1' });
  await engine.rewind('m2');
  engine.set(user('What about lions?', { id: 'm5' }));
  await engine.save();
  await engine.switchBranch('main');
  const other = new ContextEngine({ store, chatId: otherChatId, userId: alice, renderer });
  other.set(user('Zebras in Kenya, a second trip.', { id: 'o1' }));
  await other.save();
  await other.updateChat({ title: 'Kenya trip' });
  const bobs = new ContextEngine({ store, chatId: bobChatId, userId: bob, renderer });
  bobs.set(user('Bob secret zebras password hunter2.', { id: 'b1' }));
  await bobs.save();
  return { chatId, otherChatId, bobChatId, alice };
}

/** A streaming model whose first step calls `toolName` with `input`, and whose second answers. */
function streamingModel(toolName: string, input: unknown): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => ({
      stream: prompt.some((message) => message.role === 'tool')
        ? simulateReadableStream({
            chunks: [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: 'Recalled.' },
              { type: 'text-end', id: 't' },
              { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage },
            ],
          })
        : simulateReadableStream({
            chunks: [
              { type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) },
              { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage },
            ],
          }),
    }),
  });
}

const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

describe.each(kinds)('historyTools on %s', (_kind, open) => {
  let store: ContextStore;
  let chats: Awaited<ReturnType<typeof seed>>;
  let tools: HistoryTools;
  beforeAll(async () => {
    store = open();
    opened.push(store);
    chats = await seed(store);
    tools = historyTools({ store, userId: chats.alice, chatId: chats.chatId, branch: 'main' });
  });

  it('searchHistory (scope chat): each hit names the branches that hold it', async () => {
    const { output, secondPrompt } = await callTool(tools, 'searchHistory', {
      query: 'zebras',
      scope: 'chat',
    });
    const result = output as SearchHistoryResult;
    const byNode = new Map(result.hits.map((hit) => [hit.node, hit]));
    expect([...byNode.keys()].sort()).toEqual(['m1', 'm2']);
    expect(byNode.get('m2')?.branches).toEqual(['main', 'main-v2']);
    expect(byNode.get('m2')?.snippet).toContain('Zebras');
    expect(result.truncated).toBe(false);
    // The model's next step was given the result.
    expect(secondPrompt).toContain('Mara river');
  });

  it("searchHistory (scope branch): finds the originals a compaction replaced on this conversation's branch", async () => {
    const { output } = await callTool(tools, 'searchHistory', { query: 'mara', scope: 'branch' });
    expect((output as SearchHistoryResult).hits.map((hit) => hit.node)).toEqual(['m2']);
    const lions = await callTool(tools, 'searchHistory', { query: 'lions', scope: 'branch' });
    expect((lions.output as SearchHistoryResult).hits).toEqual([]);
    const onFork = await callTool(tools, 'searchHistory', {
      query: 'lions',
      scope: 'branch',
      branch: 'main-v2',
    });
    expect((onFork.output as SearchHistoryResult).hits.map((hit) => hit.node)).toEqual(['m5']);
  });

  it("searchHistory (scope user): the user's chats, never another user's", async () => {
    const { output, secondPrompt } = await callTool(tools, 'searchHistory', {
      query: 'zebras',
      scope: 'user',
    });
    const result = output as SearchHistoryResult;
    expect(new Set(result.hits.map((hit) => hit.chatId))).toEqual(
      new Set([chats.chatId, chats.otherChatId]),
    );
    expect(result.hits.find((hit) => hit.chatId === chats.otherChatId)?.chatTitle).toBe(
      'Kenya trip',
    );
    expect(secondPrompt).not.toContain('hunter2');
  });

  it('listBranches: names, message counts, newest message', async () => {
    const { output } = await callTool(tools, 'listBranches', {});
    const result = output as ListBranchesResult;
    expect(result.chatId).toBe(chats.chatId);
    expect(result.currentBranch).toBe('main');
    expect(result.totalBranches).toBe(2);
    const byName = new Map(result.branches.map((branch) => [branch.name, branch]));
    expect(byName.get('main')).toMatchObject({ head: 'c1', messages: 5 });
    expect(byName.get('main-v2')).toMatchObject({
      head: 'm5',
      messages: 3,
      last: { role: 'user', preview: 'What about lions?' },
    });
  });

  it('readBranch: the compacted span is readable, marked, and pages back with older', async () => {
    const { output } = await callTool(tools, 'readBranch', {});
    const result = output as ReadBranchResult;
    expect(result.branch).toBe('main');
    expect(result.messages.map((message) => message.node)).toEqual(['m1', 'm2', 'm3', 'm4', 'c1']);
    expect(result.messages[0]).toMatchObject({
      text: 'We planned the zebras migration route.',
      summarizedBy: 'c1',
    });
    expect(result.messages[1]?.summarizedBy).toBe('c1');
    expect(result.messages[2]?.summarizedBy).toBeUndefined();
    expect(result.messages[4]?.compaction).toEqual({ coversThrough: 'm2', coveredMessages: 2 });
    expect(result.older).toBeNull();

    const page = await callTool(tools, 'readBranch', { branch: 'main-v2', limit: 2 });
    const first = page.output as ReadBranchResult;
    expect(first.messages.map((message) => message.node)).toEqual(['m2', 'm5']);
    expect(first.older).toBe('m1');
    const back = await callTool(tools, 'readBranch', { end: first.older, limit: 2 });
    expect((back.output as ReadBranchResult).messages.map((message) => message.text)).toEqual([
      'We planned the zebras migration route.',
    ]);
  });

  it("in the chat cycle: turn.historyTools() reads for the turn's user and branch, saved with the reply", async () => {
    const cycle = createChatCycle({ store, engine: { renderer } });
    const turnOn = async (id: string, toolName: string, input: unknown) => {
      const turn = await cycle.begin(
        { id: chats.chatId, message: ask(id, 'What did we say?') },
        { userId: chats.alice, after: 'c1' },
      );
      const result = streamText({
        model: streamingModel(toolName, input),
        system: turn.system,
        messages: turn.messages,
        tools: turn.historyTools({ maxResultTokens: 1000 }),
        stopWhen: stepCountIs(2),
        abortSignal: turn.abortSignal,
      });
      await turn.respond(result).text();
      const stored = await cycle.messages(chats.chatId, { userId: chats.alice });
      const reply = stored.at(-1) as UIMessage;
      const part = reply.parts.find((candidate) => candidate.type === `tool-${toolName}`) as
        | { state: string; output: unknown }
        | undefined;
      return { reply, part };
    };
    const read = await turnOn('q-cycle-1', 'readBranch', { limit: 2 });
    expect(read.part?.state).toBe('output-available');
    expect(
      (read.part?.output as ReadBranchResult | undefined)?.messages.map((message) => message.node),
    ).toEqual(['c1', 'q-cycle-1']);
    expect(read.reply.parts.at(-1)).toMatchObject({ type: 'text', text: 'Recalled.' });
    // The turn's user is the tools' user: Bob's chat is refused inside the cycle too.
    const foreign = await turnOn('q-cycle-2', 'listBranches', { chatId: chats.bobChatId });
    expect(foreign.part?.output).toEqual({ error: `No chat "${chats.bobChatId}" for this user.` });
  });

  it("another user's chat is refused exactly as an unknown one, with no data", async () => {
    const unknown = newId('nobody');
    for (const [toolName, input] of [
      ['readBranch', { chatId: chats.bobChatId }],
      ['readBranch', { chatId: chats.bobChatId, end: 'b1' }],
      ['listBranches', { chatId: chats.bobChatId }],
      ['searchHistory', { query: 'zebras', scope: 'chat', chatId: chats.bobChatId }],
      ['searchHistory', { query: 'zebras', scope: 'branch', chatId: chats.bobChatId }],
    ] as const) {
      const foreign = await callTool(tools, toolName, input);
      expect(foreign.output).toEqual({ error: `No chat "${chats.bobChatId}" for this user.` });
      expect(foreign.secondPrompt).not.toContain('hunter2');
      const missing = await callTool(tools, toolName, { ...input, chatId: unknown });
      expect(missing.output).toEqual({ error: `No chat "${unknown}" for this user.` });
    }
    // A node of Bob's chat named on Alice's chat is an unknown node there.
    const node = await callTool(tools, 'readBranch', { end: 'b1' });
    expect((node.output as { error: string }).error).toContain('b1');
    expect(node.secondPrompt).not.toContain('hunter2');
  });

  it('hostile inputs: refused with a message the model sees, nothing read', async () => {
    for (const [toolName, input, says] of [
      ['searchHistory', { query: 'x'.repeat(1001), scope: 'chat' }, 'query'],
      ['searchHistory', { query: 'zebras', scope: 'everything' }, 'scope'],
      ['searchHistory', { query: 'zebras' }, 'scope'],
      ['searchHistory', { query: 'zebras', scope: 'chat', limit: 1000 }, 'limit'],
      ['searchHistory', { query: 'zebras', scope: 'chat', limit: 2.5 }, 'limit'],
      ['searchHistory', { query: 'zebras', scope: 'user', userId: 'bob' }, 'userId'],
      ['listBranches', { chatId: 42 }, 'chatId'],
      ['listBranches', { __proto__: { chatId: 'x' }, constructor: 'y' }, 'constructor'],
      ['readBranch', { limit: 0 }, 'limit'],
      ['readBranch', { end: 'x'.repeat(600) }, 'end'],
      ['readBranch', { chatId: '' }, 'chatId'],
    ] as const) {
      const { output, toolError, secondPrompt } = await callTool(tools, toolName, input);
      expect(output).toBeUndefined();
      expect(toolError).toContain(says);
      expect(secondPrompt).not.toContain('Mara river');
    }
    // Ids no store keeps (a lone surrogate, a NUL) are answered, never passed on as data.
    const surrogate = await callTool(tools, 'readBranch', { chatId: '\ud800' });
    expect(surrogate.output).toEqual({ error: 'No chat "\\ud800" for this user.' });
    for (const input of [{ end: 'm\u00002' }, { branch: 'ma\u0000in' }]) {
      const refused = await callTool(tools, 'readBranch', input);
      expect((refused.output as { error: string }).error).toMatch(/^readBranch: /);
    }
    const both = await callTool(tools, 'readBranch', { branch: 'main', end: 'm2' });
    expect(both.output).toEqual({
      error:
        'readBranch: give branch (read back from its newest message) or end (read back from that node), not both.',
    });
    // Called by hand, past the SDK's check: the same refusal, as a result.
    const direct = await (
      tools.readBranch.execute as (input: unknown, options: unknown) => Promise<unknown>
    )({ limit: 10_000 }, { toolCallId: 'x', messages: [] });
    expect(direct).toEqual({ error: 'readBranch: limit must be an integer from 1 to 50.' });
    // What the store refuses (an operators-only query, a cursor of another search) is an answer too.
    const empty = await callTool(tools, 'searchHistory', { query: 'AND OR', scope: 'chat' });
    expect((empty.output as { error: string }).error).toMatch(/^searchHistory: /);
    const cursor = await callTool(tools, 'searchHistory', {
      query: 'zebras',
      scope: 'chat',
      cursor: 'not-a-cursor',
    });
    expect((cursor.output as { error: string }).error).toMatch(/^searchHistory: /);
  });
});

describe('historyTools: bounds', () => {
  const tokenizer = createEstimatorTokenizer();
  const tokens = (value: unknown) => tokenizer.count(JSON.stringify(value));

  it('every result fits maxResultTokens and says when it was cut', async () => {
    const store = new InMemoryContextStore();
    const chatId = newId('bounds');
    const engine = new ContextEngine({ store, chatId, userId: 'alice', renderer });
    engine.set(user(`long ${'walrus '.repeat(5000)}`, { id: 'huge' }));
    for (let index = 0; index < 40; index += 1)
      engine.set(
        index % 2 === 0
          ? user(`walrus question ${index} ${'tusk '.repeat(60)}`, { id: `q${index}` })
          : assistantText(`walrus answer ${index} ${'ice '.repeat(60)}`, { id: `a${index}` }),
      );
    await engine.save();
    for (let index = 0; index < 30; index += 1) await engine.btw();
    const tools = historyTools({ store, userId: 'alice', chatId, tokenizer, maxResultTokens: 600 });

    const read = (await callTool(tools, 'readBranch', { limit: 50 })).output as ReadBranchResult;
    expect(tokens(read)).toBeLessThanOrEqual(600);
    expect(read.truncated).toBe(true);
    // The newest messages are kept, and `older` continues right before the oldest kept.
    expect(read.messages.at(-1)?.node).toBe('a39');
    const oldestKept = Number((read.messages[0]?.node ?? '').slice(1));
    expect(read.older).toBe(`${oldestKept % 2 === 0 ? 'a' : 'q'}${oldestKept - 1}`);

    const huge = (await callTool(tools, 'readBranch', { end: 'huge' })).output as ReadBranchResult;
    expect(tokens(huge)).toBeLessThanOrEqual(600);
    expect(huge.messages[0]).toMatchObject({ node: 'huge', cut: true });
    expect(huge.messages[0]?.text.endsWith(CUT_MARK)).toBe(true);

    const listed = (await callTool(tools, 'listBranches', { limit: 50 }))
      .output as ListBranchesResult;
    expect(tokens(listed)).toBeLessThanOrEqual(600);
    expect(listed.totalBranches).toBe(31);
    expect(listed.truncated).toBe(true);
    expect(listed.branches.length).toBeGreaterThan(0);

    const found = (await callTool(tools, 'searchHistory', {
      query: 'walrus',
      scope: 'chat',
      limit: 20,
    })) as { output: SearchHistoryResult };
    expect(tokens(found.output)).toBeLessThanOrEqual(600);
    expect(found.output.truncated).toBe(true);
    // The hits left out for room start the next page: nothing is skipped.
    const seen = new Set(found.output.hits.map((hit) => hit.node));
    let cursor = found.output.nextCursor;
    while (cursor !== null) {
      const next = (await callTool(tools, 'searchHistory', {
        query: 'walrus',
        scope: 'chat',
        limit: 20,
        cursor,
      })) as { output: SearchHistoryResult };
      expect(tokens(next.output)).toBeLessThanOrEqual(600);
      for (const hit of next.output.hits) seen.add(hit.node);
      cursor = next.output.nextCursor;
    }
    expect(seen.size).toBe(41);
  });

  it('readBranch reads a bounded page whatever the length of the branch (counted)', async () => {
    const inner = new InMemoryContextStore();
    const calls: string[] = [];
    const returned: number[] = [];
    const store = new Proxy(inner, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return async (...input: unknown[]) => {
          calls.push(String(property));
          const result = await (value as (...args: unknown[]) => Promise<unknown>).apply(
            target,
            input,
          );
          if (property === 'getChain') returned.push((result as { nodes: unknown[] }).nodes.length);
          return result;
        };
      },
    }) as ContextStore;
    const chatId = newId('long');
    const engine = new ContextEngine({ store, chatId, userId: 'alice', renderer });
    for (let index = 0; index < 2000; index += 1)
      engine.set(user(`message ${index}`, { id: `n${index}` }));
    await engine.save();
    const tools = historyTools({ store, userId: 'alice', chatId });
    calls.length = 0;
    returned.length = 0;
    const read = (await callTool(tools, 'readBranch', { limit: 5 })).output as ReadBranchResult;
    expect(read.messages.map((message) => message.node)).toEqual([
      'n1995',
      'n1996',
      'n1997',
      'n1998',
      'n1999',
    ]);
    expect(calls).toEqual(['getChat', 'getBranch', 'getChain']);
    expect(returned).toEqual([5]);
    calls.length = 0;
    returned.length = 0;
    const back = (await callTool(tools, 'readBranch', { end: read.older, limit: 3 }))
      .output as ReadBranchResult;
    expect(back.messages.map((message) => message.node)).toEqual(['n1992', 'n1993', 'n1994']);
    expect(calls).toEqual(['getChat', 'getChain']);
    expect(returned).toEqual([3]);
  });

  it('readBranch marks originals whose content was dropped after a compaction', async () => {
    const store = new InMemoryContextStore();
    const chatId = newId('dropped');
    const engine = new ContextEngine({ store, chatId, userId: 'alice', renderer });
    engine.set(user('old question', { id: 'd1' }), assistantText('old answer', { id: 'd2' }));
    engine.set(user('new question', { id: 'd3' }), assistantText('new answer', { id: 'd4' }));
    await engine.save();
    await engine.compact({ summarize: () => 'Old things.', keep: 1, id: 'dc' });
    await engine.prune({ compacted: 'drop' });
    const tools = historyTools({ store, userId: 'alice', chatId });
    const read = (await callTool(tools, 'readBranch', {})).output as ReadBranchResult;
    expect(read.messages.slice(0, 2)).toEqual([
      { node: 'd1', role: 'user', text: '', summarizedBy: 'dc', dropped: true },
      { node: 'd2', role: 'assistant', text: '', summarizedBy: 'dc', dropped: true },
    ]);
    expect(read.messages.map((message) => message.node)).toEqual(['d1', 'd2', 'd3', 'd4', 'dc']);
  });

  it('options are checked before any tool exists', () => {
    const store = new InMemoryContextStore();
    expect(() =>
      historyTools({ store, userId: 'alice', chatId: 'c', maxResultTokens: 10 }),
    ).toThrow(/maxResultTokens must be an integer from 256 to 100000/);
    expect(() => historyTools({ store, userId: '', chatId: 'c' })).toThrow(/userId/);
    expect(() => historyTools({ store: {} as ContextStore, userId: 'alice', chatId: 'c' })).toThrow(
      /store must be a ContextStore/,
    );
  });

  it('a store without search gets no searchHistory', async () => {
    const inner = new InMemoryContextStore();
    const store = new Proxy(inner, {
      get(target, property) {
        if (property === 'capabilities')
          return { ...target.capabilities, search: false, searchPrefix: false };
        if (property === 'searchMessages') return undefined;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as ContextStore;
    const chatId = newId('no-search');
    const engine = new ContextEngine({ store, chatId, userId: 'alice', renderer });
    engine.set(user('hello', { id: 'h1' }));
    await engine.save();
    const tools = historyTools({ store, userId: 'alice', chatId });
    expect('searchHistory' in tools).toBe(false);
    expect(Object.keys(tools).sort()).toEqual(['listBranches', 'readBranch']);
    const read = (await callTool(tools, 'readBranch', {})).output as ReadBranchResult;
    expect(read.messages.map((message) => message.text)).toEqual(['hello']);
  });
});
