import { assistantText, user } from '@ctxgraph/codecs';
import type { ContextStore } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { storePairs } from '../__fixtures__/store-pairs';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

// An edited message keeps its id; each version is a node `<id>~<n>` whose id the store allocates
// inside the write (issue #34): no cap on how often a message is edited, and no edit fails
// because others edit the same message at the same time.

const renderer = new LineRenderer();
const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );

/** The timeout of a test that makes a hundred writes or more: room for a busy machine. */
const MANY_WRITES = 60_000;

const { pairs: kinds, closeAll } = storePairs('version-ids');
afterAll(closeAll);

const newChatId = (): string => `versions-${Math.random().toString(36).slice(2)}`;

describe.each(kinds)('versions of one message (%s)', (_label, handles) => {
  /** u1 → a1 → u2 → a2 on main. */
  const seed = async (store: ContextStore, chatId: string): Promise<void> => {
    await new ContextEngine({ store, chatId, userId: 'u', renderer })
      .set(
        user('hello', { id: 'u1' }),
        assistantText('hi', { id: 'a1' }),
        user('question 1', { id: 'u2' }),
        assistantText('answer 1', { id: 'a2' }),
      )
      .save();
  };

  /** A request that edits u2 (same id, new text) and saves the reply: a new version at a1. */
  const edit = async (store: ContextStore, chatId: string, n: number): Promise<ContextEngine> => {
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await engine.continueFrom('a1', { activate: false });
    engine.set(user(`question ${n}`, { id: 'u2' }), assistantText(`answer ${n}`, { id: `a-${n}` }));
    await engine.save();
    return engine;
  };

  it(
    'a message edited 120 times: every save succeeds, each version under its own id',
    async () => {
      const [store] = handles();
      const chatId = newChatId();
      await seed(store, chatId);
      const count = 120;
      for (let n = 2; n <= count + 1; n += 1) {
        const engine = await edit(store, chatId, n);
        expect(engine.nodeIdOf('u2')).toBe(`u2~${n}`);
        expect(texts((await engine.resolve()).messages)).toEqual([
          'hello',
          'hi',
          `question ${n}`,
          `answer ${n}`,
        ]);
      }
      const reader = new ContextEngine({ store, chatId, userId: 'u', renderer });
      // The newest versions first, then the original.
      const found = await reader.findMessage('u2');
      expect(found.slice(0, 3)).toEqual([`u2~${count + 1}`, `u2~${count}`, `u2~${count - 1}`]);
      // An old version is still whole, and the active branch never moved.
      await reader.continueFrom('a-2');
      expect(texts((await reader.resolve()).messages)).toEqual([
        'hello',
        'hi',
        'question 2',
        'answer 2',
      ]);
      const main = new ContextEngine({ store, chatId, userId: 'u', renderer });
      expect(texts((await main.resolve()).messages)).toEqual([
        'hello',
        'hi',
        'question 1',
        'answer 1',
      ]);
    },
    MANY_WRITES,
  );

  it(
    '12 concurrent edits of one message, over two store objects: all succeed, distinct ids',
    async () => {
      const stores = handles();
      const chatId = newChatId();
      await seed(stores[0], chatId);
      const count = 12;
      const engines = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          edit(stores[index % 2] as ContextStore, chatId, index + 2),
        ),
      );
      const ids = engines.map((engine) => engine.nodeIdOf('u2'));
      expect(new Set(ids).size).toBe(count);
      expect([...ids].sort()).toEqual(
        Array.from({ length: count }, (_, index) => `u2~${index + 2}`).sort(),
      );
      for (const [index, engine] of engines.entries()) {
        const reader = new ContextEngine({ store: stores[1], chatId, userId: 'u', renderer });
        await reader.continueFrom(`a-${index + 2}`);
        expect(texts((await reader.resolve()).messages)).toEqual([
          'hello',
          'hi',
          `question ${index + 2}`,
          `answer ${index + 2}`,
        ]);
        expect(reader.nodeIdOf('u2')).toBe(engine.nodeIdOf('u2'));
      }
    },
    MANY_WRITES,
  );
});
