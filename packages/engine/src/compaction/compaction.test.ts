import { assistant, assistantText, message, user } from '@ctxgraph/codecs';
import {
  ConflictError,
  type ContextStore,
  compactionMessage,
  EngineError,
  HeadConflictError,
  lastAssistantMessage,
  type MessageNodeRecord,
  readBranchSummary,
  readCompaction,
  readDropped,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import type { UIMessage } from 'ai';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  countingStore,
  LineRenderer,
  overrideStore,
  scriptedModel,
} from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from '../usage/message-usage';
import { DEFAULT_COMPACTION_INSTRUCTION, summarizer } from './ai-summarizer';
import type { Summarizer } from './summarizer';

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
    chatId: chatId ?? `chat-compaction-${counter}`,
    userId: 'user-1',
    renderer,
  });
}

const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );

/** Saves `turns` user/assistant pairs with ids `${prefix}u1`, `${prefix}a1`, … */
async function chat(engine: ContextEngine, turns: number, prefix = '', from = 1): Promise<void> {
  for (let turn = from; turn < from + turns; turn += 1) {
    engine.set(
      user(`question ${prefix}${turn}`, { id: `${prefix}u${turn}` }),
      assistant(`answer ${prefix}${turn}`, { id: `${prefix}a${turn}` }),
    );
  }
  await engine.save();
}

/** A summarizer that records what it was given and answers with a fixed text. */
function recordingSummarizer(text: string): Summarizer & { calls: string[][] } {
  const calls: string[][] = [];
  const summarize = (messages: readonly UIMessage[]) => {
    calls.push(texts(messages));
    return text;
  };
  return Object.assign(summarize, { calls });
}

