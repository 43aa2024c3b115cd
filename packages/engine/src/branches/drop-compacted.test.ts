import { assistant, user } from '@ctxgraph/codecs';
import {
  type ContextStore,
  EngineError,
  HeadConflictError,
  readDropped,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import type { UIMessage } from 'ai';
import { beforeEach, describe, expect, it } from 'vitest';
import { LineRenderer, overrideStore } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';

const renderer = new LineRenderer();
let store: InMemoryContextStore;
let counter = 0;

beforeEach(() => {
  store = new InMemoryContextStore();
});

function newEngine(target: ContextStore = store, chatId?: string): ContextEngine {
  counter += 1;
  return new ContextEngine({
    store: target,
    chatId: chatId ?? `chat-drop-${counter}`,
    userId: 'user-1',
    renderer,
  });
}

const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );

async function talk(engine: ContextEngine, from: number, turns: number): Promise<void> {
  for (let turn = from; turn < from + turns; turn += 1) {
    engine.set(
      user(`question ${turn} quokka`, { id: `u${turn}` }),
      assistant(`answer ${turn}`, { id: `a${turn}` }),
    );
  }
  await engine.save();
}

const summary = 'Summary of the conversation so far:\n\nS1';

describe("prune({ compacted: 'drop' })", () => {
  it('replaces the covered originals with tombstones; the dry run reports the same and changes nothing', async () => {
    const engine = newEngine();
    await talk(engine, 1, 4);
    const compaction = await engine.compact({ summarize: () => 'S1', keep: 1 });
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });

    const dry = await engine.prune({ compacted: 'drop', dryRun: true });
    expect(dry.compacted.messageIds).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
    expect(dry.compacted.bytes).toBeGreaterThan(0);
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
    const untouched = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(untouched?.message.parts).toEqual([{ type: 'text', text: 'question 1 quokka' }]);

    const done = await engine.prune({ compacted: 'drop' });
    expect(done.compacted).toEqual(dry.compacted);
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(node?.message.parts).toEqual([]);
    expect(node?.parentId).toBe(untouched?.parentId);
    expect(node?.sequence).toBe(untouched?.sequence);
    expect(readDropped(node?.message ?? { id: '', role: '', parts: [] })).toMatchObject({
      compactionId: compaction?.messageId,
    });
    // The head did not move; the conversation is the same, warm and cold.
    const after = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    expect(after.headMessageId).toBe(before.headMessageId);
    const shown = [summary, 'question 4 quokka', 'answer 4'];
    expect(texts((await engine.resolve()).messages)).toEqual(shown);
    expect(texts((await newEngine(store, engine.chatId).resolve()).messages)).toEqual(shown);
    // Search no longer finds the dropped text; the kept turn still is.
    const hits = await engine.search('quokka', { scope: 'chat' });
    expect(hits.items.map((hit) => hit.messageId)).toEqual(['u4']);
    // Dropping again finds nothing more.
    expect((await engine.prune({ compacted: 'drop' })).compacted.nodes).toBe(0);
  });

  it('a rewind before the compaction leaves the tombstones out', async () => {
    const engine = newEngine();
    await talk(engine, 1, 4);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    await engine.prune({ compacted: 'drop' });
    await engine.rewind('a4');
    expect(texts((await engine.resolve()).messages)).toEqual(['question 4 quokka', 'answer 4']);
  });

  it('keeps what a branch forked inside the span or a checkpoint inside it shows in full', async () => {
    const engine = newEngine();
    await talk(engine, 1, 2);
    await store.createCheckpoint({ chatId: engine.chatId, name: 'early', messageId: 'a1' });
    await talk(engine, 3, 2);
    const side = await store.createBranch({
      chatId: engine.chatId,
      name: 'side',
      headMessageId: 'a2',
    });
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const result = await engine.prune({ compacted: 'drop' });
    // u1 a1: the checkpoint; u2 a2: the side branch; u3 a3: only main, behind the summary.
    expect(side.name).toBe('side');
    expect(result.compacted.messageIds).toEqual(['u3', 'a3']);
    const reader = newEngine(store, engine.chatId);
    await reader.switchBranch('side');
    expect(texts((await reader.resolve()).messages)).toEqual([
      'question 1 quokka',
      'answer 1',
      'question 2 quokka',
      'answer 2',
    ]);
  });

  it("'keep' (the default) drops nothing", async () => {
    const engine = newEngine();
    await talk(engine, 1, 3);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    expect((await engine.prune()).compacted).toEqual({
      nodes: 0,
      bytes: 0,
      tombstoneBytes: 0,
      messageIds: [],
    });
    expect((await engine.prune({ compacted: 'keep' })).compacted.nodes).toBe(0);
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(node?.message.parts).toHaveLength(1);
  });

  it('refuses unknown option values and writes nothing', async () => {
    const engine = newEngine();
    await talk(engine, 1, 3);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    await expect(engine.prune({ compacted: 'all' as 'drop' })).rejects.toThrow(
      /compacted must be 'keep' or 'drop', received "all"/,
    );
    await expect(engine.prune({ dryRun: 'yes' as unknown as boolean })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
  });

  it('starts over when a writer moves the head, and never loses its turn', async () => {
    const engine = newEngine();
    await talk(engine, 1, 4);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const other = newEngine(store, engine.chatId);
    let raced = false;
    const racing = overrideStore(store, {
      commit: async (input) => {
        if (!raced && input.messages.some((entry) => readDropped(entry.message) !== null)) {
          raced = true;
          await talk(other, 5, 1);
        }
        return store.commit(input);
      },
    });
    const dropper = newEngine(racing, engine.chatId);
    const result = await dropper.prune({ compacted: 'drop' });
    expect(raced).toBe(true);
    expect(result.compacted.nodes).toBe(6);
    expect(texts((await dropper.resolve()).messages).slice(-2)).toEqual([
      'question 5 quokka',
      'answer 5',
    ]);
  });

  it('fails clearly when the head keeps moving', async () => {
    const engine = newEngine();
    await talk(engine, 1, 3);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const busy = overrideStore(store, {
      commit: async (input) => {
        if (input.messages.some((entry) => readDropped(entry.message) !== null))
          throw new HeadConflictError({
            chatId: input.chatId,
            branch: input.branch,
            expectedHeadId: input.expectedHeadId,
            currentHeadId: 'elsewhere',
          });
        return store.commit(input);
      },
    });
    const failure = newEngine(busy, engine.chatId).prune({ compacted: 'drop' });
    await expect(failure).rejects.toBeInstanceOf(EngineError);
    await expect(failure).rejects.toThrow(/moved during each of 5 attempts/);
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(node?.message.parts).toHaveLength(1);
  });
});

describe('dropping behind a compaction of a compaction', () => {
  it('drops the older summary too, and the newer one still reads', async () => {
    const engine = newEngine();
    await talk(engine, 1, 3);
    const first = await engine.compact({ summarize: () => 'S1', keep: 1 });
    await talk(engine, 4, 2);
    await engine.compact({ summarize: () => 'S2', keep: 1 });
    const result = await engine.prune({ compacted: 'drop' });
    expect(result.compacted.messageIds).toEqual([
      'u1',
      'a1',
      'u2',
      'a2',
      'u3',
      'a3',
      first?.messageId,
      'u4',
      'a4',
    ]);
    const shown = ['Summary of the conversation so far:\n\nS2', 'question 5 quokka', 'answer 5'];
    expect(texts((await engine.resolve()).messages)).toEqual(shown);
    expect(texts((await newEngine(store, engine.chatId).resolve()).messages)).toEqual(shown);
  });
});
