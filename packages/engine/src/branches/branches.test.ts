import { assistantText, user } from '@ctxgraph/codecs';
import {
  BranchExistsError,
  BranchNotFoundError,
  type ContextStore,
  UnsupportedCapabilityError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { LineRenderer, overrideStore, withoutOptionalCapabilities } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from '../usage/message-usage';
import { pruneUserChats } from './retention';

const renderer = new LineRenderer();
let store: ContextStore;
let counter = 0;
const newChatId = (): string => {
  counter += 1;
  return `branches-${counter}`;
};
const engineFor = (chatId: string, userId = 'u', on: ContextStore = store): ContextEngine =>
  new ContextEngine({ store: on, chatId, userId, renderer });

beforeEach(() => {
  store = new InMemoryContextStore();
});

/** main: q1 a1 q2 a2; `main-v2` forked at a1 with q3 a3 (the engine ends on main-v2). */
async function forkedEngine(chatId = newChatId(), userId = 'u'): Promise<ContextEngine> {
  const engine = engineFor(chatId, userId);
  engine.set(
    user('What is a quokka?', { id: 'q1' }),
    assistantText('A small wallaby.', { id: 'a1' }),
  );
  await engine.save();
  engine.set(
    user('Where do quokkas live?', { id: 'q2' }),
    assistantText('Rottnest Island.', { id: 'a2' }),
  );
  await engine.save();
  await engine.rewind('a1');
  engine.set(
    user('Are quokkas endangered?', { id: 'q3' }),
    assistantText('They are listed as vulnerable.', { id: 'a3' }),
  );
  await engine.save();
  return engine;
}

describe('compareBranches', () => {
  it('gives the common ancestor, each side in order, its tokens, and its recorded usage and cost', async () => {
    const engine = await forkedEngine();
    const report = await engine.compareBranches('main', 'main-v2');
    expect(report.commonAncestor?.id).toBe('a1');
    expect(report.left.messages.map((message) => message.id)).toEqual(['q2', 'a2']);
    expect(report.right.messages.map((message) => message.id)).toEqual(['q3', 'a3']);
    expect(report.left.tokens).toBeGreaterThan(0);
    expect(report.right.tokens).toBeGreaterThan(0);
    expect(report.tokenizer).toMatch(/^estimate:/);
    // No usage recorded yet: no calls, no cost.
    expect([report.left.usage.calls, report.left.cost]).toEqual([0, null]);
    engine.set(user('And their diet?', { id: 'q4' }));
    engine.set(
      withUsage(assistantText('Leaves and grasses.', { id: 'a4' }), {
        usage: { inputTokens: 1_000, outputTokens: 100 },
        modelId: 'my-model',
      }),
    );
    await engine.save();
    const priced = await engine.compareBranches('main', 'main-v2', {
      prices: { 'my-model': { input: 2, output: 10 } },
    });
    expect(priced.right.messages.map((message) => message.id)).toEqual(['q3', 'a3', 'q4', 'a4']);
    expect(priced.right.usage).toMatchObject({ calls: 1, inputTokens: 1_000, outputTokens: 100 });
    expect(priced.right.cost).toBeCloseTo((1_000 * 2 + 100 * 10) / 1_000_000, 12);
    expect(priced.left.cost).toBeNull();
    const unpriced = await engine.compareBranches('main', 'main-v2');
    expect(unpriced.right.usage.unpricedModels).toEqual(['my-model']);
  });

  it('refuses unknown branches and bad arguments', async () => {
    const engine = await forkedEngine();
    await expect(engine.compareBranches('main', 'nope')).rejects.toSatisfy((error) =>
      BranchNotFoundError.isInstance(error),
    );
    await expect(engine.compareBranches('', 'main')).rejects.toThrow(ValidationError);
    await expect(engine.compareBranches('main', 'main', 'x' as never)).rejects.toThrow(/options/);
  });
});

describe('search', () => {
  it("looks at the engine's branch by default, the chat or the user's chats when asked", async () => {
    const engine = await forkedEngine();
    const other = engineFor(newChatId());
    other.set(user('quokkas again', { id: 'elsewhere' }));
    await other.save();
    const ids = async (options?: Parameters<ContextEngine['search']>[1]) =>
      (await engine.search('quokkas', options)).items.map((hit) => hit.messageId).sort();
    expect(await ids()).toEqual(['q3']);
    expect(await ids({ branch: 'main' })).toEqual(['q2']);
    expect(await ids({ scope: 'chat' })).toEqual(['q2', 'q3']);
    expect(await ids({ scope: 'user' })).toEqual(['elsewhere', 'q2', 'q3']);
    const page = await engine.search('quokka', { scope: 'chat', limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ messageId: 'q1', branches: ['main', 'main-v2'] });
  });

  it("a fresh engine searches the chat's active branch", async () => {
    const engine = await forkedEngine();
    const fresh = engineFor(engine.chatId);
    const hits = await fresh.search('quokkas');
    expect(fresh.branch).toBe('main-v2');
    expect(hits.items.map((hit) => hit.messageId)).toEqual(['q3']);
  });

  it('refuses bad input and says when the store cannot search', async () => {
    const engine = await forkedEngine();
    await expect(engine.search('')).rejects.toThrow(/query is empty/);
    await expect(engine.search('* AND')).rejects.toThrow(/only operators or punctuation/);
    await expect(engine.search('x', { limit: -1 })).rejects.toThrow(/limit/);
    await expect(engine.search('x', { scope: 'everything' as never })).rejects.toThrow(/scope/);
    await expect(engine.search('x', { scope: 'chat', branch: 'main' })).rejects.toThrow(/branch/);
    await expect(engine.search('x', { branch: 'gone' })).rejects.toSatisfy((error) =>
      BranchNotFoundError.isInstance(error),
    );
    const plain = engineFor(newChatId(), 'u', withoutOptionalCapabilities(store));
    const error = await plain.search('quokka').catch((caught: unknown) => caught);
    expect(UnsupportedCapabilityError.isInstance(error)).toBe(true);
    expect((error as UnsupportedCapabilityError).capability).toBe('search');
  });
});

describe('search with prefix', () => {
  it('matches the last word as a prefix, as you type', async () => {
    const engine = engineFor(newChatId());
    engine.set(
      user('Write the fibonacci function', { id: 'f1' }),
      assistantText('Here is fib(n) in TypeScript.', { id: 'f2' }),
      user('And a lucas sequence?', { id: 'f3' }),
    );
    await engine.save();
    const ids = async (query: string, prefix?: boolean) =>
      (await engine.search(query, prefix === undefined ? {} : { prefix })).items
        .map((hit) => hit.messageId)
        .sort();
    expect(await ids('fib')).toEqual(['f2']);
    expect(await ids('fib', true)).toEqual(['f1', 'f2']);
    expect(await ids('f', true)).toEqual(['f1', 'f2']);
    expect(await ids('lucas seq', true)).toEqual(['f3']);
    expect(await ids('seq lucas', true)).toEqual([]);
    await expect(engine.search('fib', { prefix: 'yes' as never })).rejects.toThrow(/prefix/);
  });

  it('says when the store cannot match prefixes', async () => {
    const wholeWords = overrideStore(store, {
      capabilities: { ...store.capabilities, searchPrefix: false },
    });
    const engine = engineFor(newChatId(), 'u', wholeWords);
    engine.set(user('fibonacci', { id: 'x1' }));
    await engine.save();
    expect((await engine.search('fibonacci')).items).toHaveLength(1);
    const error = await engine.search('fib', { prefix: true }).catch((caught: unknown) => caught);
    expect(UnsupportedCapabilityError.isInstance(error)).toBe(true);
    expect((error as UnsupportedCapabilityError).capability).toBe('searchPrefix');
  });
});

describe('renameBranch', () => {
  it('renames a branch; the engine on it and the active branch follow, pending messages stay', async () => {
    const engine = await forkedEngine();
    expect(engine.branch).toBe('main-v2');
    engine.set(user('Pending while renaming', { id: 'p1' }));
    const renamed = await engine.renameBranch('main-v2', 'endangered');
    expect(renamed).toMatchObject({ name: 'endangered', headMessageId: 'a3' });
    expect(engine.branch).toBe('endangered');
    expect((await store.getChat(engine.chatId))?.activeBranch).toBe('endangered');
    await engine.save();
    expect(
      (await store.getHead({ chatId: engine.chatId, branch: 'endangered' })).headMessageId,
    ).toBe('p1');
    const fresh = engineFor(engine.chatId);
    const resolved = await fresh.resolve();
    expect(fresh.branch).toBe('endangered');
    expect(resolved.messages.map((message) => message.id)).toEqual(['q1', 'a1', 'q3', 'a3', 'p1']);
  });

  it('renames another branch without moving the engine, and refuses bad renames', async () => {
    const engine = await forkedEngine();
    await engine.renameBranch('main', 'trunk');
    expect(engine.branch).toBe('main-v2');
    expect((await store.listBranches(engine.chatId)).map((branch) => branch.name)).toEqual([
      'trunk',
      'main-v2',
    ]);
    await expect(engine.renameBranch('gone', 'x')).rejects.toSatisfy((error) =>
      BranchNotFoundError.isInstance(error),
    );
    await expect(engine.renameBranch('trunk', 'main-v2')).rejects.toSatisfy((error) =>
      BranchExistsError.isInstance(error),
    );
    await expect(engine.renameBranch('trunk', '')).rejects.toThrow(ValidationError);
    await expect(engine.renameBranch('trunk', 'trunk')).rejects.toThrow(/current name/);
  });

  it('another engine still on the old name gets a clear error and loses nothing', async () => {
    const engine = await forkedEngine();
    const other = engineFor(engine.chatId);
    await other.resolve();
    expect(other.branch).toBe('main-v2');
    await engine.renameBranch('main-v2', 'renamed');
    other.set(user('Written by the other engine', { id: 'o1' }));
    await expect(other.save()).rejects.toSatisfy((error) => BranchNotFoundError.isInstance(error));
    expect(await store.getMessage({ chatId: engine.chatId, messageId: 'o1' })).toBeNull();
    await other.switchBranch('renamed');
    other.set(user('Written by the other engine', { id: 'o1' }));
    await other.save();
    expect((await store.getHead({ chatId: engine.chatId, branch: 'renamed' })).headMessageId).toBe(
      'o1',
    );
  });
});

describe('deleteBranch and prune', () => {
  it('deletes a branch and its own messages, and moves an engine that was on it', async () => {
    const engine = await forkedEngine();
    const dry = await engine.deleteBranch('main-v2', { activate: 'main', dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, nodes: 2, branches: ['main-v2'] });
    expect(engine.branch).toBe('main-v2');
    await expect(engine.deleteBranch('main-v2')).rejects.toThrow(/activate is required/);
    engine.set(user('pending on the deleted branch', { id: 'dropped' }));
    const result = await engine.deleteBranch('main-v2', { activate: 'main' });
    expect(result).toMatchObject({ dryRun: false, nodes: 2, activeBranch: 'main' });
    expect(engine.branch).toBe('main');
    const { messages } = await engine.resolve();
    expect(messages.map((message) => message.id)).toEqual(['q1', 'a1', 'q2', 'a2']);
    expect((await engine.prune()).nodes).toBe(0);
  });

  it('prunes what deleted branches left behind, and says when the store cannot', async () => {
    const engine = await forkedEngine();
    await store.createCheckpoint({ chatId: engine.chatId, name: 'keep', messageId: 'a3' });
    await engine.deleteBranch('main-v2', { activate: 'main' });
    expect(await engine.prune({ dryRun: true })).toMatchObject({ nodes: 0 });
    await store.deleteCheckpoint({ chatId: engine.chatId, name: 'keep' });
    expect(await engine.prune({ dryRun: true })).toMatchObject({ nodes: 2, dryRun: true });
    expect(await engine.prune()).toMatchObject({ nodes: 2, dryRun: false });
    await expect(engine.prune({ dryRun: 'yes' as never })).rejects.toThrow(/dryRun/);
    const plain = engineFor(newChatId(), 'u', withoutOptionalCapabilities(store));
    await expect(plain.prune()).rejects.toThrow(/capabilities.retention/);
    await expect(plain.deleteBranch('main')).rejects.toThrow(/capabilities.retention/);
  });

  it("prunes every chat of a user in batches, never another user's", async () => {
    const chats: ContextEngine[] = [];
    for (let index = 0; index < 5; index += 1) chats.push(await forkedEngine(newChatId(), 'owner'));
    const stranger = await forkedEngine(newChatId(), 'stranger');
    // Leave each fork's two nodes behind: its branch goes while a checkpoint holds them, then
    // the checkpoint goes too.
    for (const engine of [...chats, stranger]) {
      await engine.switchBranch('main');
      await store.createCheckpoint({ chatId: engine.chatId, name: 'hold', messageId: 'a3' });
      expect((await engine.deleteBranch('main-v2')).nodes).toBe(0);
      await store.deleteCheckpoint({ chatId: engine.chatId, name: 'hold' });
    }
    const dry = await pruneUserChats(store, { userId: 'owner', dryRun: true, batchSize: 2 });
    expect(dry).toMatchObject({ dryRun: true, chats: 5, nodes: 10 });
    const done = await pruneUserChats(store, { userId: 'owner', batchSize: 2 });
    expect(done).toMatchObject({ dryRun: false, chats: 5, nodes: 10, bytes: dry.bytes });
    expect(done.results.map((result) => result.nodes)).toEqual([2, 2, 2, 2, 2]);
    expect((await stranger.prune({ dryRun: true })).nodes).toBe(2);
    await expect(pruneUserChats(store, { userId: 'owner', batchSize: 0 })).rejects.toThrow(
      /batchSize/,
    );
    await expect(pruneUserChats(store, { userId: '' })).rejects.toThrow(/userId/);
    await expect(
      pruneUserChats(withoutOptionalCapabilities(store), { userId: 'owner' }),
    ).rejects.toSatisfy((error) => UnsupportedCapabilityError.isInstance(error));
  });

  it('still prunes a chat the user writes to during the pass', async () => {
    const chats: ContextEngine[] = [];
    for (let index = 0; index < 4; index += 1) {
      const engine = await forkedEngine(newChatId(), 'writer');
      await engine.switchBranch('main');
      await store.createCheckpoint({ chatId: engine.chatId, name: 'hold', messageId: 'a3' });
      await engine.deleteBranch('main-v2');
      await store.deleteCheckpoint({ chatId: engine.chatId, name: 'hold' });
      chats.push(engine);
    }
    // Listed most recent first: the first chat made is the last one a pass reaches. While the
    // pass prunes the first chat it meets, the user writes to that last one, moving it in front.
    const oldest = chats[0] as ContextEngine;
    let wrote = false;
    const writing = overrideStore(store, {
      prune: async (input) => {
        if (!wrote) {
          wrote = true;
          oldest.set(user('a new turn while the pass runs', { id: 'late' }));
          await oldest.save();
        }
        return (store.prune as NonNullable<ContextStore['prune']>).call(store, input);
      },
    });
    const report = await pruneUserChats(writing, { userId: 'writer', batchSize: 1 });
    expect(wrote).toBe(true);
    expect(report.chats).toBe(4);
    expect(report.results.map((result) => result.nodes)).toEqual([2, 2, 2, 2]);
    for (const engine of chats) expect((await engine.prune({ dryRun: true })).nodes).toBe(0);
  });

  it('skips a chat deleted after it was listed', async () => {
    const first = await forkedEngine(newChatId(), 'deleter');
    const second = await forkedEngine(newChatId(), 'deleter');
    const deleting = overrideStore(store, {
      prune: async (input) => {
        // The listing (one page) holds both; the first one pruned deletes the other.
        await store.deleteChat(first.chatId);
        return (store.prune as NonNullable<ContextStore['prune']>).call(store, input);
      },
    });
    const report = await pruneUserChats(deleting, { userId: 'deleter', batchSize: 10 });
    expect(report.chats).toBe(1);
    expect(report.results.map((result) => result.chatId)).toEqual([second.chatId]);
  });
});
