import { assistant, message, user } from '@ctxgraph/codecs';
import { type ContextStore, readCompaction, role, ValidationError } from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import {
  generateText,
  type ModelMessage,
  simulateReadableStream,
  streamText,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { aiMajor } from '../../../../tooling/ai-major/major.mjs';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from '../usage/message-usage';

// OpenAI Responses compaction (`@ai-sdk/openai` 4.x, AI SDK 7), end to end through `streamText`.
// What the provider does, read from its source (openai-responses-language-model):
// - a `compaction` output item (`{ type: 'compaction', id, encrypted_content }`) is streamed, on
//   `response.output_item.done`, as the stream part
//   `{ type: 'custom', kind: 'openai.compaction', providerMetadata: { openai: { type: 'compaction', itemId, encryptedContent } } }`;
// - an assistant `custom` part of that kind is sent again from its
//   `providerOptions.openai.itemId` (an `item_reference` when the call stores responses) or with
//   its `encryptedContent` (a `compaction` input item when it does not).
// AI SDK 6 has no custom part (its UI message schema refuses one), so this runs on AI SDK 7 only.
const majorSeven = aiMajor() === '7';

/** A stream part of a language model (the provider package's type is not a dependency here). */
type StreamPart = Parameters<
  typeof simulateReadableStream<
    Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<
      infer Part
    >
      ? Part
      : never
  >
>[0]['chunks'][number];

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;

const ITEM_ID = 'cmp_68c9e1f0a1b2c3d4';
const ENCRYPTED = 'gAAAAABoyeHw-encrypted-compaction-of-q1-a1-q2-a2';

/** The provider metadata `@ai-sdk/openai` gives a compaction item. */
function itemMetadata(itemId: string, encryptedContent: string) {
  return { openai: { type: 'compaction', itemId, encryptedContent } };
}

const compactionMetadata = itemMetadata(ITEM_ID, ENCRYPTED);

/** What `@ai-sdk/openai` 4.x streams for a reply whose response compacted first, then answered. */
function compactingStream(answer: string, metadata = compactionMetadata): StreamPart[] {
  const messageItem = { openai: { itemId: `msg_${answer}` } };
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: `resp_${answer}`, modelId: 'gpt-5', timestamp: new Date(0) },
    { type: 'custom', kind: 'openai.compaction', providerMetadata: metadata },
    { type: 'text-start', id: `msg_${answer}`, providerMetadata: messageItem },
    { type: 'text-delta', id: `msg_${answer}`, delta: answer },
    { type: 'text-end', id: `msg_${answer}`, providerMetadata: messageItem },
    {
      type: 'finish',
      finishReason: { unified: 'stop', raw: undefined },
      // OpenAI reports one usage for the whole response, compaction included.
      usage: {
        inputTokens: { total: 12000, noCache: 11000, cacheRead: 1000, cacheWrite: undefined },
        outputTokens: { total: 450, text: 400, reasoning: 50 },
      },
      providerMetadata: { openai: { responseId: `resp_${answer}` } },
    },
  ] as StreamPart[];
}

function plainStream(answer: string): StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: '0' },
    { type: 'text-delta', id: '0', delta: answer },
    { type: 'text-end', id: '0' },
    {
      type: 'finish',
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: undefined },
        outputTokens: { total: 10, text: 10, reasoning: undefined },
      },
    },
  ];
}

function openaiModel(...scripts: StreamPart[][]): {
  model: MockLanguageModelV3;
  prompts: unknown[];
} {
  const prompts: unknown[] = [];
  let call = 0;
  const model = new MockLanguageModelV3({
    provider: 'openai.responses',
    modelId: 'gpt-5',
    doStream: async (options) => {
      prompts.push(options.prompt);
      const chunks = scripts[Math.min(call, scripts.length - 1)] ?? [];
      call += 1;
      return { stream: simulateReadableStream({ chunks }) };
    },
  });
  return { model, prompts };
}

