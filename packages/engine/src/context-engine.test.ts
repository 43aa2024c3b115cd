import { assistant, assistantText, message, user } from '@ctxgraph/codecs';
import {
  BranchNotFoundError,
  CheckpointExistsError,
  CheckpointNotFoundError,
  type ContextStore,
  EngineError,
  fragment,
  hint,
  lastAssistantMessage,
  MessageNotFoundError,
  OwnershipError,
  role,
  StoreError,
  term,
  UnsupportedSpecificationError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import type { UIMessage } from 'ai';
import { beforeEach, describe, expect, it } from 'vitest';
import { countingStore, LineRenderer, overrideStore } from './__fixtures__/test-kit';
import { ContextEngine } from './context-engine';

const renderer = new LineRenderer();
let store: InMemoryContextStore;
let chatCounter = 0;
const newChatId = (): string => {
  chatCounter += 1;
  return `chat-${Date.now()}-${chatCounter}`;
};
const texts = (messages: UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );

beforeEach(() => {
  store = new InMemoryContextStore();
});

describe('creating an engine', () => {
  it('opens lazily and creates the chat with a main branch', async () => {
    const engine = new ContextEngine({
      store,
      chatId: 'chat-001',
      userId: 'user-001',
      metadata: { source: 'web' },
    });
    expect(engine.chatId).toBe('chat-001');
    expect(engine.chat).toBeNull();
    expect(engine.branch).toBe('main');
    expect(engine.headMessageId).toBeUndefined();
    expect(await store.getChat('chat-001')).toBeNull();

    await engine.resolve({ renderer });
    expect(engine.chat).toMatchObject({
      id: 'chat-001',
      userId: 'user-001',
      metadata: { source: 'web' },
      title: null,
    });
    expect(typeof engine.chat?.createdAt).toBe('number');
    expect((await store.listBranches('chat-001')).map((branch) => branch.name)).toEqual(['main']);
  });

  it('refuses bad options clearly', () => {
    expect(() => new ContextEngine({ store, chatId: '', userId: 'u' })).toThrow(
      'chatId expected a non-empty string',
    );
    expect(
      () => new ContextEngine({ store, chatId: 'c', userId: 42 as unknown as string }),
    ).toThrow(ValidationError);
    expect(
      () => new ContextEngine({ store: {} as ContextStore, chatId: 'c', userId: 'u' }),
    ).toThrow('store must be a ContextStore');
    expect(
      () => new ContextEngine({ store, chatId: 'c', userId: 'u', metadata: [] as never }),
    ).toThrow('metadata must be a plain JSON object');
    expect(
      () => new ContextEngine({ store, chatId: 'c', userId: 'u', maxSaveAttempts: 0 }),
    ).toThrow('maxSaveAttempts');
  });

  it('refuses a store or renderer built against another specification version', async () => {
    const future = overrideStore(store, { specificationVersion: 'v2' } as never);
    expect(() => new ContextEngine({ store: future, chatId: 'c', userId: 'u' })).toThrow(
      UnsupportedSpecificationError,
    );
    const engine = new ContextEngine({ store, chatId: 'c', userId: 'u' });
    const oldRenderer = { specificationVersion: 'v0', format: 'x', render: () => '' };
    await expect(engine.resolve({ renderer: oldRenderer as never })).rejects.toThrow(
      UnsupportedSpecificationError,
    );
  });
});

describe('set, render and resolve', () => {
  it('routes message fragments to pending and the rest to the system prompt, in order, chainably', async () => {
    const engine = new ContextEngine({ store, chatId: newChatId(), userId: 'u' })
      .set(role('You are helpful.'))
      .set(user('Hello'))
      .set(hint('Be concise.'))
      .set(assistantText('Hi!'));
    const { systemPrompt, messages } = await engine.resolve({ renderer });
    expect(systemPrompt).toBe('role: You are helpful.\nhint: Be concise.');
    expect(texts(messages)).toEqual(['Hello', 'Hi!']);
    expect(engine.render(renderer)).toBe(systemPrompt);
  });

  it('puts saved history before pending messages', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(user('one'), assistantText('two'));
    await engine.save();
    engine.set(user('three'));
    expect(texts((await engine.resolve()).messages)).toEqual(['one', 'two', 'three']);
  });

  it('fails clearly without a renderer, and uses the default one when given', async () => {
    const engine = new ContextEngine({ store, chatId: newChatId(), userId: 'u' });
    await expect(engine.resolve()).rejects.toThrow(EngineError);
    await expect(engine.resolve()).rejects.toThrow('no renderer');
    expect(() => engine.render()).toThrow('no renderer');
    const withDefault = new ContextEngine({
      store,
      chatId: newChatId(),
      userId: 'u',
      renderer,
    }).set(hint('x'));
    expect((await withDefault.resolve()).systemPrompt).toBe('hint: x');
  });

  it('resolves to model messages in one call', async () => {
    const engine = new ContextEngine({ store, chatId: newChatId(), userId: 'u', renderer }).set(
      user('hi'),
      assistantText('hello'),
    );
    const { messages } = await engine.resolve({ format: 'model' });
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }] },
    ]);
    await expect(engine.resolve({ format: 'xml' as never })).rejects.toThrow(
      "format must be 'ui' or 'model'",
    );
  });

  it('refuses things that are not fragments, and message fragments without a codec', () => {
    const engine = new ContextEngine({ store, chatId: newChatId(), userId: 'u' });
    expect(() => engine.set('hello' as never)).toThrow('fragments[0] is not a fragment');
    expect(() => engine.set(hint('ok'), { name: 'user', data: 'x', type: 'message' })).toThrow(
      'has no codec',
    );
    expect(engine.render(renderer)).toBe('');
  });

  it('validates pending messages at resolve and save, and writes nothing when one is invalid', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(
      user('fine'),
      message({
        id: 'bad',
        role: 'assistant',
        parts: [{ type: 'text', text: 42 as unknown as string }],
      }),
    );
    await expect(engine.resolve()).rejects.toThrow('messages[1] (id "bad")');
    await expect(engine.save()).rejects.toThrow('Nothing was saved');
    expect((await store.getGraph(chatId)).nodes).toEqual([]);
  });
});

