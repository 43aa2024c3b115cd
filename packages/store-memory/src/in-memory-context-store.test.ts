import {
  HeadConflictError,
  type JsonObject,
  MessageIdConflictError,
  StoreError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { InMemoryContextStore } from './in-memory-context-store';

function text(id: string, body: string = id) {
  return { id, message: { id, role: 'user', parts: [{ type: 'text', text: body }] } };
}

describe('InMemoryContextStore', () => {
  it('declares v1, no persistence, single process, append, forkBranch, the context lane, search (with prefixes), renameBranch, retention, engine records, message versions and live replies', () => {
    const store = new InMemoryContextStore();
    expect(store.specificationVersion).toBe('v1');
    expect(store.capabilities).toEqual({
      persistent: false,
      multiProcess: false,
      search: true,
      searchPrefix: true,
      retention: true,
      liveReplies: true,
    });
    expect(Object.isFrozen(store.capabilities)).toBe(true);
  });

  it('serializes to a label, never to its data', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({
      chatId: 'secret-chat',
      userId: 'secret-user',
      metadata: { apiKey: 'x' },
    });
    expect(store.toJSON()).toBe('[InMemoryContextStore]');
    expect(JSON.stringify({ store })).toBe('{"store":"[InMemoryContextStore]"}');
  });

  it('keeps each instance to itself', async () => {
    const first = new InMemoryContextStore();
    const second = new InMemoryContextStore();
    await first.openChat({ chatId: 'c', userId: 'u' });
    expect(await second.getChat('c')).toBeNull();
    expect((await second.openChat({ chatId: 'c', userId: 'someone-else' })).created).toBe(true);
  });

  it('close() and Symbol.asyncDispose release the data; later calls fail with StoreError', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store[Symbol.asyncDispose]();
    await store.close();
    const error = await store.getChat('c').catch((caught: unknown) => caught);
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('getChat(chatId): this InMemoryContextStore is closed.');
    await expect(store.openChat({ chatId: 'c', userId: 'u' })).rejects.toThrow(/closed/);
  });

  it('copies metadata on the way in and out', async () => {
    const store = new InMemoryContextStore();
    const metadata: JsonObject = { nested: { list: [1] } };
    const opened = await store.openChat({ chatId: 'c', userId: 'u', metadata });
    ((metadata.nested as JsonObject).list as number[]).push(2);
    ((opened.chat.metadata.nested as JsonObject).list as number[]).push(3);
    const patch: JsonObject = { added: { deep: true } };
    const updated = await store.updateChat({ chatId: 'c', metadata: patch });
    (patch.added as JsonObject).deep = false;
    (updated.metadata.added as JsonObject).deep = 'changed';
    expect((await store.getChat('c'))?.metadata).toEqual({
      nested: { list: [1] },
      added: { deep: true },
    });
  });

  it('commits started in the same tick see one another: exactly one wins', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    const pending = ['a', 'b', 'c'].map((id) =>
      store.commit({ chatId: 'c', branch: 'main', expectedHeadId: null, messages: [text(id)] }),
    );
    const settled = await Promise.allSettled(pending);
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    for (const result of settled.slice(1)) {
      const reason = (result as PromiseRejectedResult).reason as HeadConflictError;
      expect(HeadConflictError.isInstance(reason)).toBe(true);
      expect(reason.currentHeadId).toBe('a');
    }
    expect((await store.getGraph('c')).nodes.map((node) => node.id)).toEqual(['a']);
  });

  it('refuses non-boolean activate and replace flags and a non-object input', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [text('a')],
    });
    await expect(
      store.createBranch({ chatId: 'c', name: 'b', headMessageId: 'a', activate: 'yes' as never }),
    ).rejects.toThrow('createBranch(input): activate must be a boolean, received string.');
    await expect(
      store.createCheckpoint({ chatId: 'c', name: 'p', messageId: 'a', replace: 1 as never }),
    ).rejects.toThrow('createCheckpoint(input): replace must be a boolean, received number.');
    const error = await store.getHead(null as never).catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('getHead(input): input must be an object.');
    expect(await store.listBranches('c')).toHaveLength(1);
    expect(await store.listCheckpoints('c')).toEqual([]);
  });

  it('a moved checkpoint lists as the newest', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [text('a'), text('b')],
    });
    await store.createCheckpoint({ chatId: 'c', name: 'first', messageId: 'a' });
    await store.createCheckpoint({ chatId: 'c', name: 'second', messageId: 'a' });
    await store.createCheckpoint({ chatId: 'c', name: 'first', messageId: 'b', replace: true });
    expect(
      (await store.listCheckpoints('c')).map((checkpoint) => [
        checkpoint.name,
        checkpoint.messageId,
      ]),
    ).toEqual([
      ['second', 'a'],
      ['first', 'b'],
    ]);
  });

  it('walks a 20,000-node chain page by page from any point', async () => {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    const ids = Array.from({ length: 20_000 }, (_, index) => `n${index}`);
    let head: string | null = null;
    for (let start = 0; start < ids.length; start += 2_000) {
      const result = await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: head,
        messages: ids.slice(start, start + 2_000).map((id) => text(id)),
      });
      head = result.headMessageId;
    }
    const newest = await store.getChain({ chatId: 'c', headMessageId: 'n19999', limit: 2 });
    expect(newest.nodes.map((node) => node.id)).toEqual(['n19998', 'n19999']);
    expect(newest.nextCursor).toBe('n19997');
    const middle = await store.getChain({ chatId: 'c', headMessageId: 'n10000', until: 'n9997' });
    expect(middle.nodes.map((node) => node.id)).toEqual(['n9998', 'n9999', 'n10000']);
    expect(middle.reachedUntil).toBe(true);
    const whole = await store.getChain({ chatId: 'c', headMessageId: head as string });
    expect(whole.nodes).toHaveLength(20_000);
    expect(whole.nodes[0]?.sequence).toBeLessThan(whole.nodes[1]?.sequence as number);
  });
});

