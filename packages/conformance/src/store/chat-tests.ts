import {
  ChatNotFoundError,
  type ChatRecord,
  type ContextStore,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it, vi } from 'vitest';
import {
  appendMessages,
  expectRejection,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** Chats: create, load, ownership, update, list, delete, and the not-found rules. */
export function defineChatTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('chats', () => {
    it(
      'openChat creates a chat with an empty, active main branch',
      async () => {
        const store = harness.store();
        const chatId = uniqueId('chat');
        const userId = uniqueId('user');
        const opened = await store.openChat({ chatId, userId });
        expect(opened.created).toBe(true);
        expectChatShape(opened.chat);
        expect(opened.chat).toMatchObject({
          id: chatId,
          userId,
          title: null,
          metadata: {},
          activeBranch: 'main',
          rewrittenAt: 0,
        });
        expect(opened.branch).toMatchObject({ chatId, name: 'main', headMessageId: null });
        expect(await store.getChat(chatId)).toEqual(opened.chat);
        expect(await store.listBranches(chatId)).toEqual([opened.branch]);
        expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
          revision: opened.chat.revision,
          headMessageId: null,
          rewrittenAt: 0,
        });
      },
      timeout,
    );

    it(
      'openChat stores the title and metadata of a new chat',
      async () => {
        const store = harness.store();
        const metadata = {
          project: 'atlas',
          tags: ['a', 'b'],
          nested: { depth: 1 },
          flag: false,
          nothing: null,
        };
        const { chatId, opened } = await openFreshChat(store, { title: 'Planning', metadata });
        expect(opened.chat.title).toBe('Planning');
        expect(opened.chat.metadata).toEqual(metadata);
        expect((await store.getChat(chatId))?.metadata).toEqual(metadata);
      },
      timeout,
    );

    it(
      'openChat loads an existing chat as it is (a title passed again is for new chats only)',
      async () => {
        const store = harness.store();
        const { chatId, userId, opened } = await openFreshChat(store, { title: 'First' });
        await appendMessages(store, chatId, [uniqueId('m'), uniqueId('m')]);
        const before = await store.getChat(chatId);
        const again = await store.openChat({ chatId, userId, title: 'Second' });
        expect(again.created).toBe(false);
        expect(again.chat).toEqual(before);
        expect(again.chat.title).toBe('First');
        expect(again.chat.createdAt).toBe(opened.chat.createdAt);
        expect(again.branch).toEqual(await store.getBranch({ chatId, name: 'main' }));
      },
      timeout,
    );

    it(
      'openChat merges metadata given for an existing chat (shallow)',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store, {
          metadata: { keep: 1, replace: { x: 1 }, cleared: 'yes' },
        });
        const again = await store.openChat({
          chatId,
          userId,
          metadata: { replace: { y: 2 }, added: true, cleared: null },
        });
        const expected = { keep: 1, replace: { y: 2 }, added: true, cleared: null };
        expect(again.chat.metadata).toEqual(expected);
        expect((await store.getChat(chatId))?.metadata).toEqual(expected);
      },
      timeout,
    );

    it(
      'openChat returns the active branch, wherever it points',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const first = uniqueId('m');
        await appendMessages(store, chatId, [first, uniqueId('m')]);
        const fork = await store.createBranch({
          chatId,
          name: 'fork',
          headMessageId: first,
          activate: true,
        });
        const again = await store.openChat({ chatId, userId });
        expect(again.chat.activeBranch).toBe('fork');
        expect(again.branch).toEqual(fork);
      },
      timeout,
    );

    it(
      'openChat refuses another user with OwnershipError and changes nothing',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store, {
          title: 'Mine',
          metadata: { owner: 'me' },
        });
        await appendMessages(store, chatId, [uniqueId('m')]);
        const before = await snapshot(store, chatId);
        const intruder = uniqueId('intruder');
        const error = await expectRejection(
          () =>
            store.openChat({
              chatId,
              userId: intruder,
              title: 'Theirs',
              metadata: { owner: 'them' },
            }),
          OwnershipError,
        );
        expect(error.chatId).toBe(chatId);
        expect(error.userId).toBe(intruder);
        expect(await snapshot(store, chatId)).toEqual(before);
        const owner = await store.openChat({ chatId, userId });
        expect(owner.created).toBe(false);
        expect(owner.chat.metadata).toEqual({ owner: 'me' });
      },
      timeout,
    );

    it(
      'updateChat sets the title, clears it with null, and keeps it when omitted',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        expect((await store.updateChat({ chatId, title: 'Named' })).title).toBe('Named');
        expect((await store.updateChat({ chatId, metadata: { touched: true } })).title).toBe(
          'Named',
        );
        expect((await store.getChat(chatId))?.title).toBe('Named');
        expect((await store.updateChat({ chatId, title: null })).title).toBeNull();
        expect((await store.getChat(chatId))?.title).toBeNull();
        expect((await store.updateChat({ chatId, title: '' })).title).toBe('');
      },
      timeout,
    );

    it(
      'updateChat merges metadata shallowly; a key set to null stays, as null',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store, {
          metadata: { a: 1, b: { inner: 1 }, c: 'c' },
        });
        const updated = await store.updateChat({
          chatId,
          metadata: { b: { other: 2 }, c: null, d: [1, 2] },
        });
        const expected = { a: 1, b: { other: 2 }, c: null, d: [1, 2] };
        expect(updated.metadata).toEqual(expected);
        expect((await store.getChat(chatId))?.metadata).toEqual(expected);
        expect((await store.updateChat({ chatId, metadata: {} })).metadata).toEqual(expected);
      },
      timeout,
    );

    it(
      'updateChat returns the chat as stored and never moves updatedAt back',
      async () => {
        const store = harness.store();
        const { chatId, opened } = await openFreshChat(store);
        const updated = await store.updateChat({ chatId, title: 'T', metadata: { k: 'v' } });
        expect(updated).toEqual(await store.getChat(chatId));
        expectChatShape(updated);
        expect(updated.createdAt).toBe(opened.chat.createdAt);
        expect(updated.updatedAt).toBeGreaterThanOrEqual(opened.chat.updatedAt);
        expect(updated.revision).toBe(opened.chat.revision);
      },
      timeout,
    );

    it(
      'listChats pages through every chat of a user, most recently updated first, without gaps or duplicates',
      async () => {
        const store = harness.store();
        const userId = uniqueId('user');
        const base = uniqueId('listed');
        const ids = Array.from(
          { length: 7 },
          (_, index) => `${base}-${String(index).padStart(3, '0')}`,
        );
        for (const chatId of ids) await store.openChat({ chatId, userId });
        // Touch two older chats so the order is not simply creation order.
        await store.updateChat({ chatId: ids[1] as string, title: 'touched' });
        await appendMessages(store, ids[3] as string, [uniqueId('m')]);
        await openFreshChat(store);
        const seen = await listAll(store, userId, 3);
        expect(seen.pages).toBe(3);
        expect(seen.items.map((chat) => chat.id).sort()).toEqual([...ids].sort());
        expectListingOrder(seen.items);
        for (const chat of seen.items) expect(chat).toEqual(await store.getChat(chat.id));
      },
      timeout,
    );

    it(
      'listChats orders chats with the same updatedAt by id and pages across the tie',
      async () => {
        const store = harness.store();
        const userId = uniqueId('user');
        const base = uniqueId('tied');
        const ids = Array.from(
          { length: 9 },
          (_, index) => `${base}-${String(index).padStart(3, '0')}`,
        );
        // Stores that take time from the JS clock get identical timestamps; others are checked for order anyway.
        vi.useFakeTimers({ toFake: ['Date'] });
        try {
          vi.setSystemTime(Date.UTC(2031, 0, 1));
          for (const chatId of [...ids].reverse()) await store.openChat({ chatId, userId });
        } finally {
          vi.useRealTimers();
        }
        for (const limit of [1, 2, 4, 9, 100]) {
          const seen = await listAll(store, userId, limit);
          expect(seen.items.map((chat) => chat.id).sort()).toEqual([...ids].sort());
          expectListingOrder(seen.items);
          expect(seen.pages).toBe(Math.max(1, Math.ceil(ids.length / limit)));
        }
      },
      timeout,
    );

    it(
      'listChats returns 20 chats by default and an empty page for a user without chats',
      async () => {
        const store = harness.store();
        const userId = uniqueId('user');
        const base = uniqueId('many');
        for (let index = 0; index < 21; index += 1) {
          await store.openChat({ chatId: `${base}-${String(index).padStart(3, '0')}`, userId });
        }
        const first = await store.listChats({ userId });
        expect(first.items).toHaveLength(20);
        expect(first.nextCursor).toEqual(expect.any(String));
        const second = await store.listChats({ userId, cursor: first.nextCursor as string });
        expect(second.items).toHaveLength(1);
        expect(second.nextCursor).toBeNull();
        expect(await store.listChats({ userId: uniqueId('nobody') })).toEqual({
          items: [],
          nextCursor: null,
        });
      },
      timeout,
    );

    it(
      'deleteChat removes the chat and everything it owns',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store, {
          title: 'Doomed',
          metadata: { a: 1 },
        });
        const first = uniqueId('m');
        const second = uniqueId('m');
        await appendMessages(store, chatId, [first, second]);
        await store.createBranch({ chatId, name: 'side', headMessageId: first, activate: true });
        await store.createCheckpoint({ chatId, name: 'cp', messageId: second });
        expect(await store.deleteChat(chatId)).toBe(true);
        expect(await store.getChat(chatId)).toBeNull();
        expect(await store.deleteChat(chatId)).toBe(false);
        await expectRejection(() => store.getGraph(chatId), ChatNotFoundError);
        await expectRejection(
          () => store.getMessage({ chatId, messageId: first }),
          ChatNotFoundError,
        );
        expect((await store.listChats({ userId })).items).toEqual([]);
        // The id is free again: a new chat starts empty, with nothing left of the old one.
        const reborn = await store.openChat({ chatId, userId });
        expect(reborn.created).toBe(true);
        expect(reborn.chat).toMatchObject({
          title: null,
          metadata: {},
          activeBranch: 'main',
          rewrittenAt: 0,
        });
        expect(reborn.branch.headMessageId).toBeNull();
        const graph = await store.getGraph(chatId);
        expect(graph.nodes).toEqual([]);
        expect(graph.branches.map((branch) => branch.name)).toEqual(['main']);
        expect(graph.checkpoints).toEqual([]);
        expect(await store.getMessage({ chatId, messageId: first })).toBeNull();
        const recommitted = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: first, message: textMessage(first, 'again') }],
        });
        expect(recommitted.nodes[0]?.parentId).toBeNull();
        expect(recommitted.rewrittenAt).toBe(0);
      },
      timeout,
    );

    it(
      'deleteChat leaves other chats of the same user untouched',
      async () => {
        const store = harness.store();
        const userId = uniqueId('user');
        const keptId = uniqueId('chat');
        const goneId = uniqueId('chat');
        await store.openChat({ chatId: keptId, userId });
        await store.openChat({ chatId: goneId, userId });
        const shared = uniqueId('m');
        await appendMessages(store, keptId, [shared]);
        await appendMessages(store, goneId, [shared]);
        const before = await snapshot(store, keptId);
        expect(await store.deleteChat(goneId)).toBe(true);
        expect(await snapshot(store, keptId)).toEqual(before);
        expect((await store.listChats({ userId })).items.map((chat) => chat.id)).toEqual([keptId]);
      },
      timeout,
    );

    it(
      'every method throws ChatNotFoundError for a missing chat (getChat: null, deleteChat: false)',
      async () => {
        const store = harness.store();
        const chatId = uniqueId('missing');
        expect(await store.getChat(chatId)).toBeNull();
        expect(await store.deleteChat(chatId)).toBe(false);
        const calls: [string, () => Promise<unknown>][] = [
          ['updateChat', () => store.updateChat({ chatId, title: 'x' })],
          ['getHead', () => store.getHead({ chatId, branch: 'main' })],
          [
            'commit',
            () =>
              store.commit({
                chatId,
                branch: 'main',
                expectedHeadId: null,
                messages: [{ id: 'm', message: textMessage('m') }],
              }),
          ],
          ['getChain', () => store.getChain({ chatId, headMessageId: 'm' })],
          ['getMessage', () => store.getMessage({ chatId, messageId: 'm' })],
          ['createBranch', () => store.createBranch({ chatId, name: 'b', headMessageId: null })],
          ['getBranch', () => store.getBranch({ chatId, name: 'main' })],
          ['listBranches', () => store.listBranches(chatId)],
          ['setActiveBranch', () => store.setActiveBranch({ chatId, name: 'main' })],
          ['createCheckpoint', () => store.createCheckpoint({ chatId, name: 'c', messageId: 'm' })],
          ['getCheckpoint', () => store.getCheckpoint({ chatId, name: 'c' })],
          ['listCheckpoints', () => store.listCheckpoints(chatId)],
          ['deleteCheckpoint', () => store.deleteCheckpoint({ chatId, name: 'c' })],
          ['getGraph', () => store.getGraph(chatId)],
        ];
        for (const [method, call] of calls) {
          const error = await expectRejection(call, ChatNotFoundError).catch((failure: unknown) => {
            throw new Error(
              `${method}: ${failure instanceof Error ? failure.message : String(failure)}`,
            );
          });
          expect(error.chatId, method).toBe(chatId);
        }
        // Nothing above may have created the chat as a side effect.
        expect(await store.getChat(chatId)).toBeNull();
      },
      timeout,
    );
  });
}