describe('save', () => {
  it('persists pending messages as a chain and moves the head', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(user('Hello', { id: 'm1' }), assistantText('Hi there!', { id: 'm2' }));
    expect(await engine.save()).toEqual({ headMessageId: 'm2' });
    expect(engine.headMessageId).toBe('m2');
    const graph = await store.getGraph(chatId);
    expect(graph.nodes.map((node) => [node.id, node.parentId])).toEqual([
      ['m1', null],
      ['m2', 'm1'],
    ]);
    expect((await engine.resolve()).messages).toHaveLength(2);
  });

  it('returns the current head without writing when nothing is pending', async () => {
    const counted = countingStore(store);
    const engine = new ContextEngine({ store: counted.store, chatId: newChatId(), userId: 'u' });
    expect(await engine.save()).toEqual({ headMessageId: undefined });
    expect(counted.calls.get('commit')).toBeUndefined();
  });

  it('keeps pending messages pending when the store fails, and writes nothing', async () => {
    const chatId = newChatId();
    const failing = overrideStore(store, {
      commit: () => Promise.reject(new StoreError('disk full')),
      append: () => Promise.reject(new StoreError('disk full')),
    });
    const engine = new ContextEngine({ store: failing, chatId, userId: 'u', renderer });
    engine.set(user('keep me'));
    await expect(engine.save()).rejects.toThrow('disk full');
    expect((await store.getGraph(chatId)).nodes).toEqual([]);
    const retry = new ContextEngine({ store, chatId, userId: 'u', renderer });
    // The first engine still has the message pending:
    expect(texts((await engine.resolve()).messages)).toEqual(['keep me']);
    expect((await retry.resolve()).messages).toEqual([]);
  });

  it('never loses a turn when engines save to the same branch at once', async () => {
    const chatId = newChatId();
    const engines = Array.from({ length: 8 }, (_, index) =>
      new ContextEngine({ store, chatId, userId: 'u', renderer }).set(user(`turn ${index}`)),
    );
    await Promise.all(engines.map((engine) => engine.save()));
    const reader = new ContextEngine({ store, chatId, userId: 'u', renderer });
    const { messages } = await reader.resolve();
    expect(texts(messages).sort()).toEqual(
      Array.from({ length: 8 }, (_, index) => `turn ${index}`).sort(),
    );
    expect((await store.getGraph(chatId)).nodes).toHaveLength(8);
  });

  it('saves messages set while a save is running in a later save', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(user('first'));
    const saving = engine.save();
    engine.set(assistantText('second'));
    await saving;
    expect(texts((await engine.resolve()).messages)).toEqual(['first', 'second']);
    await engine.save();
    expect((await store.getGraph(chatId)).nodes).toHaveLength(2);
  });

  it('replaces a message saved again with the same id instead of duplicating it', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(user('q', { id: 'q' }), assistantText('partial', { id: 'a' }));
    await engine.save();
    engine.set(assistantText('final answer', { id: 'a' }));
    await engine.save();
    expect(texts((await engine.resolve()).messages)).toEqual(['q', 'final answer']);
    expect((await store.getGraph(chatId)).nodes).toHaveLength(2);
  });
});

