import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { simulateReadableStream, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { countingStore } from '../live/__fixtures__/live-test-kit';
import { type ChatCycle, createChatCycle } from './chat-cycle';

// An edited message keeps its id, and each edit is a new version whose node id the store
// allocates (issue #34): a chat client may edit one message any number of times, and several
// tabs may edit it at once, without a request failing.

function echoModel(text: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: text },
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
    }),
  });
}

const engine = { renderer: new XmlRenderer() };
const question = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((message) =>
    message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
  );

/** One request with the whole conversation, its reply streamed and saved; the path after it. */
async function send(cycle: ChatCycle, chatId: string, messages: UIMessage[], reply: string) {
  const turn = await cycle.begin({ id: chatId, messages }, { userId: 'u' });
  await turn.respond(streamText({ model: echoModel(reply), messages: turn.messages })).text();
  return cycle.messages(chatId, { userId: 'u' });
}

/** The timeout of a test that makes a hundred writes or more: room for a busy machine. */
const MANY_WRITES = 60_000;

const opened: ContextStore[] = [];
const files: string[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  const fs = await import('node:fs');
  for (const path of files)
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
});

const kinds: Array<[string, () => [ContextStore, ContextStore]]> = [
  [
    'memory',
    () => {
      const store = new InMemoryContextStore();
      opened.push(store);
      return [store, store];
    },
  ],
  [
    'SQLite file, two servers',
    () => {
      const path = `/tmp/ctxgraph-ai-sdk-versions-${Math.random().toString(36).slice(2)}.db`;
      files.push(path);
      const stores: [ContextStore, ContextStore] = [
        new SqliteContextStore({ path }),
        new SqliteContextStore({ path }),
      ];
      opened.push(...stores);
      return stores;
    },
  ],
];

describe.each(kinds)('editing one message through the chat cycle (%s)', (_label, handles) => {
  it(
    '110 edits of one question, one request each: every request succeeds and shows its edit',
    async () => {
      const [store] = handles();
      const cycle = createChatCycle({ store, engine });
      const chatId = 'many-edits';
      const first = await send(cycle, chatId, [question('q1', 'one')], 'answer 1');
      const second = await send(cycle, chatId, [...first, question('q2', 'two')], 'answer 2');
      expect(texts(second)).toEqual(['one', 'answer 1', 'two', 'answer 2']);
      for (let n = 2; n <= 111; n += 1) {
        // The page edits q2 (useChat keeps its id) and sends the conversation up to it.
        const path = await send(
          cycle,
          chatId,
          [...first, question('q2', `two, edit ${n}`)],
          `answer to edit ${n}`,
        );
        expect(texts(path)).toEqual(['one', 'answer 1', `two, edit ${n}`, `answer to edit ${n}`]);
        expect(path[2]?.id).toBe('q2');
      }
    },
    MANY_WRITES,
  );

  it(
    '12 tabs editing one question at once, over two servers: every request succeeds',
    async () => {
      const stores = handles();
      const cycles = stores.map((store) => createChatCycle({ store, engine }));
      const chatId = 'edits-at-once';
      const first = await send(cycles[0] as ChatCycle, chatId, [question('q1', 'one')], 'answer 1');
      await send(cycles[0] as ChatCycle, chatId, [...first, question('q2', 'two')], 'answer 2');
      const paths = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          send(
            cycles[index % 2] as ChatCycle,
            chatId,
            [...first, question('q2', `two, tab ${index}`)],
            `answer to tab ${index}`,
          ),
        ),
      );
      // Every tab's edit is a version of q2 under a node of its own, beside the original.
      const versions = await (cycles[1] as ChatCycle).versions(chatId, 'q2', { userId: 'u' });
      expect(versions).toHaveLength(13);
      expect(new Set(versions.map((version) => version.nodeId)).size).toBe(13);
      expect(texts(versions.map((version) => version.message)).sort()).toEqual(
        ['two', ...Array.from({ length: 12 }, (_, index) => `two, tab ${index}`)].sort(),
      );
      expect(paths.every((path) => path.length === 4)).toBe(true);
    },
    MANY_WRITES,
  );
});