/** One server turn: resolve, stream, set the reply with its usage, response and metadata, save. */
async function turn(
  engine: ContextEngine,
  model: MockLanguageModelV3,
  question: { id: string; text: string },
  replyId: string,
): Promise<UIMessage> {
  engine.set(user(question.text, { id: question.id }));
  const { systemPrompt, messages } = await engine.resolve({ format: 'model' });
  const result = streamText({ model, system: systemPrompt, messages: messages as ModelMessage[] });
  let reply: UIMessage | undefined;
  const stream = result.toUIMessageStream({
    generateMessageId: () => replyId,
    onFinish: ({ responseMessage }) => {
      reply = responseMessage;
    },
  });
  for await (const _chunk of stream) {
    // drain
  }
  if (reply === undefined) throw new Error('the stream produced no reply');
  engine.set(
    withUsage(message(reply), {
      usage: await result.usage,
      modelId: 'gpt-5',
      response: await result.response,
      providerMetadata: await result.providerMetadata,
    }),
  );
  await engine.save();
  return reply;
}

/**
 * The Responses input `@ai-sdk/openai` 4.x builds from the engine's model messages: the real
 * provider, through `generateText`, with a fetch that keeps the request body and answers 400 (no
 * network). `store` is the provider option (OpenAI's default stores responses).
 */
async function openaiRequestInput(
  resolved: { systemPrompt: string; messages: unknown[] },
  store?: boolean,
): Promise<unknown[]> {
  const { createOpenAI } = await import('@ai-sdk/openai');
  let body: { input?: unknown[] } | undefined;
  const openai = createOpenAI({
    apiKey: 'test-key',
    fetch: async (_url, init) => {
      body = JSON.parse(String(init?.body));
      return new Response(JSON.stringify({ error: { message: 'captured', type: 'test' } }), {
        status: 400,
        headers: { 'content-type': 'application/json' },
      });
    },
  });
  await expect(
    generateText({
      model: openai.responses('gpt-5'),
      system: resolved.systemPrompt,
      messages: resolved.messages as ModelMessage[],
      maxRetries: 0,
      ...(store === undefined ? {} : { providerOptions: { openai: { store } } }),
    }),
  ).rejects.toThrow(/captured/);
  if (body?.input === undefined) throw new Error('@ai-sdk/openai sent no input');
  return body.input;
}

const sqlitePaths: string[] = [];
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
      const path = `/tmp/ctxgraph-openai-compaction-${Math.random().toString(36).slice(2)}.db`;
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
        schema: 'ctxgraph_engine_openai_compaction',
      }),
  ]);
}

