import { env, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import type { ChatRecord } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import readme from '../../README.md?raw';
import type { TestChatObject } from '../__fixtures__/test-worker';
import {
  type ListedChatObject,
  searchEverywhere,
  type UserObject,
} from '../__fixtures__/user-chats';
import example from '../__fixtures__/user-chats.ts?raw';
import type { DurableObjectContextStore } from '../durable-object-context-store';
import { ChatListPublisher } from './chat-list-publisher';
import type { ChatListUpdate } from './durable-object-chat-list';

const bindings = env as unknown as {
  readonly LISTED_CHATS: DurableObjectNamespace<ListedChatObject>;
  readonly USERS: DurableObjectNamespace<UserObject>;
  readonly TEST_CHATS: DurableObjectNamespace<TestChatObject>;
};

const chatObject = (chatId: string) =>
  bindings.LISTED_CHATS.get(bindings.LISTED_CHATS.idFromName(chatId));
const userObject = (userId: string) => bindings.USERS.get(bindings.USERS.idFromName(userId));

const text = (id: string, words: string) => ({
  id,
  message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text: words }] },
});

/** Opens the chat in its own object, commits one message, and waits for the list's update. */
async function writeChat(chatId: string, userId: string, words: string): Promise<boolean> {
  await chatObject(chatId).say(chatId, userId, words);
  return runInDurableObject(chatObject(chatId), (object) => object.publisher.settled());
}

const listOf = (userId: string, input: { limit?: number; cursor?: string } = {}) =>
  runInDurableObject(userObject(userId), (object) => object.list.list({ userId, ...input }));