describe.each(kinds)(
  'the versions of a conversation, with its messages (%s)',
  (_label, handles) => {
    it('nodeIds and versions of every message on the path, from one read of the graph', async () => {
      const [store, other] = handles();
      const cycle = createChatCycle({ store, engine });
      const chatId = 'versions-on-path';
      // Message ids the app chose, `__proto__` among them: still plain own keys of the records.
      const first = await send(cycle, chatId, [question('__proto__', 'one')], 'answer 1');
      const second = await send(cycle, chatId, [...first, question('q2', 'two')], 'answer 2');
      // q2 edited (same id, a new version), then the edit's reply regenerated.
      const edited = await send(cycle, chatId, [...first, question('q2', 'TWO')], 'answer 2b');
      const regenerate = await cycle.begin(
        {
          id: chatId,
          messages: edited.slice(0, 3),
          trigger: 'regenerate-message',
          messageId: edited[3]?.id,
        },
        { userId: 'u' },
      );
      await regenerate
        .respond(streamText({ model: echoModel('answer 2c'), messages: regenerate.messages }))
        .text();
      // The server's reply ids: a regenerated reply has an id of its own.
      const replyIds = [second[3]?.id, edited[3]?.id, regenerate.replyId];
      expect(new Set(replyIds).size).toBe(3);

      const counted = countingStore(other);
      const reader = createChatCycle({ store: counted.store, engine });
      const read = await reader.conversation(chatId, { userId: 'u' });
      expect(texts(read.messages)).toEqual(['one', 'answer 1', 'TWO', 'answer 2c']);
      const q2 = read.nodeIds.q2 as string;
      expect(q2).not.toBe('q2');
      expect(read.nodeIds).toEqual({
        ['__proto__']: '__proto__',
        [first[1]?.id as string]: first[1]?.id,
        q2,
        [regenerate.replyId]: regenerate.replyId,
      });
      expect(Object.hasOwn(read.nodeIds, '__proto__')).toBe(true);
      expect(read.versions).toEqual({
        q2: {
          index: 1,
          nodes: [
            { nodeId: 'q2', leafNodeId: second[3]?.id },
            { nodeId: q2, leafNodeId: regenerate.replyId },
          ],
        },
        [regenerate.replyId]: {
          index: 1,
          nodes: [
            { nodeId: edited[3]?.id, leafNodeId: edited[3]?.id },
            { nodeId: regenerate.replyId, leafNodeId: regenerate.replyId },
          ],
        },
      });
      // The graph is read once, beside the reads the conversation made before.
      expect(counted.calls.filter((name) => name === 'getGraph')).toHaveLength(1);
      expect(JSON.parse(JSON.stringify(read))).toEqual(read);

      // The first version of q2, opened by its leaf: its own position among the versions.
      const opened = await reader.conversation(chatId, { userId: 'u', node: second[3]?.id });
      expect(texts(opened.messages)).toEqual(['one', 'answer 1', 'two', 'answer 2']);
      expect(opened.nodeIds.q2).toBe('q2');
      expect(opened.versions.q2?.index).toBe(0);
      expect(Object.keys(opened.versions)).toEqual(['q2']);

      // An edit of the first message: a version of `__proto__`, an own key of the JSON.
      const root = await send(cycle, chatId, [question('__proto__', 'ONE')], 'answer 1b');
      const rootRead = await reader.conversation(chatId, { userId: 'u' });
      expect(texts(rootRead.messages)).toEqual(texts(root));
      expect(Object.keys(rootRead.versions)).toEqual(['__proto__']);
      const sent = JSON.parse(JSON.stringify(rootRead)) as { versions: object };
      expect(Object.getOwnPropertyDescriptor(sent.versions, '__proto__')?.value).toMatchObject({
        index: 1,
      });
    });

    it('after a compaction: a node for every message shown (the summary too), versions of those', async () => {
      const [store] = handles();
      const cycle = createChatCycle({ store, engine });
      const chatId = 'versions-compacted';
      await send(cycle, chatId, [question('q1', 'one')], 'answer 1');
      const first = await send(cycle, chatId, [question('q1', 'ONE')], 'answer 1b');
      await send(cycle, chatId, [...first, question('q2', 'two')], 'answer 2');
      await send(cycle, chatId, [...first, question('q2', 'TWO')], 'answer 2b');
      const before = await cycle.conversation(chatId, { userId: 'u' });
      expect(Object.keys(before.versions)).toEqual(['q1', 'q2']);
      // The summary replaces the first turn; the last one is kept.
      await cycle.read(chatId, { userId: 'u' }, async (chatEngine) => {
        await chatEngine.continueFrom(before.nodeIds[before.messages[3]?.id as string] as string);
        await chatEngine.compact({ summarize: async () => 'the summary', keep: 1 });
      });
      const read = await cycle.conversation(chatId, { userId: 'u' });
      expect(texts(read.messages).slice(1)).toEqual(['TWO', 'answer 2b']);
      expect(texts(read.messages)[0]).toContain('the summary');
      // Every message shown has its node, the summary's included.
      expect(Object.keys(read.nodeIds)).toEqual(read.messages.map((message) => message.id));
      expect(read.nodeIds.q2).toBe(before.nodeIds.q2);
      // The kept question's versions are listed as before; q1's, in the summarized span, are not.
      expect(Object.keys(read.versions)).toEqual(['q2']);
      expect(read.versions.q2?.index).toBe(1);
      // The path before the compaction, by its reply's node, still shows both.
      const opened = await cycle.conversation(chatId, {
        userId: 'u',
        node: before.nodeIds[before.messages[3]?.id as string] as string,
      });
      expect(Object.keys(opened.versions)).toEqual(['q1', 'q2']);
      // The newest leaf below q2's edit is the compaction node now.
      expect(read.versions.q2?.nodes[1]?.leafNodeId).toBe(
        read.nodeIds[read.messages[0]?.id as string],
      );
    });

    it('a chat without messages has empty records', async () => {
      const [store] = handles();
      const cycle = createChatCycle({ store, engine });
      await store.openChat({ chatId: 'empty-chat', userId: 'u' });
      expect(await cycle.conversation('empty-chat', { userId: 'u' })).toEqual({
        messages: [],
        outcomes: {},
        retries: {},
        nodeIds: {},
        versions: {},
      });
    });
  },
);