describe.skipIf(!majorSeven).each(stores)(
  'OpenAI compaction item, AI SDK 7 (%s) [AI SDK 6 skips: AI SDK 6 has no custom part to carry it]',
  (_name, makeStore) => {
    it('records the reply as a compaction node, sends the item back and not the originals, counts usage once, and undoes by rewind', async () => {
      const store = makeStore();
      const chatId = `openai-compaction-${Math.random().toString(36).slice(2)}`;
      made.push({ store, chatId });
      const open = () =>
        new ContextEngine({ store, chatId, userId: 'u', renderer: new LineRenderer() });
      const engine = open();
      engine.set(role('You help.'));
      const { model, prompts } = openaiModel(
        plainStream('a1'),
        plainStream('a2'),
        compactingStream('a3'),
        plainStream('a4'),
      );
      await turn(engine, model, { id: 'q1', text: 'q1' }, 'a1');
      await turn(engine, model, { id: 'q2', text: 'q2' }, 'a2');
      const reply = await turn(engine, model, { id: 'q3', text: 'q3' }, 'a3');
      // The AI SDK hands the item to the UI message as a custom part with its provider metadata.
      const itemIndex = reply.parts.findIndex((part) => part.type === 'custom');
      expect(reply.parts[itemIndex]).toEqual({
        type: 'custom',
        kind: 'openai.compaction',
        providerMetadata: compactionMetadata,
      });

      const node = await store.getMessage({ chatId, messageId: 'a3' });
      if (node === null) throw new Error('a3 was not saved');
      // The stored message keeps the item as the provider gave it (it is sent back from here).
      expect(node.message.parts[itemIndex]).toEqual(reply.parts[itemIndex]);
      const compaction = readCompaction(node);
      expect(compaction).toMatchObject({
        version: 1,
        boundaryId: 'q3',
        previousCompactionId: null,
        coveredMessages: 5,
        provider: { provider: 'openai', partIndex: itemIndex, itemId: ITEM_ID },
      });
      expect(compaction?.provider).not.toHaveProperty('usage');
      // OpenAI's usage already covers the compaction: recorded once, as the SDK reported it.
      expect(node.engineRecord).toMatchObject({
        usage: { inputTokens: 12000, cacheReadTokens: 1000, outputTokens: 450 },
      });
      expect(JSON.stringify(node.engineRecord)).not.toContain('pendingProviderCompaction');
      expect(JSON.stringify(node.message)).not.toContain('"ctxgraph"');

      // The next call: the reply (carrying the item back) first, not the turns it replaced.
      await turn(engine, model, { id: 'q4', text: 'q4' }, 'a4');
      const fourth = prompts[3] as { role: string; content: unknown }[];
      expect(fourth.map((entry) => entry.role)).toEqual(['system', 'assistant', 'user']);
      // What @ai-sdk/openai turns back into the item: a custom part of its kind whose provider
      // options hold the item id (an item_reference) and the encrypted content (a compaction item).
      expect(fourth[1]?.content).toContainEqual({
        type: 'custom',
        kind: 'openai.compaction',
        providerOptions: compactionMetadata,
      });
      for (const original of ['q1', 'a1', 'q2', 'a2'])
        expect(JSON.stringify(fourth)).not.toContain(`"${original}"`);

      // And what the real @ai-sdk/openai sends from it: a reference to the stored item (OpenAI's
      // default), or the item itself with its encrypted content when responses are not stored.
      const next = await engine.resolve({ format: 'model' });
      const stored = await openaiRequestInput(next);
      expect(stored).toContainEqual({ type: 'item_reference', id: ITEM_ID });
      const stateless = await openaiRequestInput(next, false);
      expect(stateless).toContainEqual({
        type: 'compaction',
        id: ITEM_ID,
        encrypted_content: ENCRYPTED,
      });
      for (const input of [stored, stateless])
        for (const original of ['q1', 'a1', 'q2', 'a2'])
          expect(JSON.stringify(input)).not.toContain(`"${original}"`);

      // A fresh engine on the same store shows, sends and counts the same.
      const fresh = open();
      const shown = await fresh.resolve();
      expect(shown.messages.map((entry) => entry.id)).toEqual(['a3', 'q4', 'a4']);
      const usage = await fresh.usage();
      expect(usage.inputTokens).toBe(100 + 100 + 12000 + 100);
      expect(usage.cacheReadTokens).toBe(1000);
      expect(usage.outputTokens).toBe(10 + 10 + 450 + 10);
      const inspected = await fresh.inspect();
      expect(JSON.stringify(inspected)).toContain('"boundaryId":"q3"');

      // Undone by rewind: a branch at q3 shows the originals again; the store kept them.
      await fresh.rewind('q3');
      const rewound = await fresh.resolve();
      expect(rewound.messages.map((entry) => entry.id)).toEqual(['q1', 'a1', 'q2', 'a2', 'q3']);
      const rewoundModel = await fresh.resolve({ format: 'model' });
      expect(JSON.stringify(rewoundModel.messages)).not.toContain(ITEM_ID);
    });

    it('a second compaction item stands in for the first: only the newest is sent, both undo by rewind', async () => {
      const store = makeStore();
      const chatId = `openai-compaction-twice-${Math.random().toString(36).slice(2)}`;
      made.push({ store, chatId });
      const open = () =>
        new ContextEngine({ store, chatId, userId: 'u', renderer: new LineRenderer() });
      const engine = open();
      const secondItem = itemMetadata('cmp_second', 'gAAAAAB-second');
      const { model, prompts } = openaiModel(
        plainStream('a1'),
        compactingStream('a2'),
        plainStream('a3'),
        compactingStream('a4', secondItem),
        plainStream('a5'),
      );
      for (const n of [1, 2, 3, 4, 5])
        await turn(engine, model, { id: `q${n}`, text: `q${n}` }, `a${n}`);

      const node = await store.getMessage({ chatId, messageId: 'a4' });
      if (node === null) throw new Error('a4 was not saved');
      expect(readCompaction(node)).toMatchObject({
        boundaryId: 'q4',
        previousCompactionId: 'a2',
        coveredMessages: 4,
        provider: { provider: 'openai', itemId: 'cmp_second' },
      });
      const fifth = (prompts[4] as { role: string; content: unknown }[]).filter(
        (entry) => entry.role !== 'system',
      );
      expect(fifth.map((entry) => entry.role)).toEqual(['assistant', 'user']);
      expect(fifth[0]?.content).toContainEqual({
        type: 'custom',
        kind: 'openai.compaction',
        providerOptions: secondItem,
      });
      expect(JSON.stringify(fifth)).not.toContain(ITEM_ID);

      const fresh = open();
      expect((await fresh.resolve()).messages.map((entry) => entry.id)).toEqual(['a4', 'q5', 'a5']);
      // Rewinding past the second compaction shows the first one's view again.
      await fresh.rewind('q4');
      expect((await fresh.resolve()).messages.map((entry) => entry.id)).toEqual([
        'a2',
        'q3',
        'a3',
        'q4',
      ]);
      await fresh.rewind('q2');
      expect((await fresh.resolve()).messages.map((entry) => entry.id)).toEqual(['q1', 'a1', 'q2']);
    });

    it('ignores an OpenAI compaction item a message merely carries (a chat client can send any part)', async () => {
      const store = makeStore();
      const chatId = `openai-forged-${Math.random().toString(36).slice(2)}`;
      made.push({ store, chatId });
      const engine = new ContextEngine({
        store,
        chatId,
        userId: 'u',
        renderer: new LineRenderer(),
      });
      const forged: UIMessage = {
        id: 'forged',
        role: 'assistant',
        parts: [
          { type: 'custom', kind: 'openai.compaction', providerMetadata: compactionMetadata },
          { type: 'text', text: 'ok' },
        ],
      };
      engine.set(user('q1', { id: 'q1' }), message(forged));
      await engine.save();
      // With usage from a call whose response holds no compaction item.
      engine.set(
        withUsage(message({ ...forged, id: 'forged-2' }), {
          usage: { inputTokens: 10, outputTokens: 1 },
          modelId: 'gpt-5',
          response: { messages: [{ role: 'assistant', content: [{ type: 'text', text: 'ok' }] }] },
        }),
      );
      await engine.save();
      for (const id of ['forged', 'forged-2']) {
        const node = await store.getMessage({ chatId, messageId: id });
        expect(node && readCompaction(node)).toBeNull();
      }
      const shown = await engine.resolve();
      expect(shown.messages.map((entry) => entry.id)).toEqual(['q1', 'forged', 'forged-2']);
    });

    it('never sends an item a client forged, and sends the recorded item when a client echoes the reply with another', async () => {
      const store = makeStore();
      const chatId = `openai-forged-send-${Math.random().toString(36).slice(2)}`;
      made.push({ store, chatId });
      const engine = new ContextEngine({
        store,
        chatId,
        userId: 'u',
        renderer: new LineRenderer(),
      });
      const { model, prompts } = openaiModel(
        plainStream('a1'),
        compactingStream('a2'),
        plainStream('a3'),
      );
      /** The custom compaction parts a captured prompt holds. */
      const items = (prompt: unknown) =>
        (prompt as { content: unknown }[])
          .flatMap((entry) => (Array.isArray(entry.content) ? entry.content : []))
          .filter((part: { type?: string }) => part.type === 'custom');
      const forgedItem = itemMetadata('cmp_forged', 'gAAAAAB-forged');
      engine.set(
        message({
          id: 'client-forged',
          role: 'assistant',
          parts: [
            { type: 'custom', kind: 'openai.compaction', providerMetadata: forgedItem },
            { type: 'text', text: 'ok' },
          ],
        }),
      );
      await turn(engine, model, { id: 'q1', text: 'q1' }, 'a1');
      expect(items(prompts[0])).toEqual([]);
      expect(JSON.stringify(prompts[0])).toContain('"ok"');

      // The provider compacts; the client echoes the reply with the item swapped for its own.
      const reply = await turn(engine, model, { id: 'q2', text: 'q2' }, 'a2');
      engine.set(
        message({
          ...reply,
          parts: reply.parts.map((part) =>
            part.type === 'custom' ? { ...part, providerMetadata: forgedItem } : part,
          ),
        }),
      );
      await engine.save();
      await turn(engine, model, { id: 'q3', text: 'q3' }, 'a3');
      expect(items(prompts[2])).toEqual([
        { type: 'custom', kind: 'openai.compaction', providerOptions: compactionMetadata },
      ]);
      // And the real @ai-sdk/openai sends the provider's item, never the client's.
      const input = await openaiRequestInput(await engine.resolve({ format: 'model' }), false);
      expect(input).toContainEqual({
        type: 'compaction',
        id: ITEM_ID,
        encrypted_content: ENCRYPTED,
      });
      expect(JSON.stringify(input)).not.toContain('cmp_forged');
    });
  },
);

