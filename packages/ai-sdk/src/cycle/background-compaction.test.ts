import type { AutoCompaction } from '@ctxgraph/engine';
import { readCompaction, role, type Tokenizer } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { simulateReadableStream, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import type { CompactionEvent } from './background-compaction';
import { createChatCycle } from './chat-cycle';

// The engine's cost policy in the request cycle (issue #39): the compaction a turn's resolve
// deferred runs after the reply is saved, in the background, handed to `waitUntil`; the next turn
// continues after it.

/** One token per word. */
const words: Tokenizer = {
  specificationVersion: 'v1',
  id: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];

/** A model that answers with 20 words and keeps every prompt it was sent. */
function recordingModel(prompts: Prompt[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      prompts.push(prompt);
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: `answer ${'word '.repeat(19)}` },
            { type: 'text-end', id: 't' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: undefined },
              usage: {
                inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
                outputTokens: { total: 20, text: 20, reasoning: undefined },
              },
            },
          ],
        }),
      };
    },
  });
}

const ask = (id: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text: `question ${id} ${'word '.repeat(18)}` }],
});

const promptText = (prompt: Prompt): string => JSON.stringify(prompt);

function setup(summarize: () => string | Promise<string>) {
  const store = new InMemoryContextStore();
  const events: CompactionEvent[] = [];
  const waited: Promise<unknown>[] = [];
  const prompts: Prompt[] = [];
  const cycle = createChatCycle({
    store,
    engine: {
      renderer: new XmlRenderer(),
      tokenizer: words,
      prices: { 'house-model': { input: 1, output: 4 } },
      autoCompact: { policy: 'cost', summarize, summaryTokens: 20, keep: 1 },
    },
    budget: { maxInputTokens: 4000, model: 'house-model' },
    onCompaction: (event) => events.push(event),
    waitUntil: (promise) => waited.push(promise),
  });
  /** One turn through the cycle, as the bundled client sends it: the message and its `after`. */
  const send = async (
    chatId: string,
    id: string,
    after: string | null,
  ): Promise<{ replyId: string; compaction: AutoCompaction | undefined }> => {
    const turn = await cycle.begin(
      { id: chatId, message: ask(id), trigger: 'submit-message' },
      { userId: 'u', after, context: (engine) => engine.set(role('You help.')) },
    );
    await turn.respond(streamText({ model: recordingModel(prompts), ...turn })).text();
    return { replyId: turn.replyId, compaction: await turn.compaction };
  };
  return { store, cycle, events, waited, prompts, send };
}

describe('the cost policy in the chat cycle', () => {
  it('compacts after the reply in the background; the next turn continues after the summary', async () => {
    const { store, events, waited, prompts, send } = setup(() => 'the summary so far');
    let after: string | null = null;
    const outcomes: (AutoCompaction | undefined)[] = [];
    for (let turn = 0; turn < 6; turn += 1) {
      const { replyId, compaction } = await send('bg', `q${turn}`, after);
      outcomes.push(compaction);
      // The client's node of the reply (ids are the nodes' here: no versions).
      after = replyId;
    }
    const compacted = outcomes.findIndex((outcome) => outcome?.status === 'compacted');
    expect(compacted).toBeGreaterThanOrEqual(0);
    // Told, and handed to waitUntil: one event and one promise per compaction the cycle ran.
    const ran = outcomes.filter((outcome) => outcome !== undefined);
    expect(events.map((event) => event.outcome)).toEqual(ran);
    expect(events[0]).toMatchObject({ chatId: 'bg', branch: 'main' });
    expect(waited).toHaveLength(ran.length);
    // The turn after the compaction sent the summary, not the span.
    const next = prompts[compacted + 1] as Prompt;
    expect(promptText(next)).toContain('the summary so far');
    expect(promptText(next)).not.toContain('question q0 ');
    // One branch: every turn continued on main, after the compaction nodes too.
    const branches = await store.listBranches('bg');
    expect(branches.map((branch) => branch.name)).toEqual(['main']);
    const graph = await store.getGraph('bg');
    const nodes = graph.nodes.filter((node) => readCompaction(node) !== null);
    expect(nodes).toHaveLength(ran.filter((outcome) => outcome?.status === 'compacted').length);
  });

  it('a failing summary is told to onCompaction and the turn promise, nothing written, the chat goes on', async () => {
    const { store, events, send } = setup(() => {
      throw new Error('summary model down');
    });
    let after: string | null = null;
    const outcomes: (AutoCompaction | undefined)[] = [];
    for (let turn = 0; turn < 6; turn += 1) {
      const { replyId, compaction } = await send('bg-failing', `q${turn}`, after);
      outcomes.push(compaction);
      after = replyId;
    }
    const failed = outcomes.filter((outcome) => outcome?.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]).toEqual({
      status: 'failed',
      error: expect.stringMatching(/summary model down.*Nothing was written/),
    });
    expect(events.map((event) => event.outcome.status)).toEqual(failed.map(() => 'failed'));
    const graph = await store.getGraph('bg-failing');
    expect(graph.nodes).toHaveLength(12);
    expect(graph.nodes.some((node) => readCompaction(node) !== null)).toBe(false);
  });
});