describe('lastAssistantMessage', () => {
  it('replaces the latest saved assistant message in place', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(user('2+2?', { id: 'q' }), assistantText('5', { id: 'a' }));
    await engine.save();
    engine.set(lastAssistantMessage('4'));
    expect(texts((await engine.resolve()).messages)).toEqual(['2+2?', '4']);
    await engine.save();
    expect(engine.headMessageId).toBe('a');
    const graph = await store.getGraph(chatId);
    expect(graph.nodes).toHaveLength(2);
    expect(
      texts((await new ContextEngine({ store, chatId, userId: 'u', renderer }).resolve()).messages),
    ).toEqual(['2+2?', '4']);
  });

  it('prefers a pending assistant message, newest first', async () => {
    const engine = new ContextEngine({ store, chatId: newChatId(), userId: 'u', renderer });
    engine.set(
      user('q'),
      assistantText('draft 1', { id: 'd1' }),
      assistantText('draft 2', { id: 'd2' }),
      lastAssistantMessage('fixed'),
    );
    expect(texts((await engine.resolve()).messages)).toEqual(['q', 'draft 1', 'fixed']);
    await engine.save();
    expect(engine.headMessageId).toBe('d2');
  });

  it('becomes a new message when there is no assistant message', async () => {
    const engine = new ContextEngine({ store, chatId: newChatId(), userId: 'u', renderer });
    engine.set(user('q'), lastAssistantMessage('answer'));
    await engine.save();
    expect(texts((await engine.resolve()).messages)).toEqual(['q', 'answer']);
  });
});