describe('a user chat list kept by the chat objects', () => {
  it('lists each chat as its own object last wrote it, most recent first, a page at a time', async () => {
    const userId = `u-${crypto.randomUUID()}`;
    expect(await writeChat(`a-${userId}`, userId, 'first chat')).toBe(true);
    expect(await writeChat(`b-${userId}`, userId, 'second chat')).toBe(true);
    expect(await writeChat(`a-${userId}`, userId, 'first chat again')).toBe(true);

    const all = await listOf(userId);
    expect(all.items.map((chat) => [chat.id, chat.revision])).toEqual([
      [`a-${userId}`, 2],
      [`b-${userId}`, 1],
    ]);
    // The records are the chat objects' own: what `getChat` answers there.
    const inObject = await runInDurableObject(chatObject(`a-${userId}`), (object) =>
      object.store.getChat(`a-${userId}`),
    );
    expect(all.items[0]).toEqual(inObject);

    const first = await listOf(userId, { limit: 1 });
    expect(first.items.map((chat) => chat.id)).toEqual([`a-${userId}`]);
    const second = await listOf(userId, { limit: 1, cursor: first.nextCursor as string });
    expect(second.items.map((chat) => chat.id)).toEqual([`b-${userId}`]);
    expect(second.nextCursor).toBeNull();
    // Another user's list holds none of them.
    expect((await listOf(`other-${userId}`)).items).toEqual([]);
  });

  it('drops a deleted chat, and a late record of it never brings it back', async () => {
    const userId = `u-${crypto.randomUUID()}`;
    const chatId = `gone-${userId}`;
    await writeChat(chatId, userId, 'soon deleted');
    const before = (await listOf(userId)).items[0] as ChatRecord;
    // A new instance of the object deletes it: its first write, and it still tells the list.
    await evictDurableObject(chatObject(chatId));
    const settled = await runInDurableObject(chatObject(chatId), async (object) => {
      await object.store.deleteChat(chatId);
      return object.publisher.settled();
    });
    expect(settled).toBe(true);
    expect((await listOf(userId)).items).toEqual([]);
    // The record sent before the delete, arriving again (a retry): refused.
    const late = await runInDurableObject(userObject(userId), (object) =>
      object.list.apply({ type: 'chat', chat: before }),
    );
    expect(late).toBe(false);
    expect((await listOf(userId)).items).toEqual([]);
  });

  it('applies updates idempotently: a duplicate or an older record changes nothing', async () => {
    const userId = `u-${crypto.randomUUID()}`;
    const chat: ChatRecord = {
      id: `c-${userId}`,
      userId,
      title: null,
      metadata: {},
      activeBranch: 'main',
      revision: 3,
      rewrittenAt: 0,
      createdAt: 1_000,
      updatedAt: 2_000,
    };
    const outcomes = await runInDurableObject(userObject(userId), (object) => [
      object.list.apply({ type: 'chat', chat }),
      object.list.apply({ type: 'chat', chat }),
      object.list.apply({ type: 'chat', chat: { ...chat, revision: 2, updatedAt: 1_500 } }),
      object.list.apply({ type: 'chat', chat: { ...chat, title: 'newer', updatedAt: 2_001 } }),
      object.list.list({ userId }).items,
    ]);
    expect(outcomes.slice(0, 4)).toEqual([true, false, false, true]);
    expect(outcomes[4]).toEqual([{ ...chat, title: 'newer', updatedAt: 2_001 }]);
  });

  it('keeps a chat pending while its user object cannot be reached, and sends it on publish()', async () => {
    const userId = `u-${crypto.randomUUID()}`;
    const chatId = `p-${userId}`;
    const stub = bindings.TEST_CHATS.get(bindings.TEST_CHATS.idFromName(chatId));
    const state = await runInDurableObject(stub, async (object, objectState) => {
      const store = object.stores[0] as DurableObjectContextStore;
      let reachable = false;
      const sent: ChatListUpdate[] = [];
      const errors: string[] = [];
      const publisher = new ChatListPublisher(objectState.storage, store, {
        send: async (update) => {
          if (!reachable) throw new Error('the user object is unreachable');
          sent.push(update);
          return userObject(userId).apply(update);
        },
        onError: (error) => errors.push((error as Error).message),
      });
      const { branch } = await store.openChat({ chatId, userId });
      await store.append({ chatId, branch: branch.name, messages: [text('m1', 'hello')] });
      const settled = await publisher.settled();
      const pending = publisher.pending();
      reachable = true;
      const published = await publisher.publish();
      publisher.close();
      // Closed: later writes are not sent.
      await store.append({ chatId, branch: branch.name, messages: [text('m2', 'unsent')] });
      await publisher.settled();
      return {
        settled,
        pending,
        errors: [...new Set(errors)],
        published,
        left: publisher.pending(),
        sent: sent.length,
      };
    });
    expect(state).toEqual({
      settled: false,
      pending: [chatId],
      errors: ['the user object is unreachable'],
      published: true,
      left: [],
      sent: 1,
    });
    expect((await listOf(userId)).items.map((chat) => [chat.id, chat.revision])).toEqual([
      [chatId, 1],
    ]);
  });

  it('refuses a malformed update with ValidationError and leaves the list as it was', async () => {
    const userId = `u-${crypto.randomUUID()}`;
    await writeChat(`k-${userId}`, userId, 'kept');
    const before = await listOf(userId);
    const hostile: unknown[] = [
      null,
      { type: 'drop table' },
      { type: 'chat', chat: { id: "x'; DROP TABLE ctxgraph_chat_list; --", userId } },
      { type: 'chat', chat: { ...before.items[0], revision: -1 } },
      { type: 'chat', chat: { ...before.items[0], metadata: [] } },
      { type: 'removed', chatId: `k-${userId}`, userId, at: 'now' },
    ];
    const names = await runInDurableObject(userObject(userId), (object) =>
      hostile.map((update) => {
        try {
          object.list.apply(update as ChatListUpdate);
          return 'applied';
        } catch (error) {
          return (error as Error).name;
        }
      }),
    );
    expect(names).toEqual(hostile.map(() => 'ValidationError'));
    expect(await listOf(userId)).toEqual(before);
    await expect(listOf(userId, { cursor: 'not a cursor' })).rejects.toThrow(/cursor/);
  });
});

describe("the README's chat list and user-wide search", () => {
  it('searches every chat of the user through their objects, best first', async () => {
    const userId = `u-${crypto.randomUUID()}`;
    await writeChat(`s1-${userId}`, userId, 'the weather in Paris');
    await writeChat(`s2-${userId}`, userId, 'Paris, Paris: the weather again');
    await writeChat(`s3-${userId}`, userId, 'nothing to find');
    const page = await searchEverywhere(bindings as never, userId, 'paris weather');
    expect(page.failedChats).toEqual([]);
    expect(page.items.map((hit) => [hit.chatId, hit.snippet])).toEqual([
      [`s2-${userId}`, 'Paris, Paris: the weather again'],
      [`s1-${userId}`, 'the weather in Paris'],
    ]);
    // Another user's search finds none of them.
    expect((await searchEverywhere(bindings as never, `x-${userId}`, 'paris')).items).toEqual([]);
  });

  it('is this file, as written', () => {
    expect(readme).toContain(`\`\`\`ts\n${example.trimEnd()}\n\`\`\``);
  });
});