describe('compact()', () => {
  it('sends the summary in place of the span, then the kept turns; the originals stay', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    const summarize = recordingSummarizer('S1');
    const result = await engine.compact({ summarize, keep: 1 });
    expect(summarize.calls).toEqual([
      ['question 1', 'answer 1', 'question 2', 'answer 2', 'question 3', 'answer 3'],
    ]);
    expect(result?.compaction).toMatchObject({
      boundaryId: 'a3',
      previousCompactionId: null,
      coveredMessages: 6,
    });
    expect(result?.keptMessages).toBe(2);
    expect(result?.attachedTo).toBe('a4');
    expect(engine.headMessageId).toBe(result?.messageId);

    const { messages } = await engine.resolve();
    expect(texts(messages)).toEqual([
      'Summary of the conversation so far:\n\nS1',
      'question 4',
      'answer 4',
    ]);
    // The same from a cold engine, and the messages after the node follow the kept ones.
    const cold = newEngine(store, engine.chatId);
    await chat(cold, 1, '', 5);
    expect(texts((await cold.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS1',
      'question 4',
      'answer 4',
      'question 5',
      'answer 5',
    ]);
    expect(texts((await engine.resolve()).messages).slice(-2)).toEqual(['question 5', 'answer 5']);
    // Originals are never deleted.
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(node?.message.parts).toEqual([{ type: 'text', text: 'question 1' }]);
  });

  it('records the tokens it saved, and inspect() lists each compaction node', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const result = await engine.compact({ summarize: () => 'short', keep: 1 });
    const tokens = result?.compaction.tokens;
    expect(tokens?.tokenizer).toMatch(/^estimate:/);
    expect(tokens?.covered).toBeGreaterThan(0);
    expect(tokens?.saved).toBe((tokens?.covered ?? 0) - (tokens?.summary ?? 0));
    const snapshot = await engine.inspect();
    expect(snapshot.compactions).toEqual([
      {
        id: result?.messageId,
        boundaryId: 'a2',
        previousCompactionId: null,
        coveredMessages: 4,
        tokens,
        createdAt: result?.compaction.createdAt,
        applied: true,
      },
    ]);
    expect(texts(snapshot.fragments.persisted)).toEqual([
      'Summary of the conversation so far:\n\nshort',
      'question 3',
      'answer 3',
    ]);
  });

  it('leaves a sibling branch as it was; a branch forked through the node sees the summary', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const sibling = await engine.btw(); // a branch at a3, made before the compaction
    const before = texts((await engine.resolve()).messages);
    const result = await engine.compact({ summarize: () => 'S', keep: 1 });
    await engine.switchBranch(sibling.name);
    expect(texts((await engine.resolve()).messages)).toEqual(before);
    await engine.switchBranch('main');
    await engine.rewind(result?.messageId as string);
    expect(texts((await engine.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS',
      'question 3',
      'answer 3',
    ]);
  });

  it('is undone by rewinding to the node before it: the full history again', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const full = texts((await engine.resolve()).messages);
    await engine.compact({ summarize: () => 'S', keep: 1 });
    await engine.rewind('a3');
    expect(texts((await engine.resolve()).messages)).toEqual(full);
    // A cold engine (whose cache starts at the boundary) too.
    const cold = newEngine(store, engine.chatId);
    expect(texts((await cold.resolve()).messages)).toEqual(full);
    await cold.switchBranch('main');
    expect((await cold.resolve()).messages).toHaveLength(3);
    await cold.rewind('a3');
    expect(texts((await cold.resolve()).messages)).toEqual(full);
  });

  it('compacts a compaction: the new span starts with the previous summary', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const first = await engine.compact({ summarize: () => 'S1', keep: 1 });
    await chat(engine, 2, '', 4);
    const summarize = recordingSummarizer('S2');
    const second = await engine.compact({ summarize, keep: 1 });
    expect(summarize.calls[0]).toEqual([
      'Summary of the conversation so far:\n\nS1',
      'question 3',
      'answer 3',
      'question 4',
      'answer 4',
    ]);
    expect(second?.compaction).toMatchObject({
      boundaryId: 'a4',
      previousCompactionId: first?.messageId,
      coveredMessages: 5,
    });
    const expected = ['Summary of the conversation so far:\n\nS2', 'question 5', 'answer 5'];
    expect(texts((await engine.resolve()).messages)).toEqual(expected);
    expect(texts((await newEngine(store, engine.chatId).resolve()).messages)).toEqual(expected);
    // Rewinding before the second node shows the first compaction's view.
    await engine.rewind('a5');
    expect(texts((await engine.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS1',
      'question 3',
      'answer 3',
      'question 4',
      'answer 4',
      'question 5',
      'answer 5',
    ]);
  });

  it('a new boundary inside the previous compaction’s kept messages hides the older node', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    await engine.compact({ summarize: () => 'S1', keep: 3 });
    await engine.compact({ summarize: () => 'S2', keep: 1 });
    const expected = ['Summary of the conversation so far:\n\nS2', 'question 4', 'answer 4'];
    expect(texts((await engine.resolve()).messages)).toEqual(expected);
    expect(texts((await newEngine(store, engine.chatId).resolve()).messages)).toEqual(expected);
  });

  it('writes nothing when the summarizer throws or returns an empty summary', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    const failing: Summarizer = () => {
      throw new Error('model unavailable');
    };
    await expect(engine.compact({ summarize: failing })).rejects.toThrow(
      /the summarizer failed \(model unavailable\)\. Nothing was written/,
    );
    await expect(engine.compact({ summarize: async () => '  ' })).rejects.toThrow(
      /empty summary\. Nothing was written/,
    );
    await expect(
      engine.compact({ summarize: (() => 42) as unknown as Summarizer }),
    ).rejects.toBeInstanceOf(EngineError);
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
    expect((await engine.resolve()).messages).toHaveLength(6);
  });

  it('refuses an id that already names a message of the chat, before the summary and writing nothing', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    const summarize = recordingSummarizer('S1');
    const graph = await store.getGraph(engine.chatId);
    // A saved user turn: replacing it in place would lose the turn.
    await expect(engine.compact({ summarize, keep: 1, id: 'u2' })).rejects.toSatisfy(
      (error) =>
        ConflictError.isInstance(error) &&
        /id "u2" already names a message of chat .* Nothing was written/.test(error.message),
    );
    expect(summarize.calls).toEqual([]);
    expect(await store.getGraph(engine.chatId)).toEqual(graph);

    // A retried job with a fixed id: the first run wrote the node, the retry rewrites nothing.
    const first = await engine.compact({ summarize, keep: 1, id: 'job-7' });
    expect(first?.messageId).toBe('job-7');
    await chat(engine, 2, 'later-');
    const written = await store.getGraph(engine.chatId);
    await expect(engine.compact({ summarize, keep: 1, id: 'job-7' })).rejects.toSatisfy((error) =>
      ConflictError.isInstance(error),
    );
    expect(summarize.calls).toHaveLength(1);
    expect(await store.getGraph(engine.chatId)).toEqual(written);
    const fresh = newEngine(store, engine.chatId);
    const shown = (await fresh.resolve()).messages.map((entry) => entry.id);
    expect(shown).toEqual(['job-7', 'u4', 'a4', 'later-u1', 'later-a1', 'later-u2', 'later-a2']);
    expect((await engine.resolve()).messages.map((entry) => entry.id)).toEqual(shown);
  });

  it.each([
    ['a NUL', 'summary\u0000with a NUL', /NUL/],
    ['half an emoji', 'summary with half an emoji \ud83d', /lone UTF-16 surrogate/],
  ])('refuses a summary with %s as an EngineError, writing nothing', async (_, text, problem) => {
    const engine = newEngine();
    await chat(engine, 3);
    const graph = await store.getGraph(engine.chatId);
    const failure = await engine.compact({ summarize: () => text, keep: 1 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(EngineError.isInstance(failure)).toBe(true);
    expect((failure as EngineError).message).toMatch(problem);
    expect((failure as EngineError).message).toMatch(/Nothing was written/);
    expect(ValidationError.isInstance((failure as EngineError).cause)).toBe(true);
    expect(await store.getGraph(engine.chatId)).toEqual(graph);
    expect((await engine.resolve()).messages).toHaveLength(6);
  });

  it('a node the store refuses for its own reasons is an EngineError, writing nothing', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const graph = await store.getGraph(engine.chatId);
    const refusing = overrideStore(store, {
      commit: async () => {
        throw new ValidationError(
          'commit(input): messages[0].message: over this store’s size limit.',
        );
      },
    });
    const limited = newEngine(refusing, engine.chatId);
    const failure = await limited.compact({ summarize: () => 'S', keep: 1 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(EngineError.isInstance(failure)).toBe(true);
    expect((failure as EngineError).message).toMatch(
      /the store refused the summary node .*size limit/,
    );
    expect(ValidationError.isInstance((failure as EngineError).cause)).toBe(true);
    expect(await store.getGraph(engine.chatId)).toEqual(graph);
  });

  it('refuses bad options before anything is read or written', async () => {
    const engine = newEngine();
    await chat(engine, 2);
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    const summarize = () => 'S';
    for (const options of [
      undefined,
      {},
      { summarize: 'no' },
      { summarize, keep: -1 },
      { summarize, keep: 1.5 },
      { summarize, keep: { turns: 'two' } },
      { summarize, keep: { fromMessageId: '' } },
      { summarize, id: '' },
    ]) {
      await expect(
        engine.compact(options as unknown as Parameters<ContextEngine['compact']>[0]),
      ).rejects.toBeInstanceOf(ValidationError);
    }
    await expect(engine.compact({ summarize, keep: { fromMessageId: 'nowhere' } })).rejects.toThrow(
      /keep.fromMessageId "nowhere" is not a message the branch shows/,
    );
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
  });

  it('resolves to null when there is nothing to compact', async () => {
    const engine = newEngine();
    expect(await engine.compact({ summarize: () => 'S' })).toBeNull();
    await chat(engine, 2);
    expect(await engine.compact({ summarize: () => 'S', keep: 2 })).toBeNull();
    expect(
      await engine.compact({ summarize: () => 'S', keep: { fromMessageId: 'u1' } }),
    ).toBeNull();
    await engine.compact({ summarize: () => 'S', keep: 1 });
    // Only the summary would be covered again.
    expect(await engine.compact({ summarize: () => 'S', keep: 1 })).toBeNull();
  });

  it('keeps from a message id, and keep: 0 covers everything', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    await engine.compact({ summarize: () => 'S', keep: { fromMessageId: 'a2' } });
    expect(texts((await engine.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS',
      'answer 2',
      'question 3',
      'answer 3',
    ]);
    const other = newEngine();
    await chat(other, 2);
    await other.compact({ summarize: () => 'all', keep: 0 });
    expect(texts((await other.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nall',
    ]);
  });

  it('never separates a tool call from its result', async () => {
    const engine = newEngine();
    const call = (id: string, state: 'input-available' | 'output-available'): UIMessage => ({
      id,
      role: 'assistant',
      parts: [
        state === 'output-available'
          ? {
              type: 'tool-weather',
              toolCallId: 'call-1',
              state,
              input: { city: 'Oslo' },
              output: { celsius: 3 },
            }
          : { type: 'tool-weather', toolCallId: 'call-1', state, input: { city: 'Oslo' } },
      ],
    });
    engine.set(
      user('hello', { id: 'u1' }),
      assistant('hi', { id: 'a1' }),
      user('weather?', { id: 'u2' }),
      message(call('t-call', 'input-available')),
      message(call('t-result', 'output-available')),
      assistant('3 degrees', { id: 'a2' }),
    );
    await engine.save();
    // Keeping from the result would cut its call off: the boundary moves before the call.
    const result = await engine.compact({
      summarize: () => 'S',
      keep: { fromMessageId: 't-result' },
    });
    expect(result?.compaction.boundaryId).toBe('u2');
    expect(texts((await engine.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS',
      'tool-weather',
      'tool-weather',
      '3 degrees',
    ]);
  });

  it('a call still waiting for its result stays with what follows', async () => {
    const engine = newEngine();
    engine.set(
      user('hello', { id: 'u1' }),
      message({
        id: 'pending-call',
        role: 'assistant',
        parts: [
          { type: 'tool-search', toolCallId: 'c9', state: 'input-available', input: { q: 'x' } },
        ],
      }),
      user('still there?', { id: 'u2' }),
      assistant('yes', { id: 'a2' }),
    );
    await engine.save();
    const result = await engine.compact({ summarize: () => 'S', keep: 1 });
    expect(result?.compaction.boundaryId).toBe('u1');
  });

  it('a turn another writer saves during the summary is kept: the node lands on top', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const other = newEngine(store, engine.chatId);
    const summarize: Summarizer = async () => {
      await chat(other, 1, '', 4);
      return 'S';
    };
    const result = await engine.compact({ summarize, keep: 1 });
    expect(result?.attachedTo).toBe('a4');
    expect(result?.compaction.boundaryId).toBe('a2');
    const expected = [
      'Summary of the conversation so far:\n\nS',
      'question 3',
      'answer 3',
      'question 4',
      'answer 4',
    ];
    expect(texts((await engine.resolve()).messages)).toEqual(expected);
    expect(texts((await other.resolve()).messages)).toEqual(expected);
  });

  it('fails clearly, writing nothing, when a message is replaced in place during the summary', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const other = newEngine(store, engine.chatId);
    await other.resolve();
    const summarize: Summarizer = async () => {
      other.set(lastAssistantMessage('answer 3, corrected'));
      await other.save();
      return 'S';
    };
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    await expect(engine.compact({ summarize, keep: 1 })).rejects.toThrow(
      /was replaced in place while the summary was being made.*Nothing was written/,
    );
    const after = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    expect(after.headMessageId).toBe(before.headMessageId);
    expect(after.revision).toBe(before.revision + 1); // only the correction
  });

  it('gives up clearly when other writers keep moving the head', async () => {
    const engine = new ContextEngine({
      store: overrideStore(store, {
        commit: async (input) => {
          const head = await store.getHead({ chatId: input.chatId, branch: input.branch });
          throw new HeadConflictError({
            chatId: input.chatId,
            branch: input.branch,
            expectedHeadId: input.expectedHeadId,
            currentHeadId: head.headMessageId,
          });
        },
      }),
      chatId: 'chat-busy',
      userId: 'user-1',
      renderer,
      maxSaveAttempts: 3,
    });
    await chat(engine, 3);
    await expect(engine.compact({ summarize: () => 'S', keep: 1 })).rejects.toThrow(
      /gave up after 3 attempts.*Nothing was written/,
    );
  });

  it('a cold resolve reads from the head back to the boundary only', async () => {
    const engine = newEngine();
    await chat(engine, 200);
    await engine.compact({ summarize: () => 'S', keep: 2 });
    await chat(engine, 1, '', 201);
    const counting = countingStore(store);
    let nodesRead = 0;
    const measured = overrideStore(counting.store, {
      getChain: async (input) => {
        const page = await counting.store.getChain(input);
        nodesRead += page.nodes.length;
        return page;
      },
    });
    const cold = newEngine(measured, engine.chatId);
    const { messages } = await cold.resolve();
    expect(messages).toHaveLength(1 + 4 + 2);
    // One first page of the newest 64 nodes holds the compaction node and its boundary.
    expect(nodesRead).toBe(64);
    expect(counting.calls.get('getChain')).toBe(1);
  });

  it('when the boundary lies past the first page, one read with until takes exactly the rest', async () => {
    const engine = newEngine();
    await chat(engine, 200);
    await engine.compact({ summarize: () => 'S', keep: 50 });
    let nodesRead = 0;
    let calls = 0;
    const measured = overrideStore(store, {
      getChain: async (input) => {
        const page = await store.getChain(input);
        nodesRead += page.nodes.length;
        calls += 1;
        return page;
      },
    });
    const { messages } = await newEngine(measured, engine.chatId).resolve();
    expect(messages).toHaveLength(1 + 100);
    expect(nodesRead).toBe(100 + 1);
    expect(calls).toBe(2);
  });

  it('a compaction older than the first page is still found, and only its span is skipped', async () => {
    const engine = newEngine();
    await chat(engine, 10);
    await engine.compact({ summarize: () => 'S', keep: 1 });
    await chat(engine, 200, '', 11);
    const cold = newEngine(store, engine.chatId);
    const { messages } = await cold.resolve();
    expect(messages).toHaveLength(1 + 2 + 400);
    expect(texts(messages)[0]).toBe('Summary of the conversation so far:\n\nS');
  });

  it('a warm engine sees another engine’s compaction with an incremental read', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    await engine.resolve();
    const other = newEngine(store, engine.chatId);
    await other.compact({ summarize: () => 'S', keep: 1 });
    expect(texts((await engine.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS',
      'question 3',
      'answer 3',
    ]);
  });

  it('pending messages stay pending and are saved after the node', async () => {
    const engine = newEngine();
    await chat(engine, 2);
    engine.set(user('later', { id: 'u3' }));
    const result = await engine.compact({ summarize: () => 'S', keep: 1 });
    expect(texts((await engine.resolve()).messages)).toEqual([
      'Summary of the conversation so far:\n\nS',
      'question 2',
      'answer 2',
      'later',
    ]);
    await engine.save();
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u3' });
    expect(node?.parentId).toBe(result?.messageId);
  });

  it('a lazy correction never targets a message hidden behind the summary, warm or cold', async () => {
    const engine = newEngine();
    await chat(engine, 2);
    await engine.compact({ summarize: () => 'S', keep: 0 });
    const cold = newEngine(store, engine.chatId);
    for (const current of [engine, cold]) {
      current.set(lastAssistantMessage('fresh reply'));
      const { messages } = await current.resolve();
      expect(texts(messages)).toEqual(['Summary of the conversation so far:\n\nS', 'fresh reply']);
      expect(messages[1]?.id).not.toBe('a2');
      await current.discardPending();
    }
  });

  it('a strict metadataSchema accepts the compaction node: its record is never in metadata', async () => {
    const { z } = await import('zod');
    const engine = new ContextEngine({
      store,
      chatId: 'chat-strict-metadata',
      userId: 'user-1',
      renderer,
      messageSchemas: { metadataSchema: z.strictObject({ app: z.string().optional() }).optional() },
    });
    await chat(engine, 2);
    const result = await engine.compact({ summarize: () => 'S', keep: 1 });
    expect(result?.compaction.boundaryId).toBe('a1');
  });

  it('refuses, writing nothing, a node the engine’s metadataSchema would not accept', async () => {
    const { z } = await import('zod');
    const engine = new ContextEngine({
      store,
      chatId: 'chat-required-metadata',
      userId: 'user-1',
      renderer,
      messageSchemas: { metadataSchema: z.object({ app: z.string() }) },
    });
    engine.set(
      user('question', { id: 'u1', metadata: { app: 'x' } }),
      assistantText('answer', { id: 'a1', metadata: { app: 'x' } }),
      user('again', { id: 'u2', metadata: { app: 'x' } }),
      assistantText('more', { id: 'a2', metadata: { app: 'x' } }),
    );
    await engine.save();
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    await expect(engine.compact({ summarize: () => 'S', keep: 1 })).rejects.toThrow(
      /the summary node does not validate against the engine's message schemas .*Nothing was written/,
    );
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
  });

  it("stores the record beside the message, in the node's engine record", async () => {
    const engine = newEngine();
    await chat(engine, 2);
    const result = await engine.compact({ summarize: () => 'S', keep: 1, id: 'c-1' });
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'c-1' });
    expect(node?.parentId).toBe('a2');
    expect(node && readCompaction(node)).toEqual(result?.compaction);
    expect(node?.engineRecord).toEqual({ compaction: result?.compaction });
    expect(node?.message.metadata).toBeUndefined();
  });
});