describe('branches and checkpoints', () => {
  async function conversation(chatId = newChatId()): Promise<ContextEngine> {
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(user('What is 2+2?', { id: 'q1' }), assistantText('The answer is 5.', { id: 'a1' }));
    await engine.save();
    return engine;
  }

  it('rewind starts main-v2 at the message and keeps main', async () => {
    const engine = await conversation();
    const branch = await engine.rewind('q1');
    expect(branch).toMatchObject({ name: 'main-v2', headMessageId: 'q1' });
    expect(engine.branch).toBe('main-v2');
    expect(engine.headMessageId).toBe('q1');
    engine.set(assistantText('The answer is 4.'));
    await engine.save();
    expect(texts((await engine.resolve()).messages)).toEqual(['What is 2+2?', 'The answer is 4.']);
    await engine.switchBranch('main');
    expect(texts((await engine.resolve()).messages)).toEqual(['What is 2+2?', 'The answer is 5.']);
  });

  it('names further forks main-v3, main-v4, also from a fork', async () => {
    const engine = await conversation();
    await engine.rewind('q1');
    expect((await engine.rewind('a1')).name).toBe('main-v3');
    expect((await engine.btw()).name).toBe('main-v4');
  });

  it('rewind to an unknown message fails clearly and changes nothing', async () => {
    const engine = await conversation();
    await expect(engine.rewind('nope')).rejects.toThrow(MessageNotFoundError);
    expect(engine.branch).toBe('main');
    expect((await store.listBranches(engine.chatId)).map((branch) => branch.name)).toEqual([
      'main',
    ]);
  });

  it('checkpoint and restore', async () => {
    const engine = await conversation();
    const checkpoint = await engine.checkpoint('before-choice');
    expect(checkpoint).toMatchObject({ name: 'before-choice', messageId: 'a1' });
    engine.set(user('Python please'));
    await engine.save();
    const restored = await engine.restore('before-choice');
    expect(restored).toMatchObject({ name: 'main-v2', headMessageId: 'a1' });
    engine.set(user('JavaScript please'));
    await engine.save();
    expect(texts((await engine.resolve()).messages)).toEqual([
      'What is 2+2?',
      'The answer is 5.',
      'JavaScript please',
    ]);
  });

  it('refuses a duplicate checkpoint unless replace is asked for, and unknown names', async () => {
    const engine = await conversation();
    await engine.checkpoint('cp');
    await expect(engine.checkpoint('cp')).rejects.toThrow(CheckpointExistsError);
    engine.set(user('more'));
    await engine.save();
    const moved = await engine.checkpoint('cp', { replace: true });
    expect(moved.messageId).toBe(engine.headMessageId);
    await expect(engine.restore('missing')).rejects.toThrow(CheckpointNotFoundError);
    await expect(
      new ContextEngine({ store, chatId: newChatId(), userId: 'u' }).checkpoint('x'),
    ).rejects.toThrow('no saved message yet');
  });

  it('switchBranch clears pending messages; unknown branches fail clearly', async () => {
    const engine = await conversation();
    await engine.btw();
    engine.set(user('pending'));
    await expect(engine.switchBranch('nope')).rejects.toThrow(BranchNotFoundError);
    expect(texts((await engine.resolve()).messages)).toContain('pending');
    await engine.switchBranch('main-v2');
    expect(engine.branch).toBe('main-v2');
    expect(texts((await engine.resolve()).messages)).toEqual(['What is 2+2?', 'The answer is 5.']);
  });

  it('btw creates a parallel branch without switching and keeps pending messages', async () => {
    const engine = await conversation();
    engine.set(user('still pending'));
    const side = await engine.btw();
    expect(side).toMatchObject({ name: 'main-v2', headMessageId: 'a1' });
    expect(engine.branch).toBe('main');
    expect(texts((await engine.resolve()).messages).at(-1)).toBe('still pending');
  });

  it('a new engine opens the branch the last rewind or switch left active', async () => {
    const engine = await conversation();
    await engine.rewind('q1');
    const reopened = new ContextEngine({ store, chatId: engine.chatId, userId: 'u', renderer });
    await reopened.resolve();
    expect(reopened.branch).toBe('main-v2');
    expect(reopened.headMessageId).toBe('q1');
    await engine.switchBranch('main');
    const again = new ContextEngine({ store, chatId: engine.chatId, userId: 'u', renderer });
    expect(texts((await again.resolve()).messages)).toEqual(['What is 2+2?', 'The answer is 5.']);
    expect(again.branch).toBe('main');
  });
});

