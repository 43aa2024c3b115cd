import { ContextEngine } from '@ctxgraph/engine';
import { role, ValidationError } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { simulateReadableStream, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { type ChatCycle, type ChatTurn, createChatCycle } from './chat-cycle';

// Warm engines between requests (`warmEngines`): a chat's next request runs on the engine the
// last one left, never on one another request holds, and gets what a fresh engine would give.

function echoModel(text = 'ok'): MockLanguageModelV3 {
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

/** Begins a turn with a context fragment, streams the reply and waits for its save. */
async function fullTurn(
  cycle: ChatCycle,
  chatId: string,
  messages: UIMessage[],
): Promise<{ turn: ChatTurn; path: UIMessage[] }> {
  const turn = await cycle.begin(
    { id: chatId, messages },
    { userId: 'u', context: (each) => each.set(role('You answer briefly.')) },
  );
  await turn.respond(streamText({ model: echoModel(), messages: turn.messages })).text();
  return { turn, path: await cycle.messages(chatId, { userId: 'u' }) };
}

describe('warm engines', () => {
  it('the next request on a chat runs on the engine the last one left, with only its own context', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine });
    const cold = createChatCycle({ store, engine, warmEngines: 0 });
    const first = await fullTurn(cycle, 'c1', [question('q1', 'one')]);
    const second = await fullTurn(cycle, 'c1', [...first.path, question('q2', 'two')]);
    expect(second.turn.engine === first.turn.engine).toBe(true);
    expect(second.path.map((message) => message.id)).toEqual([
      'q1',
      first.path[1]?.id,
      'q2',
      second.path[3]?.id,
    ]);
    // The context is the request's own (not added again on top of the last request's).
    expect(second.turn.system).toEqual(first.turn.system);
    expect(JSON.stringify(second.turn.system).split('You answer briefly.')).toHaveLength(2);
    // What the warm engine gives the model is what a fresh one gives.
    const body = { id: 'c1', messages: [...second.path, question('q3', 'three')] };
    const setContext = {
      userId: 'u',
      context: (each: ChatTurn['engine']) => each.set(role('You answer briefly.')),
    };
    const warmTurn = await cycle.begin(body, setContext);
    expect(warmTurn.engine === first.turn.engine).toBe(true);
    const coldTurn = await cold.begin(body, setContext);
    expect(coldTurn.engine === first.turn.engine).toBe(false);
    expect(warmTurn.system).toEqual(coldTurn.system);
    expect(warmTurn.messages).toEqual(coldTurn.messages);
    expect(warmTurn.originalMessages).toEqual(coldTurn.originalMessages);
  });

  it('concurrent requests on one chat never share an engine; both turns are kept', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine });
    const first = await fullTurn(cycle, 'c2', [question('q1', 'one')]);
    const [left, right] = await Promise.all([
      cycle.begin({ id: 'c2', messages: [...first.path, question('qa', 'left')] }, { userId: 'u' }),
      cycle.begin(
        { id: 'c2', messages: [...first.path, question('qb', 'right')] },
        { userId: 'u' },
      ),
    ]);
    expect(left.engine === right.engine).toBe(false);
    expect([left.engine, right.engine].includes(first.turn.engine)).toBe(true);
    await Promise.all([
      left.respond(streamText({ model: echoModel('L'), messages: left.messages })).text(),
      right.respond(streamText({ model: echoModel('R'), messages: right.messages })).text(),
    ]);
    const toLeft = await cycle.messages('c2', { userId: 'u', leaf: left.replyId });
    const toRight = await cycle.messages('c2', { userId: 'u', leaf: right.replyId });
    expect(toLeft.map((message) => message.id)).toEqual([
      'q1',
      first.path[1]?.id,
      'qa',
      left.replyId,
    ]);
    expect(toRight.map((message) => message.id)).toEqual([
      'q1',
      first.path[1]?.id,
      'qb',
      right.replyId,
    ]);
  });

  it('warmEngines: 0 opens a fresh engine per request; past capacity the least recent chat is dropped', async () => {
    const store = new InMemoryContextStore();
    const none = createChatCycle({ store, engine, warmEngines: 0 });
    const a = await fullTurn(none, 'c3', [question('q1', 'one')]);
    const b = await fullTurn(none, 'c3', [...a.path, question('q2', 'two')]);
    expect(b.turn.engine === a.turn.engine).toBe(false);
    const one = createChatCycle({ store, engine, warmEngines: 1 });
    const x = await fullTurn(one, 'c4', [question('q1', 'one')]);
    const y = await fullTurn(one, 'c5', [question('q1', 'one')]);
    const x2 = await fullTurn(one, 'c4', [...x.path, question('q2', 'two')]);
    expect(x2.turn.engine === x.turn.engine).toBe(false);
    const y2 = await fullTurn(one, 'c5', [...y.path, question('q2', 'two')]);
    expect(y2.turn.engine === y.turn.engine).toBe(false);
    const x3 = await fullTurn(one, 'c4', [...x2.path, question('q3', 'three')]);
    expect(x3.turn.engine === x2.turn.engine).toBe(false);
    const x4 = await fullTurn(one, 'c4', [...x3.path, question('q4', 'four')]);
    expect(x4.turn.engine === x3.turn.engine).toBe(true);
  });

  it('an engine whose reply could not be saved is not used again', async () => {
    const store = new InMemoryContextStore();
    let failCommits = false;
    const failing = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'commit' && failCommits) {
          return () => Promise.reject(new Error('disk full'));
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const cycle = createChatCycle({ store: failing, engine, onSaveError: () => undefined });
    const first = await fullTurn(cycle, 'c6', [question('q1', 'one')]);
    const turn = await cycle.begin(
      { id: 'c6', messages: [...first.path, question('q2', 'two')] },
      { userId: 'u' },
    );
    expect(turn.engine === first.turn.engine).toBe(true);
    failCommits = true;
    const text = await turn
      .respond(streamText({ model: echoModel(), messages: turn.messages }))
      .text();
    expect(text).toContain('could not be saved');
    failCommits = false;
    const path = await cycle.messages('c6', { userId: 'u' });
    expect(path.map((message) => message.id)).toEqual(['q1', first.path[1]?.id, 'q2']);
    const next = await cycle.begin(
      { id: 'c6', messages: [...path, question('q3', 'three')] },
      { userId: 'u' },
    );
    expect(next.engine === turn.engine).toBe(false);
  });

  it('refuses a warmEngines that is not a whole number of chats', () => {
    for (const warmEngines of [-1, 1.5, Number.NaN]) {
      expect(() =>
        createChatCycle({ store: new InMemoryContextStore(), engine, warmEngines }),
      ).toThrow(/warmEngines must be a whole number/);
      try {
        createChatCycle({ store: new InMemoryContextStore(), engine, warmEngines });
      } catch (error) {
        expect(ValidationError.isInstance(error)).toBe(true);
      }
    }
  });
});