describe('InMemoryContextStore append and forkBranch', () => {
  async function chatWith(ids: string[]): Promise<InMemoryContextStore> {
    const store = new InMemoryContextStore();
    await store.openChat({ chatId: 'c', userId: 'u' });
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: ids.map((id) => text(id)),
    });
    return store;
  }

  it('appends started in the same tick all land, in call order, each on the one before', async () => {
    const store = await chatWith(['root']);
    const results = await Promise.all(
      ['a', 'b', 'c'].map((id) =>
        store.append({ chatId: 'c', branch: 'main', messages: [text(id)] }),
      ),
    );
    expect(results.map((result) => [result.previousHeadId, result.headMessageId])).toEqual([
      ['root', 'a'],
      ['a', 'b'],
      ['b', 'c'],
    ]);
    expect(results.map((result) => result.revision)).toEqual([2, 3, 4]);
  });

  it('forks started in the same tick get consecutive names in call order', async () => {
    const store = await chatWith(['root']);
    const forks = await Promise.all(
      Array.from({ length: 3 }, () =>
        store.forkBranch({ chatId: 'c', from: 'main', headMessageId: 'root' }),
      ),
    );
    expect(forks.map((fork) => fork.name)).toEqual(['main-v2', 'main-v3', 'main-v4']);
  });

  it('names the id and both branches when an id of another branch is refused', async () => {
    const store = await chatWith(['a', 'b']);
    await store.createBranch({ chatId: 'c', name: 'side', headMessageId: 'a' });
    const error = await store
      .append({ chatId: 'c', branch: 'side', messages: [text('b', 'changed')] })
      .catch((caught: unknown) => caught);
    expect(MessageIdConflictError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'Message "b" already exists in chat "c", but not on branch "side": saving it would change another branch\'s history. Nothing was written; give the message a new id.',
    );
    expect((await store.getMessage({ chatId: 'c', messageId: 'b' }))?.message.parts).toEqual([
      { type: 'text', text: 'b' },
    ]);
  });

  it('refuses a fork whose next name would be too long, naming from, and creates nothing', async () => {
    const store = await chatWith(['a']);
    const from = 'f'.repeat(510);
    const error = await store
      .forkBranch({ chatId: 'c', from, headMessageId: 'a' })
      .catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as ValidationError).issues).toEqual([
      { path: 'from', message: 'the derived branch name is not a valid identifier' },
    ]);
    expect((error as Error).message).toContain(`would be named "${from}-v2"`);
    expect(await store.listBranches('c')).toHaveLength(1);
    // One character shorter fits exactly: 509 + "-v2" is 512.
    const fits = await store.forkBranch({ chatId: 'c', from: from.slice(1), headMessageId: 'a' });
    expect(fits.name).toHaveLength(512);
  });

  it('refuses append and forkBranch once closed', async () => {
    const store = await chatWith(['a']);
    await store.close();
    await expect(
      store.append({ chatId: 'c', branch: 'main', messages: [text('b')] }),
    ).rejects.toThrow('append(input): this InMemoryContextStore is closed.');
    await expect(
      store.forkBranch({ chatId: 'c', from: 'main', headMessageId: null }),
    ).rejects.toThrow('forkBranch(input): this InMemoryContextStore is closed.');
  });

  it('keeps an ended reply readable for endedReplyGraceMs of its clock, and refuses a grace out of bounds', async () => {
    for (const bad of [0, 29_999, 86_400_001, 1.5, '60000']) {
      expect(
        () => new InMemoryContextStore({ endedReplyGraceMs: bad as number }),
        String(bad),
      ).toThrow(/^InMemoryContextStore: endedReplyGraceMs expected an integer/);
    }
    const clock = { now: 1_000 };
    const store = new InMemoryContextStore({ clock: () => clock.now, endedReplyGraceMs: 45_000 });
    await store.openChat({ chatId: 'c', userId: 'u' });
    const start = { chatId: 'c', branch: 'main', afterNodeId: null, leaseMs: 1000 } as const;
    await store.startReply({ ...start, replyId: 'r', owner: 'o' });
    await store.appendReplyChunks({
      chatId: 'c',
      replyId: 'r',
      owner: 'o',
      from: 0,
      chunks: ['a', 'b'],
      leaseMs: 1000,
    });
    await store.endReply({ chatId: 'c', replyId: 'r', owner: 'o' });
    clock.now += 44_999;
    const read = await store.readReply({ chatId: 'c', replyId: 'r', from: 1 });
    expect(read?.record.endedAt).toBe(1_000);
    expect(read?.chunks).toEqual(['b']);
    clock.now += 1;
    expect(await store.readReply({ chatId: 'c', replyId: 'r' })).toBeNull();
    // A later end deletes it; a start of the same id before that replaced it with a fresh reply.
    await store.startReply({ ...start, replyId: 'other', owner: 'o' });
    await store.endReply({ chatId: 'c', replyId: 'other', owner: 'o' });
    expect(await store.readReply({ chatId: 'c', replyId: 'r' })).toBeNull();
    expect((await store.readReply({ chatId: 'c', replyId: 'other' }))?.record.endedAt).toBe(
      clock.now,
    );
  });
});
