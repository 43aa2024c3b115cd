import {
  HeadConflictError,
  type MessageNodeRecord,
  type StoredMessage,
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
import { uiMessageFixtures } from './ui-message-fixtures';

/** Message nodes: insert, chain, replace in place, ordering, round trips, isolation. */
export function defineMessageTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('message nodes', () => {
    it(
      'commit chains new nodes from the expected head, moves the head and bumps the revision by one',
      async () => {
        const store = harness.store();
        const { chatId, opened } = await openFreshChat(store);
        const [a, b, c] = [uniqueId('m'), uniqueId('m'), uniqueId('m')];
        const first = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [
            { id: a, message: textMessage(a, 'hello') },
            { id: b, message: textMessage(b, 'hi there', 'assistant') },
          ],
        });
        expect(first.headMessageId).toBe(b);
        expect(first.revision).toBe(opened.chat.revision + 1);
        expect(first.rewrittenAt).toBe(0);
        expect(first.nodes.map((node) => [node.chatId, node.id, node.parentId])).toEqual([
          [chatId, a, null],
          [chatId, b, a],
        ]);
        expectNodeShape(first.nodes);
        expect(first.nodes[0]?.message).toEqual(textMessage(a, 'hello'));
        expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
          revision: first.revision,
          headMessageId: b,
          rewrittenAt: 0,
        });
        const second = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: b,
          messages: [{ id: c, message: textMessage(c) }],
        });
        expect(second.nodes[0]?.parentId).toBe(b);
        expect(second.headMessageId).toBe(c);
        expect(second.revision).toBe(first.revision + 1);
        expect((second.nodes[0] as MessageNodeRecord).sequence).toBeGreaterThan(
          (first.nodes[1] as MessageNodeRecord).sequence,
        );
        const chat = await store.getChat(chatId);
        expect(chat?.revision).toBe(second.revision);
        expect(chat?.updatedAt).toBeGreaterThanOrEqual(opened.chat.updatedAt);
        const branch = await store.getBranch({ chatId, name: 'main' });
        expect(branch?.headMessageId).toBe(c);
        expect(branch?.updatedAt).toBeGreaterThanOrEqual(opened.branch.updatedAt);
        for (const node of [...first.nodes, ...second.nodes]) {
          expect(await store.getMessage({ chatId, messageId: node.id })).toEqual(node);
        }
        expect(await store.getMessage({ chatId, messageId: uniqueId('absent') })).toBeNull();
      },
      timeout,
    );

    it(
      'every UIMessage part kind and message metadata round-trips deep-equal',
      async () => {
        const store = harness.store();
        const together = await openFreshChat(store);
        const committed = await store.commit({
          chatId: together.chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: uiMessageFixtures.map((message) => ({ id: message.id, message })),
        });
        expect(committed.nodes.map((node) => node.message)).toEqual([...uiMessageFixtures]);
        for (const fixture of uiMessageFixtures) {
          const node = await store.getMessage({ chatId: together.chatId, messageId: fixture.id });
          expect(node?.message, fixture.id).toEqual(fixture);
        }
        const chain = await store.getChain({
          chatId: together.chatId,
          headMessageId: committed.headMessageId as string,
        });
        expect(chain.nodes.map((node) => node.message)).toEqual([...uiMessageFixtures]);
        const graph = await store.getGraph(together.chatId);
        expect(graph.nodes.map((node) => node.message)).toEqual([...uiMessageFixtures]);
        // One message per commit as well: the path a chat app takes turn by turn.
        const apart = await openFreshChat(store);
        let head: string | null = null;
        for (const message of uiMessageFixtures) {
          const result = await store.commit({
            chatId: apart.chatId,
            branch: 'main',
            expectedHeadId: head,
            messages: [{ id: message.id, message }],
          });
          head = result.headMessageId;
          expect(
            (await store.getMessage({ chatId: apart.chatId, messageId: message.id }))?.message,
          ).toEqual(message);
        }
      },
      timeout,
    );

    it(
      'keys beyond id, role, parts and metadata are kept as given',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const id = uniqueId('m');
        const message = {
          ...textMessage(id, 'with extras', 'assistant'),
          createdAt: '2031-01-01T00:00:00.000Z',
          annotations: [{ kind: 'cached', hits: 3 }],
          experimental: { nested: [null, true, 'x'] },
        };
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id, message }],
        });
        expect(result.nodes[0]?.message).toEqual(message);
        expect((await store.getMessage({ chatId, messageId: id }))?.message).toEqual(message);
      },
      timeout,
    );

    it(
      'an id that exists replaces the content in place, keeping parent, sequence and head',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, c] = [uniqueId('m'), uniqueId('m'), uniqueId('m')];
        const base = await appendMessages(store, chatId, [a, b, c]);
        const before = (await store.getMessage({ chatId, messageId: b })) as MessageNodeRecord;
        const corrected = {
          ...textMessage(b, 'corrected reply', 'assistant'),
          metadata: { corrected: true },
        };
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: c,
          messages: [{ id: b, message: corrected }],
        });
        expect(result.headMessageId).toBe(c);
        expect(result.revision).toBe(base.revision + 1);
        expect(result.rewrittenAt).toBe(result.revision);
        expect(result.nodes).toHaveLength(1);
        const after = result.nodes[0] as MessageNodeRecord;
        expect(after).toMatchObject({
          chatId,
          id: b,
          parentId: a,
          sequence: before.sequence,
          createdAt: before.createdAt,
        });
        expect(after.message).toEqual(corrected);
        expect(after.updatedAt).toBeGreaterThanOrEqual(before.updatedAt);
        expect(await store.getMessage({ chatId, messageId: b })).toEqual(after);
        expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
          revision: result.revision,
          headMessageId: c,
          rewrittenAt: result.revision,
        });
        const chain = await store.getChain({ chatId, headMessageId: c });
        expect(chain.nodes.map((node) => node.id)).toEqual([a, b, c]);
        expect(chain.nodes[1]?.message).toEqual(corrected);
        expect((await store.getGraph(chatId)).nodes).toHaveLength(3);
      },
      timeout,
    );

    it(
      'a commit mixing new and existing ids chains the new ones and replaces the others',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, x, y] = [uniqueId('m'), uniqueId('m'), uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: b,
          messages: [
            { id: x, message: textMessage(x, 'new one') },
            { id: a, message: textMessage(a, 'rewritten first') },
            { id: y, message: textMessage(y, 'new two') },
          ],
        });
        expect(result.nodes.map((node) => [node.id, node.parentId])).toEqual([
          [x, b],
          [a, null],
          [y, x],
        ]);
        expect(result.headMessageId).toBe(y);
        expect(result.rewrittenAt).toBe(result.revision);
        const chain = await store.getChain({ chatId, headMessageId: y });
        expect(chain.nodes.map((node) => node.id)).toEqual([a, b, x, y]);
        expect(chain.nodes[0]?.message).toEqual(textMessage(a, 'rewritten first'));
      },
      timeout,
    );

    it(
      'replacing a shared ancestor from a fork changes its content for both branches, and no head',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        await store.createBranch({ chatId, name: 'side', headMessageId: a });
        const result = await store.commit({
          chatId,
          branch: 'side',
          expectedHeadId: a,
          messages: [{ id: a, message: textMessage(a, 'edited from side') }],
        });
        expect(result.headMessageId).toBe(a);
        expect((await store.getBranch({ chatId, name: 'side' }))?.headMessageId).toBe(a);
        expect((await store.getBranch({ chatId, name: 'main' }))?.headMessageId).toBe(b);
        const mainChain = await store.getChain({ chatId, headMessageId: b });
        expect(mainChain.nodes[0]?.message).toEqual(textMessage(a, 'edited from side'));
      },
      timeout,
    );

    it(
      'a stale expected head refuses the whole commit, replacements included, and reports the head',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, c] = [uniqueId('m'), uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        await store.createBranch({ chatId, name: 'empty', headMessageId: null });
        const before = await snapshot(store, chatId);
        const stale = await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: a,
              messages: [
                { id: b, message: textMessage(b, 'rewrite') },
                { id: c, message: textMessage(c) },
              ],
            }),
          HeadConflictError,
        );
        expect(stale).toMatchObject({
          chatId,
          branch: 'main',
          expectedHeadId: a,
          currentHeadId: b,
        });
        const fromNull = await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: null,
              messages: [{ id: c, message: textMessage(c) }],
            }),
          HeadConflictError,
        );
        expect(fromNull).toMatchObject({ expectedHeadId: null, currentHeadId: b });
        const onEmpty = await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'empty',
              expectedHeadId: b,
              messages: [{ id: c, message: textMessage(c) }],
            }),
          HeadConflictError,
        );
        expect(onEmpty).toMatchObject({ branch: 'empty', expectedHeadId: b, currentHeadId: null });
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );

    it(
      'rewrittenAt keeps the revision of the last replacing commit',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a]);
        const replaced = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: a,
          messages: [{ id: a, message: textMessage(a, 'v2') }],
        });
        const appended = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: a,
          messages: [{ id: b, message: textMessage(b) }],
        });
        expect(appended.revision).toBe(replaced.revision + 1);
        expect(appended.rewrittenAt).toBe(replaced.revision);
        const chat = await store.getChat(chatId);
        expect(chat).toMatchObject({ revision: appended.revision, rewrittenAt: replaced.revision });
        expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
          revision: appended.revision,
          headMessageId: b,
          rewrittenAt: replaced.revision,
        });
      },
      timeout,
    );

    it(
      'sequence orders nodes by insertion across commits and branches, even within one millisecond',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const inserted: string[] = [];
        // Stores that take time from the JS clock see one single instant; order must come from sequence.
        vi.useFakeTimers({ toFake: ['Date'] });
        try {
          vi.setSystemTime(Date.UTC(2030, 5, 1));
          const first = sequentialBatch('s1', 3);
          await appendMessages(store, chatId, first);
          inserted.push(...first);
          await store.createBranch({ chatId, name: 'other', headMessageId: first[0] as string });
          for (let round = 0; round < 4; round += 1) {
            const onMain = uniqueId(`z${round}`);
            await appendMessages(store, chatId, [onMain]);
            inserted.push(onMain);
            const onOther = uniqueId(`a${round}`);
            await appendMessages(store, chatId, [onOther], 'other');
            inserted.push(onOther);
          }
        } finally {
          vi.useRealTimers();
        }
        const graph = await store.getGraph(chatId);
        expect(graph.nodes.map((node) => node.id)).toEqual(inserted);
        const sequences = graph.nodes.map((node) => node.sequence);
        for (let index = 1; index < sequences.length; index += 1) {
          expect(sequences[index]).toBeGreaterThan(sequences[index - 1] as number);
        }
        const mainChain = await store.getChain({
          chatId,
          headMessageId: (await store.getHead({ chatId, branch: 'main' })).headMessageId as string,
        });
        expect(mainChain.nodes.map((node) => node.id)).toEqual(
          inserted.filter((id) => !id.startsWith('a')),
        );
      },
      timeout,
    );

    it(
      'the same message id in two chats is two independent nodes',
      async () => {
        const store = harness.store();
        const left = await openFreshChat(store);
        const right = await openFreshChat(store);
        const shared = uniqueId('shared');
        await store.commit({
          chatId: left.chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: shared, message: textMessage(shared, 'left') }],
        });
        await store.commit({
          chatId: right.chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: shared, message: textMessage(shared, 'right') }],
        });
        const rightBefore = await snapshot(store, right.chatId);
        expect(
          (await store.getMessage({ chatId: left.chatId, messageId: shared }))?.message,
        ).toEqual(textMessage(shared, 'left'));
        expect(rightBefore.nodes.map((node) => node.message)).toEqual([
          textMessage(shared, 'right'),
        ]);
        // A replace, a branch, a checkpoint and a delete in one chat leave the other exactly as it was.
        await store.commit({
          chatId: left.chatId,
          branch: 'main',
          expectedHeadId: shared,
          messages: [{ id: shared, message: textMessage(shared, 'left v2') }],
        });
        await store.createBranch({
          chatId: left.chatId,
          name: 'side',
          headMessageId: shared,
          activate: true,
        });
        await store.createCheckpoint({ chatId: left.chatId, name: 'cp', messageId: shared });
        expect(await snapshot(store, right.chatId)).toEqual(rightBefore);
        expect(await store.getBranch({ chatId: right.chatId, name: 'side' })).toBeNull();
        expect(await store.getCheckpoint({ chatId: right.chatId, name: 'cp' })).toBeNull();
        await store.deleteChat(left.chatId);
        expect(await snapshot(store, right.chatId)).toEqual(rightBefore);
      },
      timeout,
    );

    it(
      'changing objects passed in or read back never changes what is stored',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store, { metadata: { list: [1, 2] } });
        const id = uniqueId('m');
        const original = {
          id,
          role: 'user',
          parts: [{ type: 'text', text: 'original' }],
          metadata: { tags: ['x'] },
        };
        const passed = JSON.parse(JSON.stringify(original)) as {
          parts: { text: string }[];
          metadata: { tags: string[] };
        };
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id, message: passed as unknown as StoredMessage }],
        });
        tryMutate(() => {
          (passed.parts[0] as { text: string }).text = 'changed after commit';
          passed.metadata.tags.push('y');
        });
        tryMutate(() => {
          ((result.nodes[0]?.message.parts[0] ?? {}) as { text: string }).text = 'changed result';
        });
        const read = (await store.getMessage({ chatId, messageId: id })) as MessageNodeRecord;
        expect(read.message).toEqual(original);
        tryMutate(() => {
          ((read.message.parts[0] ?? {}) as { text: string }).text = 'changed read';
          (read.message.metadata as { tags: string[] }).tags.length = 0;
        });
        const chat = await store.getChat(chatId);
        tryMutate(() => {
          (chat?.metadata.list as number[] | undefined)?.push(3);
        });
        expect((await store.getMessage({ chatId, messageId: id }))?.message).toEqual(original);
        expect((await store.getChain({ chatId, headMessageId: id })).nodes[0]?.message).toEqual(
          original,
        );
        expect((await store.getChat(chatId))?.metadata).toEqual({ list: [1, 2] });
      },
      timeout,
    );
  });
}

/** Ids sharing a prefix and length, numbered in order. */
function sequentialBatch(prefix: string, count: number): string[] {
  const base = uniqueId(prefix);
  return Array.from({ length: count }, (_, index) => `${base}-${index}`);
}

/** A store may hand back frozen objects; a refused mutation is as good as an ignored one. */
function tryMutate(mutate: () => void): void {
  try {
    mutate();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

function expectNodeShape(nodes: readonly MessageNodeRecord[]): void {
  for (const node of nodes) {
    expect(Number.isSafeInteger(node.sequence)).toBe(true);
    expect(Number.isSafeInteger(node.createdAt)).toBe(true);
    expect(Number.isSafeInteger(node.updatedAt)).toBe(true);
    expect(node.updatedAt).toBeGreaterThanOrEqual(node.createdAt);
    expect(node.message.id).toBe(node.id);
  }
}