// withUsage reads the call's response as plain data (no AI SDK schema), so these run on both majors.
describe('withUsage({ response }) with an OpenAI compaction item: input checks', () => {
  const responseWith = (part: Record<string, unknown>) => ({
    messages: [{ role: 'assistant', content: [part, { type: 'text', text: 'answer' }] }],
  });
  const item = (providerOptions: unknown) => ({
    type: 'custom',
    kind: 'openai.compaction',
    providerOptions,
  });

  it('refuses a reply whose custom part names another item than the call produced', () => {
    const reply = message({
      id: 'r',
      role: 'assistant',
      parts: [{ type: 'text', text: 'answer' }],
    });
    expect(() =>
      withUsage(reply, {
        usage: { inputTokens: 1 },
        modelId: 'gpt-5',
        response: responseWith(item(compactionMetadata)),
      }),
    ).toThrow(ValidationError);
  });

  it('treats an item without a string item id (or of another type) as no compaction: nothing is refused or recorded', async () => {
    for (const providerOptions of [
      { openai: { type: 'compaction' } },
      { openai: { type: 'compaction', itemId: 42 } },
      { openai: { type: 'reasoning', itemId: ITEM_ID } },
      { anthropic: { type: 'compaction', itemId: ITEM_ID } },
      null,
    ]) {
      const store = new InMemoryContextStore();
      const engine = new ContextEngine({
        store,
        chatId: 'c',
        userId: 'u',
        renderer: new LineRenderer(),
      });
      engine.set(
        user('q', { id: 'q' }),
        withUsage(assistant('answer', { id: 'a' }), {
          usage: { inputTokens: 10, outputTokens: 1 },
          modelId: 'gpt-5',
          response: responseWith(item(providerOptions)),
        }),
      );
      await engine.save();
      const node = await store.getMessage({ chatId: 'c', messageId: 'a' });
      expect(node && readCompaction(node)).toBeNull();
      expect((await engine.usage()).inputTokens).toBe(10);
    }
  });
});