describe('the most recently written message (messages() without leaf)', () => {
  it('is found among branch heads and checkpoints, whichever branch it is on', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine });
    const first = await fullTurn(cycle, 'c7', [question('q1', 'one')]);
    await fullTurn(cycle, 'c7', [...first.path, question('q2', 'two')]);
    // A newer turn on a branch at q1's reply (an edit of q2): the newest message is its head.
    const edit = await fullTurn(cycle, 'c7', [...first.path, question('q2', 'two, edited')]);
    expect(edit.path.map((message) => message.id)).toEqual([
      'q1',
      first.path[1]?.id,
      'q2',
      edit.path[3]?.id,
    ]);
    expect(edit.path[2]?.parts).toEqual([{ type: 'text', text: 'two, edited' }]);
    // Checkpointed, then its branch deleted: the newest message is no head, a checkpoint keeps it.
    const graph = new ContextEngine({ store, chatId: 'c7', userId: 'u' });
    const newest = edit.path[3]?.id as string;
    const [node] = await graph.findMessage(newest);
    await graph.continueFrom(node ?? null);
    await graph.checkpoint('keep');
    const branch = graph.branch;
    await graph.switchBranch('main');
    await graph.deleteBranch(branch);
    expect((await store.listBranches('c7')).map((each) => each.headMessageId)).not.toContain(node);
    const shown = await cycle.messages('c7', { userId: 'u' });
    expect(shown.map((message) => message.id)).toEqual(edit.path.map((message) => message.id));
  });
});

describe('a body with only the last message, on a warm engine', () => {
  it('the stored message unchanged continues from it; changed, it is a new version at its parent', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine });
    const first = await fullTurn(cycle, 'c8', [question('q1', 'one')]);
    const second = await fullTurn(cycle, 'c8', [...first.path, question('q2', 'two')]);
    const regenerate = await cycle.begin(
      { id: 'c8', trigger: 'regenerate-message', message: question('q2', 'two') },
      { userId: 'u' },
    );
    expect(regenerate.engine === second.turn.engine).toBe(true);
    expect(regenerate.originalMessages.map((message) => message.id)).toEqual([
      'q1',
      first.path[1]?.id,
      'q2',
    ]);
    await regenerate
      .respond(streamText({ model: echoModel(), messages: regenerate.messages }))
      .text();
    const edit = await cycle.begin(
      { id: 'c8', trigger: 'submit-message', message: question('q2', 'two, edited') },
      { userId: 'u' },
    );
    expect(edit.originalMessages.map((message) => message.id)).toEqual([
      'q1',
      first.path[1]?.id,
      'q2',
    ]);
    expect(edit.originalMessages[2]?.parts).toEqual([{ type: 'text', text: 'two, edited' }]);
    await edit.respond(streamText({ model: echoModel(), messages: edit.messages })).text();
    const versions = await cycle.versions('c8', 'q2', { userId: 'u' });
    expect(versions.map((version) => version.message.parts)).toEqual([
      [{ type: 'text', text: 'two' }],
      [{ type: 'text', text: 'two, edited' }],
    ]);
  });
});