describe('switchBranch(name, { carry })', () => {
  it('appends a summary of the branch left on the destination, then switches', async () => {
    const engine = newEngine();
    await chat(engine, 1);
    const side = await engine.rewind('a1');
    await chat(engine, 1, 'side-');
    const summarize = recordingSummarizer('found it');
    await engine.switchBranch('main', { carry: { summarize } });
    expect(engine.branch).toBe('main');
    expect(summarize.calls).toEqual([
      ['question 1', 'answer 1', 'question side-1', 'answer side-1'],
    ]);
    const { messages } = await engine.resolve();
    expect(texts(messages)).toEqual([
      'question 1',
      'answer 1',
      `Summary of branch "${side.name}":\n\nfound it`,
    ]);
    const node = await store.getMessage({
      chatId: engine.chatId,
      messageId: engine.headMessageId as string,
    });
    expect(node && readBranchSummary(node)).toMatchObject({
      fromBranch: side.name,
      fromHeadId: 'side-a1',
      coveredMessages: 4,
    });
  });

  it('writes nothing and does not switch when the summary fails', async () => {
    const engine = newEngine();
    await chat(engine, 1);
    const side = await engine.rewind('a1');
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    await expect(
      engine.switchBranch('main', {
        carry: {
          summarize: () => {
            throw new Error('no');
          },
        },
      }),
    ).rejects.toThrow(/Nothing was written/);
    expect(engine.branch).toBe(side.name);
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
    await expect(engine.switchBranch('main', { carry: {} as never })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});

describe('summarizer({ model })', () => {
  it('asks the model with the default instruction and the span as a transcript', async () => {
    const model = scriptedModel('The user asked about the weather in Oslo.');
    const engine = newEngine();
    engine.set(user('Weather in Oslo?', { id: 'u1' }), assistant('3 degrees.', { id: 'a1' }));
    engine.set(user('Thanks', { id: 'u2' }), assistant('Welcome.', { id: 'a2' }));
    await engine.save();
    await engine.compact({ summarize: summarizer({ model }), keep: 1 });
    expect(texts((await engine.resolve()).messages)[0]).toBe(
      'Summary of the conversation so far:\n\nThe user asked about the weather in Oslo.',
    );
    const prompt = model.doGenerateCalls[0]?.prompt;
    expect(prompt?.[0]).toEqual({ role: 'system', content: DEFAULT_COMPACTION_INSTRUCTION });
    expect(JSON.stringify(prompt?.[1])).toContain(
      '[user]\\nWeather in Oslo?\\n\\n[assistant]\\n3 degrees.',
    );
  });

  it('an empty model reply writes nothing', async () => {
    const engine = newEngine();
    await chat(engine, 2);
    await expect(
      engine.compact({ summarize: summarizer({ model: scriptedModel('') }), keep: 1 }),
    ).rejects.toThrow(/empty summary/);
  });

  it('refuses bad options', () => {
    expect(() => summarizer({} as never)).toThrow(ValidationError);
    expect(() => summarizer({ model: scriptedModel('x'), instruction: '' })).toThrow(
      /instruction must be a non-empty string/,
    );
    expect(() => summarizer({ model: scriptedModel('x'), maxOutputTokens: 0 })).toThrow(
      ValidationError,
    );
  });
});

describe("prune({ compacted: 'drop' })", () => {
  it('replaces the covered originals with tombstones; the dry run reports the same and changes nothing', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    const compaction = await engine.compact({ summarize: () => 'S1', keep: 1 });
    const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });

    const dry = await engine.prune({ compacted: 'drop', dryRun: true });
    expect(dry.compacted.messageIds).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
    expect(dry.compacted.bytes).toBeGreaterThan(0);
    expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
    const untouched = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(untouched?.message.parts).toEqual([{ type: 'text', text: 'question 1' }]);

    const done = await engine.prune({ compacted: 'drop' });
    expect(done.compacted).toEqual(dry.compacted);
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(node?.message.parts).toEqual([]);
    expect(node?.parentId).toBe(untouched?.parentId);
    expect(node?.sequence).toBe(untouched?.sequence);
    expect(readDropped(node ?? { id: '', message: { id: '', role: '', parts: [] } })).toMatchObject(
      {
        compactionId: compaction?.messageId,
      },
    );
    // The head did not move; the conversation is the same, warm and cold.
    const after = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    expect(after.headMessageId).toBe(before.headMessageId);
    const shown = ['Summary of the conversation so far:\n\nS1', 'question 4', 'answer 4'];
    expect(texts((await engine.resolve()).messages)).toEqual(shown);
    expect(texts((await newEngine(store, engine.chatId).resolve()).messages)).toEqual(shown);
    // Search no longer finds the dropped text; the kept turn still is.
    const hits = await engine.search('question', { scope: 'chat' });
    expect(hits.items.map((hit) => hit.messageId)).toEqual(['u4']);
    // Dropping again finds nothing more.
    expect((await engine.prune({ compacted: 'drop' })).compacted.nodes).toBe(0);
  });

  it('a rewind before the compaction leaves the tombstones out', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    await engine.prune({ compacted: 'drop' });
    await engine.rewind('a4');
    expect(texts((await engine.resolve()).messages)).toEqual(['question 4', 'answer 4']);
  });

  it('keeps what a branch forked inside the span or a checkpoint inside it shows in full', async () => {
    const engine = newEngine();
    await chat(engine, 2);
    await store.createCheckpoint({ chatId: engine.chatId, name: 'early', messageId: 'a1' });
    await chat(engine, 2, '', 3);
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
      'question 1',
      'answer 1',
      'question 2',
      'answer 2',
    ]);
  });

  it('keeps the recorded usage on the tombstones, so usage totals do not change', async () => {
    const engine = newEngine();
    engine.set(
      user('question 1', { id: 'u1' }),
      withUsage(assistant('answer 1', { id: 'a1' }), {
        usage: { inputTokens: 1200, outputTokens: 300 },
        modelId: 'gpt-4o',
      }),
    );
    await engine.save();
    await chat(engine, 2, '', 2);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const before = await engine.usage();
    expect(before.calls).toBe(1);
    expect((await engine.prune({ compacted: 'drop' })).compacted.messageIds).toContain('a1');
    expect(await engine.usage()).toEqual(before);
  });

  it("'keep' (the default) drops nothing", async () => {
    const engine = newEngine();
    await chat(engine, 3);
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
    await chat(engine, 3);
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
    await chat(engine, 4);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const other = newEngine(store, engine.chatId);
    let raced = false;
    const racing = overrideStore(store, {
      commit: async (input) => {
        if (!raced && input.messages.some((entry) => readDropped(entry) !== null)) {
          raced = true;
          await chat(other, 1, '', 5);
        }
        return store.commit(input);
      },
    });
    const dropper = newEngine(racing, engine.chatId);
    const result = await dropper.prune({ compacted: 'drop' });
    expect(raced).toBe(true);
    expect(result.compacted.nodes).toBe(6);
    expect(texts((await dropper.resolve()).messages).slice(-2)).toEqual(['question 5', 'answer 5']);
  });

  it('starts over when a branch is forked inside the span meanwhile, and keeps what it shows', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    let forked = false;
    const racing = overrideStore(store, {
      commit: async (input) => {
        if (!forked && input.messages.some((entry) => readDropped(entry) !== null))
          throw new Error('the fork should have been seen before the commit');
        return store.commit(input);
      },
      getGraph: async (chatId) => {
        const graph = await store.getGraph(chatId);
        // The pass's own read: fork at a2 right after it.
        if (!forked) {
          forked = true;
          await store.createBranch({ chatId, name: 'late', headMessageId: 'a2' });
        }
        return graph;
      },
    });
    const result = await newEngine(racing, engine.chatId).prune({ compacted: 'drop' });
    expect(forked).toBe(true);
    expect(result.compacted.messageIds).toEqual(['u3', 'a3']);
  });

  it('fails clearly when the head keeps moving', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    const busy = overrideStore(store, {
      commit: async (input) => {
        if (input.messages.some((entry) => readDropped(entry) !== null))
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
    await expect(failure).rejects.toThrow(/changed during each of 5 attempts/);
    const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u1' });
    expect(node?.message.parts).toHaveLength(1);
  });
});