describe('ownership and isolation', () => {
  it('refuses another user before reading or writing anything', async () => {
    const chatId = newChatId();
    const owner = new ContextEngine({ store, chatId, userId: 'alice', renderer }).set(
      user('secret'),
    );
    await owner.save();
    const counted = countingStore(store);
    const intruder = new ContextEngine({
      store: counted.store,
      chatId,
      userId: 'mallory',
      renderer,
    }).set(user('hi'));
    await expect(intruder.resolve()).rejects.toThrow(OwnershipError);
    await expect(intruder.save()).rejects.toThrow(OwnershipError);
    await expect(intruder.rewind('x')).rejects.toThrow(OwnershipError);
    expect([...counted.calls.keys()]).toEqual(['openChat']);
    expect((await store.getGraph(chatId)).nodes).toHaveLength(1);
  });

  it('scopes message ids to their chat', async () => {
    const first = new ContextEngine({ store, chatId: newChatId(), userId: 'u', renderer }).set(
      user('in chat one', { id: 'same' }),
    );
    const second = new ContextEngine({ store, chatId: newChatId(), userId: 'u', renderer }).set(
      user('in chat two', { id: 'same' }),
    );
    await first.save();
    await second.save();
    second.set(user('edited', { id: 'same' }));
    await second.save();
    expect(texts((await first.resolve()).messages)).toEqual(['in chat one']);
    expect(texts((await second.resolve()).messages)).toEqual(['edited']);
  });
});

