import { assistantText, message, user } from '@ctxgraph/codecs';
import { type ContextStore, MessageNotFoundError, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import type { UIMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { countingStore, LineRenderer, overrideStore } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from '../usage/message-usage';

// Writes addressed by what the caller saw (issue #26), on the memory and SQLite stores (every
// store keeps message versions).

const renderer = new LineRenderer();
let counter = 0;
const newChatId = (): string => {
  counter += 1;
  return `graph-${Date.now()}-${counter}`;
};
const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );
const ids = (messages: readonly UIMessage[]): string[] => messages.map((entry) => entry.id);

const opened: ContextStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const stores: Array<[string, () => ContextStore]> = [
  ['memory', () => new InMemoryContextStore()],
  ['sqlite', () => new SqliteContextStore(':memory:')],
];

describe.each(stores)('message versions (%s store)', (_label, makeStore) => {
  const setup = (): { store: ContextStore; engine: (chatId: string) => ContextEngine } => {
    const store = makeStore();
    opened.push(store);
    return {
      store,
      engine: (chatId) => new ContextEngine({ store, chatId, userId: 'u', renderer }),
    };
  };

  /** u1 → a1 → u2 → a2 on main. */
  const threeTurns = async (engine: ContextEngine): Promise<UIMessage[]> => {
    engine.set(
      user('hello', { id: 'u1' }),
      assistantText('hi', { id: 'a1' }),
      user('what is 2+2?', { id: 'u2' }),
      assistantText('4', { id: 'a2' }),
    );
    await engine.save();
    return (await engine.resolve()).messages;
  };

  it('an edited message keeps its id on its new branch; the old path stays reachable', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    const first = engine(chatId);
    const client = await threeTurns(first);
    // The client edits u2 (same id, new text), as useChat does, and sends the list up to it.
    const edited = { ...structuredClone(client[2] as UIMessage) };
    edited.parts = [{ type: 'text', text: 'what is 3+3?' }];
    const server = engine(chatId);
    const located = await server.locate([...client.slice(0, 2), edited]);
    expect(located).toEqual({
      matched: 2,
      nodeIds: ['u1', 'a1'],
      changed: { index: 2, nodeId: 'u2' },
    });
    const position = await server.continueFrom(located.nodeIds.at(-1) ?? null);
    // a1 has a child (u2), so no branch has it as its head: the next save starts one.
    expect(position).toEqual({ nodeId: 'a1', branch: null });
    server.set(message(edited));
    expect(ids((await server.resolve()).messages)).toEqual(['u1', 'a1', 'u2']);
    server.set(assistantText('6', { id: 'a3' }));
    await server.save();
    expect(server.branch).toBe('main-v2');
    expect(server.nodeIdOf('u2')).toBe('u2~2');
    const shown = (await server.resolve()).messages;
    expect(ids(shown)).toEqual(['u1', 'a1', 'u2', 'a3']);
    expect(texts(shown)).toEqual(['hello', 'hi', 'what is 3+3?', '6']);
    // Never touched the active branch, and the old path is whole.
    expect((await store.getChat(chatId))?.activeBranch).toBe('main');
    expect(texts((await engine(chatId).resolve()).messages)).toEqual([
      'hello',
      'hi',
      'what is 2+2?',
      '4',
    ]);
    expect(await server.findMessage('u2')).toEqual(['u2~2', 'u2']);
    // A fresh engine at the new leaf shows the same.
    const reader = engine(chatId);
    await reader.continueFrom('a3');
    expect((await reader.resolve()).messages).toStrictEqual(shown);
    // The client's list after the edit is located on the new path, message by message.
    expect(await engine(chatId).locate(shown)).toEqual({
      matched: 4,
      nodeIds: ['u1', 'a1', 'u2~2', 'a3'],
      changed: null,
    });
    // Both versions of u2, each with its newest leaf.
    const listed = await engine(chatId).versions('u2~2');
    expect(listed.map((each) => [each.nodeId, each.messageId, each.leafNodeId])).toEqual([
      ['u2', 'u2', 'a2'],
      ['u2~2', 'u2', 'a3'],
    ]);
    expect(texts(listed.map((each) => each.message))).toEqual(['what is 2+2?', 'what is 3+3?']);
  });

  it('editing the first message starts a new root (continueFrom(null))', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    const client = await threeTurns(engine(chatId));
    const edited = structuredClone(client[0] as UIMessage);
    edited.parts = [{ type: 'text', text: 'good evening' }];
    const server = engine(chatId);
    const located = await server.locate([edited]);
    expect(located).toEqual({ matched: 0, nodeIds: [], changed: { index: 0, nodeId: 'u1' } });
    expect(await server.continueFrom(null)).toEqual({ nodeId: null, branch: null });
    expect((await server.resolve()).messages).toEqual([]);
    server.set(message(edited), assistantText('evening!', { id: 'b1' }));
    await server.save();
    const shown = (await server.resolve()).messages;
    expect(ids(shown)).toEqual(['u1', 'b1']);
    expect(texts(shown)).toEqual(['good evening', 'evening!']);
    const root = (await store.getMessage({ chatId, messageId: server.nodeIdOf('u1') as string }))
      ?.parentId;
    expect(root).toBeNull();
    expect(await server.findMessage('u1')).toEqual(['u1~2', 'u1']);
    expect((await server.versions('u1')).map((each) => each.leafNodeId)).toEqual(['a2', 'b1']);
  });

  it('continueFrom(null) on an empty chat extends main', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    const server = engine(chatId);
    expect(await server.continueFrom(null)).toEqual({ nodeId: null, branch: 'main' });
    await server.set(user('first', { id: 'f1' })).save();
    expect(server.branch).toBe('main');
    expect(ids((await engine(chatId).resolve()).messages)).toEqual(['f1']);
  });

  it('two engines continuing different nodes of one chat at once each keep their own path', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    await threeTurns(engine(chatId));
    const tabA = engine(chatId);
    const tabB = engine(chatId);
    expect(await tabA.continueFrom('a2')).toEqual({ nodeId: 'a2', branch: 'main' });
    expect(await tabB.continueFrom('a1')).toEqual({ nodeId: 'a1', branch: null });
    // Each tab sends three turns, interleaved.
    for (let turn = 0; turn < 3; turn += 1) {
      tabA.set(user(`A${turn}`, { id: `ua${turn}` }));
      tabB.set(user(`B${turn}`, { id: `ub${turn}` }));
      await Promise.all([tabA.save(), tabB.save()]);
      tabA.set(assistantText(`reply A${turn}`, { id: `ra${turn}` }));
      tabB.set(assistantText(`reply B${turn}`, { id: `rb${turn}` }));
      await Promise.all([tabA.save(), tabB.save()]);
    }
    const pathA = ids((await tabA.resolve()).messages);
    const pathB = ids((await tabB.resolve()).messages);
    expect(pathA).toEqual(['u1', 'a1', 'u2', 'a2', 'ua0', 'ra0', 'ua1', 'ra1', 'ua2', 'ra2']);
    expect(pathB).toEqual(['u1', 'a1', 'ub0', 'rb0', 'ub1', 'rb1', 'ub2', 'rb2']);
    expect(tabA.branch).toBe('main');
    expect(tabB.branch).toBe('main-v2');
    const graph = await store.getGraph(chatId);
    expect(graph.nodes).toHaveLength(4 + 12);
    expect(graph.branches.map((branch) => [branch.name, branch.headMessageId])).toEqual([
      ['main', 'ra2'],
      ['main-v2', 'rb2'],
    ]);
    expect((await store.getChat(chatId))?.activeBranch).toBe('main');
  });

  it('two engines continuing the same head at once: one extends the branch, the other forks, nothing lost', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    await threeTurns(engine(chatId));
    const tabs = [engine(chatId), engine(chatId), engine(chatId)];
    for (const tab of tabs) await tab.continueFrom('a2');
    tabs.forEach((tab, index) => {
      tab.set(user(`question ${index}`, { id: `q${index}` }));
    });
    await Promise.all(tabs.map((tab) => tab.save()));
    tabs.forEach((tab, index) => {
      tab.set(assistantText(`answer ${index}`, { id: `r${index}` }));
    });
    await Promise.all(tabs.map((tab) => tab.save()));
    for (const [index, tab] of tabs.entries()) {
      expect(ids((await tab.resolve()).messages)).toEqual([
        'u1',
        'a1',
        'u2',
        'a2',
        `q${index}`,
        `r${index}`,
      ]);
    }
    expect(new Set(tabs.map((tab) => tab.branch)).size).toBe(3);
    expect((await store.getGraph(chatId)).nodes).toHaveLength(4 + 6);
  });

  it('when another writer moves the head it continued from, a save starts its own branch', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    await threeTurns(engine(chatId));
    const tab = engine(chatId);
    await tab.continueFrom('a2');
    // Another tab (following main) appends meanwhile.
    await engine(chatId)
      .set(user('other', { id: 'o1' }))
      .save();
    await tab.set(user('mine', { id: 'm1' })).save();
    expect(ids((await tab.resolve()).messages)).toEqual(['u1', 'a1', 'u2', 'a2', 'm1']);
    expect(tab.branch).toBe('main-v2');
    expect(ids((await engine(chatId).resolve()).messages)).toEqual(['u1', 'a1', 'u2', 'a2', 'o1']);
  });

  it('activate makes the branch continued on the active one, and only then', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    await threeTurns(engine(chatId));
    const server = engine(chatId);
    await server.continueFrom('a1', { activate: true });
    expect((await store.getChat(chatId))?.activeBranch).toBe('main');
    await server.set(user('other question', { id: 'u9' })).save();
    expect((await store.getChat(chatId))?.activeBranch).toBe('main-v2');
    await server.continueFrom('a2', { activate: true });
    expect((await store.getChat(chatId))?.activeBranch).toBe('main');
    await expect(server.continueFrom('a2', { activate: 'yes' as never })).rejects.toSatisfy(
      (error) => ValidationError.isInstance(error),
    );
  });

  it('continueFrom a non-head forks atomically: a failed save leaves no branch and keeps the messages pending', async () => {
    const { store } = setup();
    const chatId = newChatId();
    let failNext = false;
    // A save the store refuses (injected): nothing of it may remain.
    const failing = overrideStore(store, {
      commit: async (input) => {
        if (failNext) {
          failNext = false;
          throw new Error('the database went away');
        }
        return store.commit(input);
      },
    });
    const engine = new ContextEngine({ store: failing, chatId, userId: 'u', renderer });
    await threeTurns(engine);
    const before = await store.getGraph(chatId);
    await engine.continueFrom('a1');
    engine.set(user('a new question', { id: 'n1' }));
    failNext = true;
    await expect(engine.save()).rejects.toThrow('the database went away');
    const after = await store.getGraph(chatId);
    expect(after.branches).toEqual(before.branches);
    expect(after.nodes).toEqual(before.nodes);
    // Still pending, still at a1: the retry forks there.
    expect(ids((await engine.resolve()).messages)).toEqual(['u1', 'a1', 'n1']);
    await engine.save();
    expect(engine.branch).toBe('main-v2');
    expect(ids((await engine.resolve()).messages)).toEqual(['u1', 'a1', 'n1']);
  });

  it('a save the store refuses inside the fork-commit (a message too large) leaves no branch', async () => {
    const store = new SqliteContextStore({ path: ':memory:', maxMessageBytes: 2_000 });
    opened.push(store);
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await threeTurns(engine);
    const before = await store.getGraph(chatId);
    await engine.continueFrom('a1');
    engine.set(user('x'.repeat(3_000), { id: 'big' }));
    await expect(engine.save()).rejects.toSatisfy((error) => ValidationError.isInstance(error));
    expect(await store.getGraph(chatId)).toEqual(before);
    expect(await engine.discardPending()).toBe(1);
  });

  it('a reply continued in place (a client-side tool result) replaces its node and adds its usage', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    const server = engine(chatId);
    server.set(user('weather?', { id: 'q' }));
    server.set(
      withUsage(assistantText('calling the tool', { id: 'r' }), {
        usage: { inputTokens: 100, outputTokens: 10 },
        modelId: 'test-model',
      }),
    );
    await server.save();
    const client = (await server.resolve()).messages;
    const continued = structuredClone(client[1] as UIMessage);
    continued.parts = [{ type: 'text', text: 'it is sunny' }];
    const next = engine(chatId);
    const located = await next.locate([client[0] as UIMessage, continued]);
    expect(located).toEqual({ matched: 1, nodeIds: ['q'], changed: { index: 1, nodeId: 'r' } });
    // Replacing in place: continue from the changed node itself.
    await next.continueFrom(located.changed?.nodeId ?? null);
    next.set(
      withUsage(message(continued), {
        usage: { inputTokens: 150, outputTokens: 20 },
        modelId: 'test-model',
        add: true,
      }),
    );
    await next.save();
    expect(next.nodeIdOf('r')).toBe('r');
    expect(texts((await next.resolve()).messages)).toEqual(['weather?', 'it is sunny']);
    const usage = await next.usage();
    expect(usage).toMatchObject({
      calls: 2,
      inputTokens: 250,
      outputTokens: 30,
      replies: { complete: 1, aborted: 0, error: 0, interrupted: 0 },
    });
    // Without add, a continued reply's usage replaces what was recorded.
    const replacing = engine(chatId);
    await replacing.continueFrom('r');
    replacing.set(
      withUsage(message(continued), {
        usage: { inputTokens: 5, outputTokens: 1 },
        modelId: 'test-model',
        outcome: 'aborted',
      }),
    );
    await replacing.save();
    expect(await replacing.usage()).toMatchObject({
      calls: 1,
      inputTokens: 5,
      replies: { complete: 0, aborted: 1, error: 0, interrupted: 0 },
    });
    expect((await replacing.inspect()).usage.chat.replies.aborted).toBe(1);
  });

  it('continueFrom a node of the path locate matched reads nothing again; a warm engine reads no chain', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    const client = await threeTurns(engine(chatId));
    const counted = countingStore(store);
    const server = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    const question: UIMessage = {
      id: 'u3',
      role: 'user',
      parts: [{ type: 'text', text: 'and 3+3?' }],
    };
    const sent = [...client, question];
    const located = await server.locate(sent);
    expect(located).toMatchObject({ matched: 4, changed: null });
    const chainReads = counted.calls.get('getChain') ?? 0;
    expect(chainReads).toBeGreaterThan(0);
    await server.continueFrom(located.nodeIds.at(-1) ?? null);
    expect(counted.calls.get('getChain') ?? 0).toBe(chainReads);
    server.set(message(question), assistantText('6', { id: 'a3' }));
    await server.save();
    const shown = (await server.resolve()).messages;
    expect(ids(shown)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
    // The next turn on the same (warm) engine: located, positioned, saved and resolved from its
    // cache, whatever the length of the history.
    counted.reset();
    const next: UIMessage[] = [
      ...shown,
      { id: 'u4', role: 'user', parts: [{ type: 'text', text: 'and 4+4?' }] },
    ];
    const again = await server.locate(next);
    expect(again).toMatchObject({ matched: 6, changed: null });
    await server.continueFrom(again.nodeIds.at(-1) ?? null);
    server.set(message(next[6] as UIMessage));
    await server.save();
    const warm = (await server.resolve()).messages;
    expect(counted.calls.get('getChain') ?? 0).toBe(0);
    expect(counted.calls.get('getGraph') ?? 0).toBe(0);
    // What a fresh engine positioned at the same node shows.
    const fresh = engine(chatId);
    await fresh.continueFrom(server.headMessageId ?? null);
    expect((await fresh.resolve()).messages).toEqual(warm);
  });

  it('a warm engine sees another writer’s in-place rewrite, between turns and between locate and continueFrom', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    const warm = engine(chatId);
    const client = await threeTurns(warm);
    // Another writer (another process, as far as the engine can tell) continues a2 in place.
    const rewrite = async (text: string): Promise<void> => {
      const other = engine(chatId);
      await other.continueFrom('a2');
      const replaced = structuredClone(client[3] as UIMessage);
      replaced.parts = [{ type: 'text', text }];
      other.set(message(replaced));
      await other.save();
    };
    await rewrite('four');
    // The client still holds the old a2: the warm engine must see that the stored one differs.
    const located = await warm.locate(client);
    expect(located).toEqual({
      matched: 3,
      nodeIds: ['u1', 'a1', 'u2'],
      changed: { index: 3, nodeId: 'a2' },
    });
    await warm.continueFrom('a2');
    expect(texts((await warm.resolve()).messages)).toEqual(['hello', 'hi', 'what is 2+2?', 'four']);
    // A fresh engine locates (reading the path), another writer rewrites a node of it, then the
    // engine continues from it: it shows the rewrite, not the path it read before.
    const current = (await warm.resolve()).messages;
    const late = engine(chatId);
    expect(await late.locate(current)).toMatchObject({ matched: 4, changed: null });
    await rewrite('FOUR');
    await late.continueFrom('a2');
    expect(texts((await late.resolve()).messages)).toEqual(['hello', 'hi', 'what is 2+2?', 'FOUR']);
  });

  it('rewind, compareBranches and search name one node when a message id has several', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    const client = await threeTurns(engine(chatId));
    const server = engine(chatId);
    await server.continueFrom('a1');
    const edited = structuredClone(client[2] as UIMessage);
    edited.parts = [{ type: 'text', text: 'what is 5+5?' }];
    await server.set(message(edited), assistantText('10', { id: 'a5' })).save();
    // rewind by message id: the node of the engine's path.
    const rewound = await server.rewind('u2');
    expect(rewound.headMessageId).toBe('u2~2');
    expect(texts((await server.resolve()).messages)).toEqual(['hello', 'hi', 'what is 5+5?']);
    // An engine whose path does not hold u2: the newest node.
    const other = engine(chatId);
    await other.continueFrom('u1');
    expect((await other.rewind('u2')).headMessageId).toBe('u2~2');
    // On a path that holds the original, the original.
    const onMain = engine(chatId);
    await onMain.continueFrom('a2');
    expect((await onMain.rewind('u2')).headMessageId).toBe('u2');
    // A node id names its node.
    expect((await engine(chatId).rewind('u2~2')).headMessageId).toBe('u2~2');
    const report = await engine(chatId).compareBranches('main', 'main-v2');
    expect(report.left.messages.map((each) => each.id)).toEqual(['u2', 'a2']);
    expect(report.right.messages.map((each) => each.id)).toEqual(['u2', 'a5']);
    expect(texts(report.right.messages as UIMessage[])).toEqual(['what is 5+5?', '10']);
    if (store.capabilities.search === true) {
      const hits = await engine(chatId).search('what', { scope: 'chat' });
      expect(hits.items.map((hit) => [hit.messageId, hit.message.id]).sort()).toEqual([
        ['u2', 'u2'],
        ['u2~2', 'u2'],
      ]);
    }
  });

  it('locate picks the version whose content the client holds, and stops at unknown messages', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    const client = await threeTurns(engine(chatId));
    const server = engine(chatId);
    await server.continueFrom('a1');
    const edited = structuredClone(client[2] as UIMessage);
    edited.parts = [{ type: 'text', text: 'what is 7+7?' }];
    await server.set(message(edited), assistantText('14', { id: 'a7' })).save();
    // The original version (older) is found by its content, not by recency.
    expect(await engine(chatId).locate(client)).toEqual({
      matched: 4,
      nodeIds: ['u1', 'a1', 'u2', 'a2'],
      changed: null,
    });
    // Up to the edited version, then a new message the chat does not hold.
    const fresh = {
      id: 'new-1',
      role: 'user',
      parts: [{ type: 'text', text: 'next' }],
    } as UIMessage;
    expect(await engine(chatId).locate([...client.slice(0, 2), edited, fresh])).toEqual({
      matched: 3,
      nodeIds: ['u1', 'a1', 'u2~2'],
      changed: null,
    });
    expect(await engine(chatId).locate([])).toEqual({ matched: 0, nodeIds: [], changed: null });
    expect(await engine(chatId).locate([fresh])).toEqual({
      matched: 0,
      nodeIds: [],
      changed: null,
    });
    await expect(engine(chatId).locate('nope' as never)).rejects.toSatisfy((error) =>
      ValidationError.isInstance(error),
    );
    await expect(engine(chatId).locate([{ role: 'user' }] as never)).rejects.toSatisfy((error) =>
      ValidationError.isInstance(error),
    );
  });

  it('a message whose id is a version’s node id never replaces that version', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    const client = await threeTurns(engine(chatId));
    const server = engine(chatId);
    await server.continueFrom('a1');
    const edited = structuredClone(client[2] as UIMessage);
    edited.parts = [{ type: 'text', text: 'edited' }];
    await server.set(message(edited)).save();
    expect(server.nodeIdOf('u2')).toBe('u2~2');
    // A client (or a hostile one) sends a new message whose id is that node id.
    await server.set(user('look-alike', { id: 'u2~2' })).save();
    const shown = (await server.resolve()).messages;
    expect(ids(shown)).toEqual(['u1', 'a1', 'u2', 'u2~2']);
    expect(texts(shown)).toEqual(['hello', 'hi', 'edited', 'look-alike']);
    expect((await store.getMessage({ chatId, messageId: 'u2~2' }))?.message.id).toBe('u2');
    expect(server.nodeIdOf('u2~2')).toBe('u2~2~2');
    expect(await server.findMessage('u2~2')).toEqual(['u2~2~2']);
  });

  it('compact() after continueFrom writes the compaction right after the position', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    await threeTurns(engine(chatId));
    const server = engine(chatId);
    await server.continueFrom('a1');
    await server.set(user('q3', { id: 'u3' }), assistantText('a3', { id: 'a3' })).save();
    const result = await server.compact({ summarize: async () => 'the summary', keep: 1 });
    expect(result).not.toBeNull();
    // On the engine's own branch, after its head; main is untouched.
    expect(server.branch).toBe('main-v2');
    const shown = (await server.resolve()).messages;
    expect(texts(shown).at(-2)).toBe('q3');
    expect(texts(shown).at(-1)).toBe('a3');
    expect(texts(shown)[0]).toContain('the summary');
    expect(ids((await engine(chatId).resolve()).messages)).toEqual(['u1', 'a1', 'u2', 'a2']);
    // A fresh engine at the same position shows the same.
    const reader = engine(chatId);
    await reader.continueFrom(server.headMessageId ?? null);
    expect((await reader.resolve()).messages).toStrictEqual(shown);
  });

  it('versionsOnPath lists every message of a path with versions, from one read of the graph', async () => {
    const { store, engine } = setup();
    const chatId = newChatId();
    const client = await threeTurns(engine(chatId));
    // u2 edited (u2~2 → a3), a3's reply regenerated (a4), u1 edited (u1~2 → b1).
    const editor = engine(chatId);
    await editor.continueFrom('a1');
    editor.set(message({ ...(client[2] as UIMessage), parts: [{ type: 'text', text: '3+3?' }] }));
    editor.set(assistantText('6', { id: 'a3' }));
    await editor.save();
    await editor.continueFrom('u2~2');
    editor.set(assistantText('six', { id: 'a4' }));
    await editor.save();
    await editor.continueFrom(null);
    editor.set(message({ ...(client[0] as UIMessage), parts: [{ type: 'text', text: 'hey' }] }));
    editor.set(assistantText('hey!', { id: 'b1' }));
    await editor.save();

    const counted = countingStore(store);
    const reader = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    await reader.findMessage('u1'); // opens the engine on the chat (its own read)
    counted.reset();
    const points = await reader.versionsOnPath('a4');
    // One store call, whatever the number of messages with versions.
    expect([...counted.calls]).toEqual([['getGraph', 1]]);
    expect(points).toEqual([
      {
        nodeId: 'u1',
        messageId: 'u1',
        position: 0,
        index: 0,
        versions: [
          { nodeId: 'u1', leafNodeId: 'a4' },
          { nodeId: 'u1~2', leafNodeId: 'b1' },
        ],
      },
      {
        nodeId: 'u2~2',
        messageId: 'u2',
        position: 2,
        index: 1,
        versions: [
          { nodeId: 'u2', leafNodeId: 'a2' },
          { nodeId: 'u2~2', leafNodeId: 'a4' },
        ],
      },
      {
        nodeId: 'a4',
        messageId: 'a4',
        position: 3,
        index: 1,
        versions: [
          { nodeId: 'a3', leafNodeId: 'a3' },
          { nodeId: 'a4', leafNodeId: 'a4' },
        ],
      },
    ]);
    // The same versions as versions() gives node by node (which reads the graph each time).
    for (const nodeId of ['u1~2', 'b1', 'u2', 'a2', 'a3']) {
      const point = (await reader.versionsOnPath(nodeId)).at(-1);
      const each = await reader.versions(nodeId);
      if (each.length < 2) expect(point?.nodeId).not.toBe(nodeId);
      else
        expect(point).toMatchObject({
          nodeId,
          index: each.findIndex((version) => version.nodeId === nodeId),
          versions: each.map((version) => ({
            nodeId: version.nodeId,
            leafNodeId: version.leafNodeId,
          })),
        });
    }
    // A path without versions has none; a node in the middle of a path counts to itself.
    expect(await reader.versionsOnPath('u1~2')).toMatchObject([{ nodeId: 'u1~2', index: 1 }]);
    expect((await reader.versionsOnPath('a1')).map((point) => point.nodeId)).toEqual(['u1']);
  });

  it('unknown nodes and another chat’s nodes are refused with MessageNotFoundError', async () => {
    const { engine } = setup();
    const chatId = newChatId();
    await threeTurns(engine(chatId));
    const otherChat = newChatId();
    await engine(otherChat)
      .set(user('elsewhere', { id: 'x1' }))
      .save();
    const server = engine(chatId);
    for (const call of [
      () => server.continueFrom('x1'),
      () => server.continueFrom('nope'),
      () => server.versions('x1'),
      () => server.versionsOnPath('x1'),
      () => server.versionsOnPath('nope'),
    ]) {
      await expect(call()).rejects.toSatisfy((error) => MessageNotFoundError.isInstance(error));
    }
    await expect(server.continueFrom('' as never)).rejects.toSatisfy((error) =>
      ValidationError.isInstance(error),
    );
    await expect(server.findMessage(42 as never)).rejects.toSatisfy((error) =>
      ValidationError.isInstance(error),
    );
    expect(await server.findMessage('x1')).toEqual([]);
    // The engine's path did not move.
    expect(ids((await server.resolve()).messages)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });
});