/** A store that counts the message nodes its reads return (getChain, getGraph, getMessage). */
function nodeCountingStore(target: ContextStore): { store: ContextStore; nodesRead: () => number } {
  let nodes = 0;
  const store = overrideStore(target, {
    getChain: async (input) => {
      const page = await target.getChain(input);
      nodes += page.nodes.length;
      return page;
    },
    getGraph: async (chatId) => {
      const graph = await target.getGraph(chatId);
      nodes += graph.nodes.length;
      return graph;
    },
    getMessage: async (input) => {
      const node = await target.getMessage(input);
      if (node !== null) nodes += 1;
      return node;
    },
  });
  return { store, nodesRead: () => nodes };
}

describe("prune({ compacted: 'drop' }) on a chat with a branch per turn", () => {
  /** `turns` turns on main with a branch forked at each answer, then two more and a compaction. */
  async function branchyChat(turns: number): Promise<ContextEngine> {
    const engine = newEngine();
    for (let turn = 1; turn <= turns; turn += 1) {
      await chat(engine, 1, '', turn);
      await store.createBranch({
        chatId: engine.chatId,
        name: `fork-${turn}`,
        headMessageId: `a${turn}`,
      });
    }
    await chat(engine, 2, '', turns + 1);
    await engine.compact({ summarize: () => 'S', keep: 1 });
    return engine;
  }

  async function dropCounting(turns: number): Promise<{ nodes: number; dropped: string[] }> {
    const engine = await branchyChat(turns);
    const counting = nodeCountingStore(store);
    const result = await newEngine(counting.store, engine.chatId).prune({ compacted: 'drop' });
    return { nodes: counting.nodesRead(), dropped: result.compacted.messageIds };
  }

  it('reads nodes in proportion to the chat, not to branches times chain length', async () => {
    const short = await dropCounting(10);
    const long = await dropCounting(40);
    // Every fork shows its chain in full; only the turn after the last fork is behind the summary.
    expect(short.dropped).toEqual(['u11', 'a11']);
    expect(long.dropped).toEqual(['u41', 'a41']);
    // 4x the turns (and 4x the branches): about 4x the nodes read, not 16x.
    expect(long.nodes).toBeLessThanOrEqual(short.nodes * 4.5);
    // And a small multiple of the chat's size (2 per turn, plus the summary).
    expect(long.nodes).toBeLessThanOrEqual(3 * (2 * 42 + 1));
  });

  /**
   * What to drop, worked out the plain way: every branch's and checkpoint's whole chain, each
   * node covered when every chain holding it shows it at or before the boundary of the newest
   * compaction whose boundary is an earlier node of that chain; each on the first branch.
   */
  async function referenceDrop(target: ContextStore, chatId: string): Promise<string[]> {
    const chainOf = async (head: string) => {
      const pages: MessageNodeRecord[][] = [];
      for (let cursor: string | null = head; cursor !== null; ) {
        const page = await target.getChain({ chatId, headMessageId: cursor, limit: 7 });
        pages.unshift([...page.nodes]);
        cursor = page.nextCursor;
      }
      return pages.flat();
    };
    const cover = new Map<string, boolean>();
    const judge = (chain: readonly MessageNodeRecord[]) => {
      let boundary = -1;
      for (let at = chain.length - 1; at >= 0 && boundary === -1; at -= 1) {
        const record = readCompaction(chain[at] as MessageNodeRecord);
        const found = chain.findIndex((node) => node.id === record?.boundaryId);
        if (record !== null && found !== -1 && found < at) boundary = found;
      }
      chain.forEach((node, at) => {
        if (at > boundary) cover.set(node.id, false);
        else if (!cover.has(node.id)) cover.set(node.id, true);
      });
    };
    const chains: MessageNodeRecord[][] = [];
    for (const branch of await target.listBranches(chatId)) {
      if (branch.headMessageId === null) continue;
      const chain = await chainOf(branch.headMessageId);
      chains.push(chain);
      judge(chain);
    }
    for (const checkpoint of await target.listCheckpoints(chatId))
      judge(await chainOf(checkpoint.messageId));
    const assigned = new Set<string>();
    const ids: string[] = [];
    for (const chain of chains)
      for (const node of chain) {
        if (cover.get(node.id) !== true || assigned.has(node.id)) continue;
        if (readDropped(node) !== null) continue;
        assigned.add(node.id);
        ids.push(node.id);
      }
    return ids;
  }

  /** A small deterministic random source (mulberry32). */
  function randomSource(seed: number): (below: number) => number {
    let state = seed;
    return (below) => {
      state = (state + 0x6d2b79f5) | 0;
      let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
      mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
      return Math.floor((((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296) * below);
    };
  }

  it('reads the chain through a compaction only when its boundary is an ancestor of it', async () => {
    const engine = newEngine();
    await chat(engine, 2);
    await store.createBranch({ chatId: engine.chatId, name: 'side', headMessageId: 'a1' });
    const side = newEngine(store, engine.chatId);
    await side.switchBranch('side');
    await chat(side, 1, 'side-');
    // A compaction on main whose boundary is a node of the side branch: not on main's chain.
    const head = await store.getHead({ chatId: engine.chatId, branch: 'main' });
    await store.commit({
      chatId: engine.chatId,
      branch: 'main',
      expectedHeadId: head.headMessageId,
      messages: [
        compactionMessage({
          id: 'stray',
          text: 'S',
          compaction: {
            version: 1,
            boundaryId: 'side-a1',
            previousCompactionId: null,
            coveredMessages: 1,
            tokens: { tokenizer: 'estimate', covered: 1, summary: 1, saved: 0 },
            createdAt: 0,
          },
        }),
      ],
    });
    expect(await referenceDrop(store, engine.chatId)).toEqual([]);
    const result = await newEngine(store, engine.chatId).prune({ compacted: 'drop' });
    expect(result.compacted.messageIds).toEqual([]);
  });

  it('starts over when the graph it read is not whole (a store reading it in several moments)', async () => {
    const engine = newEngine();
    await chat(engine, 4);
    await engine.compact({ summarize: () => 'S1', keep: 1 });
    let reads = 0;
    const torn = overrideStore(store, {
      getGraph: async (chatId) => {
        const graph = await store.getGraph(chatId);
        reads += 1;
        // The first read misses the newest nodes, which the branch head already points at.
        return reads === 1 ? { ...graph, nodes: graph.nodes.slice(0, -2) } : graph;
      },
    });
    const result = await newEngine(torn, engine.chatId).prune({ compacted: 'drop' });
    expect(reads).toBe(2);
    expect(result.compacted.messageIds).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
  });

  it('drops what the plain per-chain reading drops, and no branch shows anything different', async () => {
    let dropped = 0;
    for (let seed = 1; seed <= 12; seed += 1) {
      const random = randomSource(seed);
      const engine = newEngine();
      const ids: string[] = [];
      const dropAndCheck = async (): Promise<void> => {
        const branches = await store.listBranches(engine.chatId);
        const shows = async () => {
          const shown: string[][] = [];
          for (const branch of branches) {
            const reader = newEngine(store, engine.chatId);
            await reader.switchBranch(branch.name);
            shown.push(texts((await reader.resolve()).messages));
          }
          return shown;
        };
        const before = await shows();
        const expected = await referenceDrop(store, engine.chatId);
        const dry = await newEngine(store, engine.chatId).prune({
          compacted: 'drop',
          dryRun: true,
        });
        expect(dry.compacted.messageIds).toEqual(expected);
        const done = await newEngine(store, engine.chatId).prune({ compacted: 'drop' });
        expect(done.compacted.messageIds).toEqual(expected);
        expect(await shows()).toEqual(before);
        expect(await referenceDrop(store, engine.chatId)).toEqual([]);
        dropped += expected.length;
      };
      for (let step = 0; step < 40; step += 1) {
        const action = random(10);
        if (action < 5 || ids.length === 0) {
          const id = `s${seed}-${step}`;
          await chat(engine, 1, `${id}-`);
          ids.push(`${id}-u1`, `${id}-a1`);
        } else if (action < 7) {
          await engine.rewind(ids[random(ids.length)] as string).catch(() => undefined);
        } else if (action < 9) {
          const compaction = await engine
            .compact({ summarize: () => `S${step}`, keep: 1 + random(2) })
            .catch(() => null);
          if (compaction) ids.push(compaction.messageId);
        } else {
          await store.createCheckpoint({
            chatId: engine.chatId,
            name: `c${step}`,
            messageId: ids[random(ids.length)] as string,
          });
        }
        // A drop now and then, so later passes meet tombstones.
        if (step % 13 === 7) await dropAndCheck();
      }
      await dropAndCheck();
    }
    // The scenarios do drop (so the comparison compares something).
    expect(dropped).toBeGreaterThan(50);
  });
});

describe('dropping behind a compaction of a compaction', () => {
  it('drops the older summary too, and the newer one still reads', async () => {
    const engine = newEngine();
    await chat(engine, 3);
    const first = await engine.compact({ summarize: () => 'S1', keep: 1 });
    await chat(engine, 2, '', 4);
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
    const shown = ['Summary of the conversation so far:\n\nS2', 'question 5', 'answer 5'];
    expect(texts((await engine.resolve()).messages)).toEqual(shown);
    expect(texts((await newEngine(store, engine.chatId).resolve()).messages)).toEqual(shown);
  });
});