describe('reads', () => {
  it('resolves a long chain complete and in order', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    for (let turn = 0; turn < 300; turn += 1) {
      engine.set(user(`q${turn}`), assistantText(`a${turn}`));
      await engine.save();
    }
    const fresh = new ContextEngine({ store, chatId, userId: 'u', renderer });
    const { messages } = await fresh.resolve();
    expect(messages).toHaveLength(600);
    expect(texts(messages).slice(0, 3)).toEqual(['q0', 'a0', 'q1']);
    expect(texts(messages).at(-1)).toBe('a299');
  });

  it('a cold resolve opens the chat and reads the chain, without reading the head again', async () => {
    const chatId = newChatId();
    await new ContextEngine({ store, chatId, userId: 'u', renderer })
      .set(user('one'), assistantText('two'))
      .save();
    const counted = countingStore(store);
    const fresh = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    expect(texts((await fresh.resolve()).messages)).toEqual(['one', 'two']);
    expect(Object.fromEntries(counted.calls)).toEqual({ openChat: 1, getChain: 1 });
    // What openChat read serves that one operation only: the next resolve reads the head.
    await new ContextEngine({ store, chatId, userId: 'u', renderer }).set(user('three')).save();
    counted.reset();
    expect(texts((await fresh.resolve()).messages)).toEqual(['one', 'two', 'three']);
    expect(Object.fromEntries(counted.calls)).toEqual({ getHead: 1, getChain: 1 });
  });

  it('an engine opened by another call first reads the head when it resolves', async () => {
    const chatId = newChatId();
    const counted = countingStore(store);
    const engine = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    await engine.updateChat({ title: 'opened by updateChat' });
    await new ContextEngine({ store, chatId, userId: 'u', renderer }).set(user('later')).save();
    counted.reset();
    expect(texts((await engine.resolve()).messages)).toEqual(['later']);
    expect(Object.fromEntries(counted.calls)).toEqual({ getHead: 1, getChain: 1 });
  });

  it('a warm resolve reads only the head; after another writer it reads only the new nodes', async () => {
    const chatId = newChatId();
    const counted = countingStore(store);
    const engine = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    engine.set(user('one'), assistantText('two'));
    await engine.save();
    await engine.resolve();
    counted.reset();
    await engine.resolve();
    expect(Object.fromEntries(counted.calls)).toEqual({ getHead: 1 });

    const other = new ContextEngine({ store, chatId, userId: 'u', renderer }).set(user('three'));
    await other.save();
    counted.reset();
    const { messages } = await engine.resolve();
    expect(texts(messages)).toEqual(['one', 'two', 'three']);
    expect(Object.fromEntries(counted.calls)).toEqual({ getHead: 1, getChain: 1 });
  });

  it('sees content another writer replaced in place', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer }).set(
      user('q', { id: 'q' }),
      assistantText('old', { id: 'a' }),
    );
    await engine.save();
    await engine.resolve();
    await new ContextEngine({ store, chatId, userId: 'u', renderer })
      .set(assistantText('new', { id: 'a' }))
      .save();
    expect(texts((await engine.resolve()).messages)).toEqual(['q', 'new']);
  });

  it('a warm save makes one store call, the append', async () => {
    const counted = countingStore(store);
    const engine = new ContextEngine({
      store: counted.store,
      chatId: newChatId(),
      userId: 'u',
      renderer,
    });
    engine.set(user('one'));
    await engine.save();
    await engine.resolve();
    counted.reset();
    engine.set(assistantText('two'));
    await engine.save();
    expect(Object.fromEntries(counted.calls)).toEqual({ append: 1 });
    expect(texts((await engine.resolve()).messages)).toEqual(['one', 'two']);
    // A save that starts a live reply: one compare-and-set commit (the live record is written
    // with the question), never the append.
    counted.reset();
    await engine
      .set(user('three'))
      .save({ startReply: { replyId: 'r3', owner: 'writer', leaseMs: 5_000 } });
    expect(Object.fromEntries(counted.calls)).toEqual({ commit: 1 });
  });

  it('a stale engine re-reads the head on conflict and saves on top', async () => {
    const chatId = newChatId();
    const stale = new ContextEngine({ store, chatId, userId: 'u', renderer }).set(user('first'));
    await stale.save();
    await stale.resolve();
    await new ContextEngine({ store, chatId, userId: 'u', renderer })
      .set(user('from elsewhere'))
      .save();
    stale.set(user('mine'));
    await stale.save();
    expect(texts((await stale.resolve()).messages)).toEqual(['first', 'from elsewhere', 'mine']);
  });

  it('writes on another branch of the chat do not make a warm engine read its chain again', async () => {
    const chatId = newChatId();
    const counted = countingStore(store);
    const engine = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    engine.set(user('q', { id: 'q' }), assistantText('a'));
    await engine.save();
    const side = await engine.btw();
    const other = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await other.switchBranch(side.name);
    await engine.switchBranch('main');
    await engine.resolve();
    for (let turn = 0; turn < 3; turn += 1) {
      await other.set(user(`side ${turn}`)).save();
      await engine.set(user(`main ${turn}`)).save();
    }
    counted.reset();
    const { messages } = await engine.resolve();
    expect(texts(messages)).toEqual(['q', 'a', 'main 0', 'main 1', 'main 2']);
    expect(Object.fromEntries(counted.calls)).toEqual({ getHead: 1 });
  });

  it('branch operations write one pointer and read no chain', async () => {
    const chatId = newChatId();
    const counted = countingStore(store);
    const engine = new ContextEngine({ store: counted.store, chatId, userId: 'u', renderer });
    for (let turn = 0; turn < 50; turn += 1)
      engine.set(user(`q${turn}`, { id: `q${turn}` }), assistantText(`a${turn}`));
    await engine.save();
    await engine.resolve();
    counted.reset();
    await engine.rewind('q10');
    await engine.resolve();
    // One pointer write: the store names the fork (forkBranch), no message read, no chain read.
    expect(Object.fromEntries(counted.calls)).toEqual({ forkBranch: 1, getHead: 1 });
    expect(texts((await engine.resolve()).messages)).toHaveLength(21);
  });

  it('leaves out or refuses a stored message that no longer validates, as configured', async () => {
    const chatId = newChatId();
    await store.openChat({ chatId, userId: 'u' });
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: null,
      messages: [
        { id: 'ok', message: { id: 'ok', role: 'user', parts: [{ type: 'text', text: 'fine' }] } },
        {
          id: 'broken',
          message: { id: 'broken', role: 'assistant', parts: [{ type: 'text', text: 42 }] },
        },
      ],
    });
    const strict = new ContextEngine({ store, chatId, userId: 'u', renderer });
    await expect(strict.resolve()).rejects.toThrow('Stored message "broken"');
    const lenient = new ContextEngine({
      store,
      chatId,
      userId: 'u',
      renderer,
      onInvalidMessage: 'skip',
    });
    expect(texts((await lenient.resolve()).messages)).toEqual(['fine']);
    const snapshot = await lenient.inspect();
    expect(snapshot.fragments.invalid).toEqual([
      { id: 'broken', error: expect.stringContaining('parts[0].text') },
    ]);
  });
});

