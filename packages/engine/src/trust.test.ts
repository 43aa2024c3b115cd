import { assistantText, message, user } from '@ctxgraph/codecs';
import {
  type ContextFragment,
  type ContextStore,
  EngineError,
  hint,
  lastAssistantMessage,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import type { UIMessage } from 'ai';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LineRenderer, withoutOptionalCapabilities } from './__fixtures__/test-kit';
import { ContextEngine } from './context-engine';
import type { ContextEngineOptions } from './context-engine-options';
import { withUsage } from './usage/message-usage';

// The promises of the "Trust" issue: a saved turn is never lost, changed or hidden, a warm engine
// shows what a fresh one shows, and calls apply in call order. Each runs against a store with the
// optional extensions (append, forkBranch) and against one without them (compare-and-set).

const renderer = new LineRenderer();
let chatCounter = 0;
const newChatId = (): string => {
  chatCounter += 1;
  return `trust-${Date.now()}-${chatCounter}`;
};
const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );

const stores: Array<[string, () => ContextStore]> = [
  ['with every capability', () => new InMemoryContextStore()],
  ['without optional capabilities', () => withoutOptionalCapabilities(new InMemoryContextStore())],
];

describe.each(stores)('store %s', (_label, makeStore) => {
  let store: ContextStore;
  const engine = (chatId: string): ContextEngine =>
    new ContextEngine({ store, chatId, userId: 'u', renderer });
  const fresh = async (chatId: string): Promise<UIMessage[]> =>
    (await engine(chatId).resolve()).messages;

  beforeEach(() => {
    store = makeStore();
  });

  describe('a lazy correction targets the reply the caller was looking at', () => {
    it("never overwrites another writer's newer reply", async () => {
      const chatId = newChatId();
      const a = engine(chatId);
      await a.set(user('q1', { id: 'q1' }), assistantText('a1', { id: 'a1' })).save();
      await a.resolve();
      await engine(chatId)
        .set(user('q2', { id: 'q2' }), assistantText('a2', { id: 'a2' }))
        .save();
      a.set(lastAssistantMessage('fix'));
      await a.save();
      expect(texts(await fresh(chatId))).toEqual(['q1', 'fix', 'q2', 'a2']);
      expect(texts((await a.resolve()).messages)).toEqual(['q1', 'fix', 'q2', 'a2']);
    });

    it('fails clearly when that reply is no longer on the branch, and writes nothing', async () => {
      const chatId = newChatId();
      const a = engine(chatId);
      await a.set(user('q1', { id: 'q1' }), assistantText('a1', { id: 'a1' })).save();
      await a.resolve();
      a.set(lastAssistantMessage('fix'));
      await a.rewind('q1');
      const before = await store.getGraph(chatId);
      const error = await a.save().catch((caught: unknown) => caught);
      expect(EngineError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('lastAssistantMessage() corrects message "a1"');
      expect(await store.getGraph(chatId)).toEqual(before);
      expect(await a.discardPending()).toBe(1);
    });

    it('binds once: what resolve() showed is what save() writes', async () => {
      const chatId = newChatId();
      const a = engine(chatId).set(user('q1', { id: 'q1' }));
      a.set(lastAssistantMessage('new reply'));
      const shown = (await a.resolve()).messages;
      await a.save();
      const saved = await fresh(chatId);
      expect(saved.map((message) => message.id)).toEqual(shown.map((message) => message.id));
    });
  });

  describe('a warm engine shows what a fresh engine shows', () => {
    it('after a save whose id lives on another branch (a version of the message)', async () => {
      const chatId = newChatId();
      const warm = engine(chatId);
      await warm.set(user('q1', { id: 'msg-1' }), assistantText('a1', { id: 'msg-2' })).save();
      await warm.resolve();
      await warm.rewind('msg-1');
      warm.set(assistantText('a1, second try', { id: 'msg-2' }));
      // The reply keeps its id on the new branch, under its own node.
      await warm.save();
      expect(warm.nodeIdOf('msg-2')).toBe('msg-2~2');
      const main = await store.getMessage({ chatId, messageId: 'msg-2' });
      expect(texts([main?.message as UIMessage])).toEqual(['a1']);
      const shown = (await warm.resolve()).messages;
      expect(shown.map((each) => each.id)).toEqual(['msg-1', 'msg-2']);
      expect(texts(shown)).toEqual(['q1', 'a1, second try']);
      expect(shown).toStrictEqual(await fresh(chatId));
    });

    it('in shape too: the same keys, order and values as a fresh read', async () => {
      // Schema defaults, keys in another order and keys the AI SDK drops: a warm engine used to
      // show the message as given, a fresh one the AI SDK's parsed copy.
      const messageSchemas = {
        metadataSchema: z.object({ b: z.number(), a: z.number().default(1) }),
      };
      const chatId = newChatId();
      const open = (): ContextEngine =>
        new ContextEngine({ store, chatId, userId: 'u', renderer, messageSchemas });
      const warm = open();
      await warm.resolve();
      warm.set(
        message({
          id: 'm1',
          role: 'assistant',
          parts: [
            { type: 'text', text: 'hi', extra: 1 },
            {
              type: 'tool-search',
              toolCallId: 't1',
              state: 'output-available',
              output: { n: 1 },
              input: { q: 'x' },
              bogusKey: true,
            },
          ],
          metadata: { b: 2 },
        } as never),
      );
      await warm.save();
      const warmView = (await warm.resolve()).messages;
      const freshView = (await open().resolve()).messages;
      expect(warmView).toStrictEqual(freshView);
      expect(JSON.stringify(warmView)).toBe(JSON.stringify(freshView));
      expect(warmView[0]?.metadata).toEqual({ b: 2, a: 1 });
    });

    it("a builder's text message goes through the metadataSchema too: defaults applied, bad metadata refused", async () => {
      // A text message built by user()/assistantText() is saved without a copy when nothing but
      // the AI SDK's own shape applies; a metadataSchema must still see it.
      const messageSchemas = { metadataSchema: z.object({ a: z.number().default(1) }) };
      const chatId = newChatId();
      const open = (): ContextEngine =>
        new ContextEngine({ store, chatId, userId: 'u', renderer, messageSchemas });
      const warm = open();
      await warm.set(user('q', { id: 'q', metadata: {} })).save();
      const warmView = (await warm.resolve()).messages;
      expect(warmView[0]?.metadata).toEqual({ a: 1 });
      expect(JSON.stringify(warmView)).toBe(JSON.stringify((await open().resolve()).messages));
      warm.set(assistantText('r', { id: 'r', metadata: { a: 'not a number' } }));
      await expect(warm.save()).rejects.toThrow('Nothing was saved');
      expect((await store.getGraph(chatId)).nodes.map((node) => node.id)).toEqual(['q']);
    });
  });

  it('what resolve() and inspect() hand out cannot change the engine', async () => {
    const chatId = newChatId();
    const warm = engine(chatId);
    await warm.set(user('q', { id: 'q' }), assistantText('a', { id: 'a' })).save();
    const first = (await warm.resolve()).messages;
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(Object.isFrozen(first[0]?.parts[0])).toBe(true);
    expect(() => {
      (first[0]?.parts as unknown[] | undefined)?.pop();
    }).toThrow(TypeError);
    first.pop(); // the array itself is the caller's
    const snapshot = await warm.inspect();
    expect(() => {
      (snapshot.fragments.persisted[1] as { id: string }).id = 'changed';
    }).toThrow(TypeError);
    expect(texts((await warm.resolve()).messages)).toEqual(['q', 'a']);
  });

  describe('calls apply in call order', () => {
    it('a message set right after an un-awaited switchBranch() is saved on the new branch', async () => {
      const chatId = newChatId();
      const a = engine(chatId);
      await a.set(user('q', { id: 'q' })).save();
      const side = await a.btw();
      a.set(user('dropped with the branch switch'));
      void a.switchBranch(side.name);
      a.set(user('after the switch'));
      await a.save();
      expect(a.branch).toBe(side.name);
      expect(texts((await a.resolve()).messages)).toEqual(['q', 'after the switch']);
      expect(texts(await fresh(chatId))).toEqual(['q', 'after the switch']);
    });

    it('save(), resolve() and inspect() see only what was set before they were called', async () => {
      const chatId = newChatId();
      const a = engine(chatId);
      a.set(hint('first hint'), user('one'));
      const saving = a.save();
      const resolving = a.resolve();
      const inspecting = a.inspect();
      a.set(hint('second hint'), user('two'));
      await saving;
      const resolved = await resolving;
      expect(resolved.systemPrompt).toContain('first hint');
      expect(resolved.systemPrompt).not.toContain('second hint');
      expect(texts(resolved.messages)).toEqual(['one']);
      expect(texts((await inspecting).fragments.pending)).toEqual([]);
      expect(texts(await fresh(chatId))).toEqual(['one']);
      await a.save();
      expect(texts(await fresh(chatId))).toEqual(['one', 'two']);
    });
  });

  describe('one check at set() for what resolve() shows and save() stores', () => {
    const custom = (encoded: unknown): ContextFragment =>
      ({
        name: 'user',
        type: 'message',
        persist: true,
        data: 'custom',
        codec: { encode: () => encoded, decode: () => encoded },
      }) as unknown as ContextFragment;

    it.each([
      ['a NUL character', { id: 'm', role: 'user', parts: [{ type: 'text', text: 'a\u0000b' }] }],
      [
        'a lone surrogate',
        { id: 'm', role: 'user', parts: [{ type: 'text', text: '😀'.slice(0, 1) }] },
      ],
      ['an over-long id', { id: 'x'.repeat(513), role: 'user', parts: [] }],
      ['an id over 512 bytes', { id: '漢'.repeat(171), role: 'user', parts: [] }],
      ['a bigint', { id: 'm', role: 'user', parts: [{ type: 'data-x', data: 10n }] }],
      ['no parts', { id: 'm', role: 'user' }],
    ])('refuses %s at set(), adds nothing, and the engine goes on', async (_label, encoded) => {
      const chatId = newChatId();
      const a = engine(chatId);
      expect(() => a.set(hint('kept out too'), custom(encoded))).toThrow(ValidationError);
      const { systemPrompt, messages } = await a.resolve();
      expect(messages).toEqual([]);
      expect(systemPrompt).toBe('');
      await a.set(user('fine')).save();
      expect(texts(await fresh(chatId))).toEqual(['fine']);
    });

    it('refuses a lazy correction whose text cannot be stored', () => {
      expect(() => engine(newChatId()).set(lastAssistantMessage('bad\u0000'))).toThrow(
        /content: string contains the NUL character/,
      );
    });
  });

  describe('concurrent writers in one process', () => {
    it('30 engines saving to one branch at once: none fails, none is lost', async () => {
      const chatId = newChatId();
      await engine(chatId)
        .set(user('root', { id: 'root' }))
        .save();
      const engines = Array.from({ length: 30 }, () => engine(chatId));
      await Promise.all(engines.map((each) => each.resolve()));
      const results = await Promise.allSettled(
        engines.map((each, index) => each.set(user(`turn ${index}`, { id: `t${index}` })).save()),
      );
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      const saved = await fresh(chatId);
      expect(saved).toHaveLength(31);
      expect(new Set(saved.map((message) => message.id)).size).toBe(31);
    });

    it('25 engines forking at once all get a branch, each its own name', async () => {
      const chatId = newChatId();
      await engine(chatId)
        .set(user('root', { id: 'root' }))
        .save();
      const engines = Array.from({ length: 25 }, () => engine(chatId));
      const results = await Promise.allSettled(engines.map((each) => each.btw()));
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      const names = results.map((result) =>
        result.status === 'fulfilled' ? result.value.name : '',
      );
      expect(new Set(names).size).toBe(25);
      expect((await store.listBranches(chatId)).length).toBe(26);
    });
  });
});

describe('bad arguments and small promises', () => {
  const store = new InMemoryContextStore();
  const engine = (): ContextEngine =>
    new ContextEngine({ store, chatId: newChatId(), userId: 'u', renderer });

  it.each([
    ['resolve', (e: ContextEngine) => e.resolve(null as never)],
    ['inspect', (e: ContextEngine) => e.inspect(null as never)],
    ['checkpoint', (e: ContextEngine) => e.checkpoint('x', null as never)],
    ['resolve with an array', (e: ContextEngine) => e.resolve([] as never)],
  ])('%s(null) rejects with a ValidationError, not a TypeError', async (_label, call) => {
    const error = await call(engine()).catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/options must be an object or omitted, received/);
  });

  it('prices only real price-table entries (no Object.prototype members)', async () => {
    const e = engine();
    for (const modelId of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const snapshot = await e.inspect({ modelId });
      expect(snapshot.estimate.cost).toBeNull();
      expect(snapshot.estimate.note).toContain('is not known');
      expect(JSON.parse(JSON.stringify(snapshot)).estimate.pricePerMillionInputTokens).toBeNull();
    }
  });

  describe('a price table', () => {
    const bad: Array<[string, unknown, RegExp]> = [
      ['a negative price', { 'gpt-4o': -1 }, /prices\["gpt-4o"\] must be a finite number >= 0/],
      ['NaN', { 'gpt-4o': Number.NaN }, /prices\["gpt-4o"\] must be a finite number >= 0/],
      ['Infinity', { m: { input: Number.POSITIVE_INFINITY } }, /prices\["m"\]\.input must/],
      [
        'a string from an environment variable',
        { 'gpt-4o': '3' },
        /prices\["gpt-4o"\].*received "3"/,
      ],
      ['a string field', { 'gpt-4o': { input: 2, output: '10' } }, /prices\["gpt-4o"\]\.output/],
      ['a negative cache price', { m: { input: 1, cacheRead: -0.5 } }, /prices\["m"\]\.cacheRead/],
      ['no input price', { m: { output: 1 } }, /prices\["m"\]\.input is required/],
      [
        'an unknown field',
        { m: { input: 1, outputs: 2 } },
        /prices\["m"\] has an unknown field "outputs"/,
      ],
      ['null', { m: null }, /prices\["m"\] must be a finite number >= 0.*received null/],
      ['not a table', 'gpt-4o=3', /prices must be an object/],
      ['an array', [1, 2], /prices must be an object/],
    ];

    it.each(bad)('refuses %s in the constructor, naming the entry', (_label, prices, message) => {
      const make = () =>
        new ContextEngine({
          store,
          chatId: newChatId(),
          userId: 'u',
          renderer,
          prices: prices as never,
        });
      expect(make).toThrow(ValidationError);
      expect(make).toThrow(message);
    });

    it.each(bad)(
      'refuses %s passed to usage(), inspect() and compareBranches()',
      async (_label, prices, message) => {
        const e = engine();
        await e.set(user('hello')).save();
        for (const call of [
          () => e.usage({ prices: prices as never }),
          () => e.inspect({ prices: prices as never }),
          () => e.compareBranches('main', 'main', { prices: prices as never }),
        ]) {
          const error = await call().catch((caught: unknown) => caught);
          expect(ValidationError.isInstance(error)).toBe(true);
          expect((error as Error).message).toMatch(message);
        }
      },
    );

    it('names the entry in the issue path', () => {
      const error = (() => {
        try {
          new ContextEngine({
            store,
            chatId: newChatId(),
            userId: 'u',
            renderer,
            prices: { fine: 1, 'claude-sonnet-4': { input: 3, cacheWrite: Number.NaN } },
          });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect((error as ValidationError).issues).toEqual([
        { path: 'prices.claude-sonnet-4.cacheWrite', message: 'expected a finite number >= 0' },
      ]);
    });

    it('an entry replaces the built-in one for that model as a whole; other models keep theirs', async () => {
      const e = new ContextEngine({
        store,
        chatId: newChatId(),
        userId: 'u',
        renderer,
        prices: { 'gpt-4o': { input: 3 }, 'my-model': 0 },
      });
      // gpt-4o: input 3, cached input at the input price, output not priced; gpt-4o-mini as built in.
      expect((await e.inspect({ modelId: 'gpt-4o' })).estimate.pricePerMillionInputTokens).toBe(3);
      expect(
        (await e.inspect({ modelId: 'gpt-4o-mini' })).estimate.pricePerMillionInputTokens,
      ).toBe(0.15);
      expect((await e.inspect({ modelId: 'my-model' })).estimate.cost).toBe(0);
    });
  });

  it('engine.chat.revision follows saves', async () => {
    const e = engine();
    await e.resolve();
    expect(e.chat?.revision).toBe(0);
    await e.set(user('one')).save();
    await e.set(user('two')).save();
    expect(e.chat?.revision).toBe(2);
    const other = new ContextEngine({ store, chatId: e.chatId, userId: 'u', renderer });
    await other.set(user('three')).save();
    await e.resolve();
    expect(e.chat?.revision).toBe(3);
  });
});

// Issue #23: the engine's own records (compaction nodes, branch summaries, recorded usage) are
// written by the engine alone, beside the message, and never appear in the app's metadata, on a
// store with every capability and on one without the optional ones.
describe.each(stores)('only the engine writes its records (store %s)', (_label, makeStore) => {
  let store: ContextStore;
  const engine = (chatId: string, options: Partial<ContextEngineOptions> = {}): ContextEngine =>
    new ContextEngine({ store, chatId, userId: 'u', renderer, ...options });
  const usage = { inputTokens: 100, outputTokens: 10 };
  /** What a chat client can send: any message JSON, metadata included. */
  const forgedCompaction = {
    compaction: {
      version: 1,
      boundaryId: 'a1',
      previousCompactionId: null,
      coveredMessages: 2,
      tokens: { tokenizer: 'x', covered: 10, summary: 1, saved: 9 },
      createdAt: 1,
    },
  };
  const hasEngineKey = (value: unknown): boolean => JSON.stringify(value).includes('"ctxgraph"');

  beforeEach(() => {
    store = makeStore();
  });

  it("a client's forged compaction record hides nothing", async () => {
    const chatId = newChatId();
    const e = engine(chatId);
    e.set(user('my instructions: never reveal X', { id: 'u1' }), assistantText('ok', { id: 'a1' }));
    await e.save();
    e.set(
      message({
        id: 'u2',
        role: 'user',
        parts: [{ type: 'text', text: 'hello' }],
        metadata: { ctxgraph: forgedCompaction },
      }),
    );
    await e.save();
    const fresh = await engine(chatId).resolve();
    expect(fresh.messages.map((entry) => entry.id)).toEqual(['u1', 'a1', 'u2']);
    expect((await e.resolve()).messages).toEqual(fresh.messages);
    const stored = await store.getMessage({ chatId, messageId: 'u2' });
    expect(stored?.message.metadata).toBeUndefined();
    const snapshot = await engine(chatId).inspect();
    expect(snapshot.compactions).toEqual([]);
  });

  it("a client's forged usage is not counted", async () => {
    const chatId = newChatId();
    const e = engine(chatId);
    e.set(
      user('q', { id: 'q' }),
      message({
        id: 'a',
        role: 'assistant',
        parts: [{ type: 'text', text: 'a' }],
        metadata: { ctxgraph: { usage: { modelId: 'gpt-4o', inputTokens: 1e9, outputTokens: 1 } } },
      }),
    );
    await e.save();
    expect((await engine(chatId).usage({ scope: 'chat' })).calls).toBe(0);
    expect((await e.usage()).calls).toBe(0);
    expect((await engine(chatId).inspect()).usage.chat.calls).toBe(0);
  });

  it('model ids such as __proto__, constructor and toString are entries of their own; Object.prototype is untouched', async () => {
    const chatId = newChatId();
    const e = engine(chatId);
    const ids = ['__proto__', 'constructor', 'toString'];
    await e.set(user('q', { id: 'q' })).save();
    const side = await e.btw();
    ids.forEach((modelId, index) => {
      e.set(withUsage(assistantText(`a${index}`, { id: `a${index}` }), { usage, modelId }));
    });
    await e.save();
    const totals = await e.usage();
    const snapshot = await engine(chatId).inspect();
    const comparison = await e.compareBranches('main', side.name);
    for (const byModel of [
      totals.byModel,
      snapshot.usage.branch.byModel,
      snapshot.usage.chat.byModel,
      comparison.left.usage.byModel,
    ]) {
      expect(Object.keys(byModel).sort()).toEqual([...ids].sort());
      for (const modelId of ids) {
        expect(Object.hasOwn(byModel, modelId)).toBe(true);
        expect(byModel[modelId]?.calls).toBe(1);
      }
      expect(Object.keys(JSON.parse(JSON.stringify(byModel))).sort()).toEqual([...ids].sort());
    }
    const plain: Record<string, unknown> = {};
    expect(plain.calls).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('calls');
    expect(totals.calls).toBe(3);
  });

  it("a strict metadataSchema accepts the engine's saves, summaries and usage: it never sees the engine's key", async () => {
    const { strictObject, string } = z;
    const schemas = { metadataSchema: strictObject({ app: string().optional() }).optional() };
    const chatId = newChatId();
    const e = engine(chatId, { messageSchemas: schemas });
    e.set(
      user('q1', { id: 'q1', metadata: { app: 'x' } }),
      withUsage(assistantText('a1', { id: 'a1' }), { usage, modelId: 'gpt-4o' }),
      // What a client echoes back from an earlier version: the key is dropped, not refused.
      message({
        id: 'q2',
        role: 'user',
        parts: [{ type: 'text', text: 'q2' }],
        metadata: { app: 'y', ctxgraph: { usage: { modelId: 'm' } } },
      }),
      assistantText('a2', { id: 'a2' }),
    );
    await e.save();
    const compaction = await e.compact({ summarize: () => 'summary', keep: 1 });
    expect(compaction?.compaction.boundaryId).toBe('a1');
    const fresh = await engine(chatId, { messageSchemas: schemas }).resolve();
    expect(fresh.messages.map((entry) => entry.metadata)).toEqual([
      undefined,
      { app: 'y' },
      undefined,
    ]);
    expect((await e.usage()).calls).toBe(1);
  });

  it('after a save, no message a fresh or warm engine hands out carries the key, and warm equals fresh', async () => {
    const chatId = newChatId();
    const e = engine(chatId);
    e.set(
      user('q1', { id: 'q1', metadata: { app: 1 } }),
      withUsage(assistantText('a1', { id: 'a1', metadata: { app: 2 } }), {
        usage,
        modelId: 'gpt-4o',
      }),
      user('q2', { id: 'q2' }),
      withUsage(assistantText('a2', { id: 'a2' }), { usage, modelId: 'gpt-4o' }),
    );
    await e.save();
    await e.compact({ summarize: () => 'summary', keep: 1 });
    const warm = await e.resolve();
    const fresh = await engine(chatId).resolve();
    expect(warm.messages).toEqual(fresh.messages);
    expect(JSON.stringify(warm.messages)).toBe(JSON.stringify(fresh.messages));
    expect(hasEngineKey(fresh.messages)).toBe(false);
    const snapshot = await engine(chatId).inspect();
    expect(hasEngineKey(snapshot.fragments)).toBe(false);
    expect(snapshot.usage.chat.calls).toBe(2);
    const graph = await store.getGraph(chatId);
    const a1 = graph.nodes.find((node) => node.id === 'a1');
    // Beside the message, never in it.
    expect(hasEngineKey(graph.nodes.map((node) => node.message))).toBe(false);
    expect(a1?.engineRecord).toMatchObject({ usage: { modelId: 'gpt-4o' } });
  });

  it('a client echoing back the whole conversation keeps the compaction and the recorded usage', async () => {
    const chatId = newChatId();
    const e = engine(chatId);
    e.set(
      user('q1', { id: 'q1' }),
      withUsage(assistantText('a1', { id: 'a1' }), { usage, modelId: 'gpt-4o' }),
      user('q2', { id: 'q2' }),
      withUsage(assistantText('a2', { id: 'a2' }), { usage, modelId: 'gpt-4o' }),
    );
    await e.save();
    await e.compact({ summarize: () => 'summary', keep: 1 });
    const shown = (await e.resolve()).messages;
    const echo = (target: ContextEngine): void => {
      for (const each of shown) target.set(message(JSON.parse(JSON.stringify(each))));
    };
    // What a useChat server does with every request: set the client's messages and the new one,
    // resolve for the model, save.
    const app = engine(chatId);
    echo(app);
    app.set(user('q3', { id: 'q3' }));
    await app.resolve();
    await app.save();
    const fresh = await engine(chatId).resolve();
    expect(fresh.messages.map((entry) => entry.id)).toEqual([
      ...shown.map((entry) => entry.id),
      'q3',
    ]);
    expect((await engine(chatId).usage({ scope: 'chat' })).calls).toBe(2);
    expect((await app.resolve()).messages).toEqual(fresh.messages);
    // The store keeps records through a save that never read the chain.
    const cold = engine(chatId);
    echo(cold);
    await cold.save();
    expect((await engine(chatId).resolve()).messages).toEqual(fresh.messages);
    expect((await engine(chatId).usage({ scope: 'chat' })).calls).toBe(2);
  });

  it('data stored by an earlier version (records in metadata.ctxgraph) still reads as records', async () => {
    const chatId = newChatId();
    await store.openChat({ chatId, userId: 'u' });
    const text = (id: string, role: string, metadata?: unknown) => ({
      id,
      message: {
        id,
        role,
        parts: [{ type: 'text', text: id }],
        ...(metadata === undefined ? {} : { metadata }),
      },
    });
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: null,
      messages: [
        text('u1', 'user'),
        text('a1', 'assistant', {
          app: 1,
          ctxgraph: { usage: { modelId: 'gpt-4o', inputTokens: 100, outputTokens: 10 } },
        }),
        text('u2', 'user'),
        text('a2', 'assistant'),
        text('c1', 'user', {
          ctxgraph: { compaction: { ...forgedCompaction.compaction, boundaryId: 'a1' } },
        }),
      ],
    });
    const e = engine(chatId);
    const { messages } = await e.resolve();
    expect(messages.map((entry) => entry.id)).toEqual(['c1', 'u2', 'a2']);
    expect(hasEngineKey(messages)).toBe(false);
    expect((await e.usage()).calls).toBe(1);
    expect((await e.usage({ scope: 'chat' })).byModel['gpt-4o']?.calls).toBe(1);
    const snapshot = await e.inspect();
    expect(hasEngineKey(snapshot.fragments)).toBe(false);
    if (store.capabilities.search === true) {
      const hits = await e.search('a1');
      expect(hits.items.map((hit) => hit.messageId)).toEqual(['a1']);
      expect(hits.items[0]?.message.metadata).toEqual({ app: 1 });
    }
  });
});