/** The fields every chat record has, with sane types. */
function expectChatShape(chat: ChatRecord): void {
  expect(typeof chat.id).toBe('string');
  expect(typeof chat.userId).toBe('string');
  expect(chat.title === null || typeof chat.title === 'string').toBe(true);
  expect(typeof chat.metadata).toBe('object');
  expect(typeof chat.activeBranch).toBe('string');
  expect(Number.isSafeInteger(chat.revision) && chat.revision >= 0).toBe(true);
  expect(Number.isSafeInteger(chat.rewrittenAt) && chat.rewrittenAt >= 0).toBe(true);
  expect(chat.rewrittenAt).toBeLessThanOrEqual(chat.revision);
  expect(Number.isSafeInteger(chat.createdAt)).toBe(true);
  expect(Number.isSafeInteger(chat.updatedAt)).toBe(true);
  expect(chat.updatedAt).toBeGreaterThanOrEqual(chat.createdAt);
}

async function listAll(
  store: ContextStore,
  userId: string,
  limit: number,
): Promise<{ readonly items: ChatRecord[]; readonly pages: number }> {
  const items: ChatRecord[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.listChats({
      userId,
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    pages += 1;
    cursor = page.nextCursor ?? undefined;
    if (cursor !== undefined) expect(page.items).toHaveLength(limit);
    if (pages > 1000) expect.fail('listChats kept returning a cursor');
  } while (cursor !== undefined);
  expect(new Set(items.map((chat) => chat.id)).size).toBe(items.length);
  return { items, pages };
}

/** updatedAt descending, then id ascending (ids in these tests sort the same under any collation). */
function expectListingOrder(items: readonly ChatRecord[]): void {
  for (let index = 1; index < items.length; index += 1) {
    const previous = items[index - 1] as ChatRecord;
    const current = items[index] as ChatRecord;
    const inOrder =
      previous.updatedAt > current.updatedAt ||
      (previous.updatedAt === current.updatedAt && previous.id < current.id);
    expect(
      inOrder,
      `${previous.id}@${previous.updatedAt} listed before ${current.id}@${current.updatedAt}`,
    ).toBe(true);
  }
}