describe('updateChat and inspect', () => {
  it('updateChat sets the title and merges metadata', async () => {
    const engine = new ContextEngine({
      store,
      chatId: newChatId(),
      userId: 'u',
      metadata: { source: 'web' },
    });
    const chat = await engine.updateChat({
      title: 'Python Learning Session',
      metadata: { tags: ['python', 'beginner'] },
    });
    expect(chat).toMatchObject({
      title: 'Python Learning Session',
      metadata: { source: 'web', tags: ['python', 'beginner'] },
    });
    expect(engine.chat?.title).toBe('Python Learning Session');
    await expect(engine.updateChat(null as never)).rejects.toThrow(ValidationError);
  });

  it('inspect gives a JSON-safe snapshot with tokens, cost, lanes, graph and metadata', async () => {
    const chatId = newChatId();
    const engine = new ContextEngine({ store, chatId, userId: 'u', renderer });
    engine.set(
      role('You are helpful.'),
      term('MRR', 'monthly recurring revenue'),
      fragment('db', hint('PostgreSQL 15')),
    );
    engine.set(user('Hello', { id: 'm1' }));
    await engine.save();
    engine.set(assistant('Hi! How can I help you today?'));
    const snapshot = await engine.inspect({ modelId: 'openai:gpt-4o' });
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot.rendered).toBe(engine.render(renderer));
    expect(snapshot.estimate.tokens).toBe(
      snapshot.estimate.breakdown.systemPrompt +
        snapshot.estimate.breakdown.persisted +
        snapshot.estimate.breakdown.pending,
    );
    expect(snapshot.estimate.breakdown.systemPrompt).toBeGreaterThan(5);
    expect(snapshot.estimate.pricePerMillionInputTokens).toBe(2.5);
    expect(snapshot.estimate.cost).toBeCloseTo((snapshot.estimate.tokens * 2.5) / 1e6, 12);
    expect(snapshot.fragments.context).toHaveLength(3);
    expect(snapshot.fragments.context[2]).toEqual({
      name: 'db',
      data: [{ name: 'hint', data: 'PostgreSQL 15' }],
    });
    expect(snapshot.fragments.persisted.map((entry) => entry.id)).toEqual(['m1']);
    expect(snapshot.fragments.pending).toHaveLength(1);
    expect(snapshot.graph.nodes).toEqual([
      expect.objectContaining({ id: 'm1', parentId: null, role: 'user', text: 'Hello' }),
    ]);
    expect(snapshot.graph.branches.map((branch) => branch.name)).toEqual(['main']);
    expect(snapshot.meta).toMatchObject({
      chatId,
      userId: 'u',
      branch: 'main',
      headMessageId: 'm1',
      renderer: 'lines',
    });
  });

  it('says when the price of a model is unknown, and takes prices from the caller', async () => {
    const engine = new ContextEngine({
      store,
      chatId: newChatId(),
      userId: 'u',
      renderer,
      prices: { 'my-model': 1 },
    }).set(hint('x'));
    const unknown = await engine.inspect({ modelId: 'acme:mystery-1' });
    expect(unknown.estimate.cost).toBeNull();
    expect(unknown.estimate.note).toContain('"acme:mystery-1" is not known');
    expect(
      (await engine.inspect({ modelId: 'my-model' })).estimate.pricePerMillionInputTokens,
    ).toBe(1);
    expect(
      (await engine.inspect({ modelId: 'x', prices: { x: 3 } })).estimate
        .pricePerMillionInputTokens,
    ).toBe(3);
    expect((await engine.inspect()).estimate.note).toContain('No modelId');
  });
});
