import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { simulateReadableStream, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
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
