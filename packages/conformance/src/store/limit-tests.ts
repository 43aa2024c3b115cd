import {
  MAX_IDENTIFIER_BYTES,
  MAX_JSON_DEPTH,
  type StoredMessage,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRefused,
  expectRejection,
  idOfBytes,
  messageOfDepth,
  nestedValue,
  openFreshChat,
  type StoreHarness,
  sequentialIds,
  snapshot,
  textEntries,
  textMessage,
  uniqueId,
} from './store-harness';

/**
 * The documented limits, exactly: identifiers up to {@link MAX_IDENTIFIER_BYTES} bytes of UTF-8,
 * JSON up to {@link MAX_JSON_DEPTH} levels, and `getChain` limits up to `MAX_SAFE_INTEGER`.
 */
export function defineLimitTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('limits', () => {
    it(
      `ids and names of exactly ${MAX_IDENTIFIER_BYTES} bytes of UTF-8 work end to end`,
      async () => {
        const store = harness.store();
        // Three-byte CJK characters: far fewer characters than bytes, so a store counting
        // characters, or a column sized in characters, shows here.
        const chatId = idOfBytes('chat');
        const userId = idOfBytes('user');
        const [first, second, third] = [idOfBytes('m1'), idOfBytes('m2'), idOfBytes('m3')];
        const branch = idOfBytes('branch');
        const checkpoint = idOfBytes('checkpoint');
        // Four-byte characters (surrogate pairs) to the byte: 128 emoji, 256 UTF-16 code units.
        const emoji = '😀'.repeat(MAX_IDENTIFIER_BYTES / 4);
        for (const id of [chatId, userId, first, branch, checkpoint]) {
          expect(new TextEncoder().encode(id).length).toBe(MAX_IDENTIFIER_BYTES);
        }
        const opened = await store.openChat({ chatId, userId, title: 'long ids' });
        expect(opened.chat).toMatchObject({ id: chatId, userId });
        expect((await store.openChat({ chatId, userId })).created).toBe(false);
        const committed = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: textEntries([first, second]),
        });
        expect(committed.nodes.map((node) => [node.id, node.parentId])).toEqual([
          [first, null],
          [second, first],
        ]);
        const created = await store.createBranch({ chatId, name: branch, headMessageId: first });
        expect(created).toMatchObject({ chatId, name: branch, headMessageId: first });
        await store.setActiveBranch({ chatId, name: branch });
        const onBranch = await store.commit({
          chatId,
          branch,
          expectedHeadId: first,
          messages: [
            { id: third, message: textMessage(third) },
            { id: first, message: textMessage(first, 'replaced') },
          ],
        });
        expect(onBranch.headMessageId).toBe(third);
        const appended = await store.append({
          chatId,
          branch,
          messages: textEntries([emoji]),
        });
        expect(appended).toMatchObject({ previousHeadId: third, headMessageId: emoji });
        expect((await store.getHead({ chatId, branch })).headMessageId).toBe(emoji);
        const chain = await store.getChain({ chatId, headMessageId: emoji, until: first });
        expect(chain.nodes.map((node) => node.id)).toEqual([third, emoji]);
        expect((await store.getMessage({ chatId, messageId: first }))?.message).toEqual(
          textMessage(first, 'replaced'),
        );
        await store.createCheckpoint({ chatId, name: checkpoint, messageId: second });
        expect((await store.getCheckpoint({ chatId, name: checkpoint }))?.messageId).toBe(second);
        const fork = await store.forkBranch({ chatId, from: 'main', headMessageId: third });
        expect(fork).toMatchObject({ name: 'main-v2', headMessageId: third });
        const graph = await store.getGraph(chatId);
        expect(graph.chat).toMatchObject({ id: chatId, userId, activeBranch: branch });
        expect(graph.branches.map((item) => item.name)).toContain(branch);
        expect(graph.checkpoints.map((item) => item.name)).toEqual([checkpoint]);
        expect((await store.listChats({ userId })).items.map((chat) => chat.id)).toEqual([chatId]);
        expect((await store.openChat({ chatId, userId })).branch.name).toBe(branch);
        expect(await store.deleteCheckpoint({ chatId, name: checkpoint })).toBe(true);
        expect(await store.deleteChat(chatId)).toBe(true);
        expect(await store.getChat(chatId)).toBeNull();
      },
      timeout,
    );

    it(
      `ids and names of ${MAX_IDENTIFIER_BYTES + 1} bytes are refused with ValidationError, wherever they go`,
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const [a, b] = [uniqueId('a'), uniqueId('b')];
        await appendMessages(store, chatId, [a, b]);
        const over = idOfBytes('over', MAX_IDENTIFIER_BYTES + 1);
        expect(over.length).toBeLessThan(MAX_IDENTIFIER_BYTES);
        const calls: [string, string, () => Promise<unknown>][] = [
          ['openChat chatId', 'chatId', () => store.openChat({ chatId: over, userId })],
          ['openChat userId', 'userId', () => store.openChat({ chatId, userId: over })],
          [
            'commit message id',
            'messages[0].id',
            () =>
              store.commit({
                chatId,
                branch: 'main',
                expectedHeadId: b,
                messages: textEntries([over]),
              }),
          ],
          [
            'createBranch name',
            'name',
            () => store.createBranch({ chatId, name: over, headMessageId: a }),
          ],
          [
            'createCheckpoint name',
            'name',
            () => store.createCheckpoint({ chatId, name: over, messageId: a }),
          ],
          [
            'getChain headMessageId',
            'headMessageId',
            () => store.getChain({ chatId, headMessageId: over }),
          ],
          [
            'append message id',
            'messages[0].id',
            () => store.append({ chatId, branch: 'main', messages: textEntries([over]) }),
          ],
          [
            'forkBranch from',
            'from',
            () => store.forkBranch({ chatId, from: over, headMessageId: a }),
          ],
        ];
        for (const [label, field, call] of calls)
          await expectRefused(store, chatId, label, field, call);
        await expectRejection(() => store.getChat(over), ValidationError);
        await expectRejection(() => store.listChats({ userId: over }), ValidationError);
      },
      timeout,
    );

    it(
      `JSON nested up to ${MAX_JSON_DEPTH} levels is stored; deeper is refused with ValidationError and nothing is written`,
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const head = uniqueId('head');
        await appendMessages(store, chatId, [head]);
        // At the limit: the message and chat metadata round-trip unchanged.
        const deepest = uniqueId('deepest');
        const atLimit = messageOfDepth(deepest, MAX_JSON_DEPTH);
        const stored = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: head,
          messages: [{ id: deepest, message: atLimit }],
        });
        expect(stored.nodes[0]?.message).toEqual(atLimit);
        expect((await store.getMessage({ chatId, messageId: deepest }))?.message).toEqual(atLimit);
        const metadata = { deep: nestedValue(MAX_JSON_DEPTH - 1) } as never;
        expect((await store.updateChat({ chatId, metadata })).metadata).toEqual(metadata);
        expect((await store.getChat(chatId))?.metadata).toEqual(metadata);
        // One level more, or thousands more: a ValidationError, never a stack overflow.
        for (const depth of [MAX_JSON_DEPTH + 1, 5_000]) {
          const id = uniqueId('deep');
          const commitDeep = (message: StoredMessage) => () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: deepest,
              messages: [...textEntries([uniqueId('ok')]), { id, message }],
            });
          await expectRefused(
            store,
            chatId,
            `a part ${depth} deep`,
            'messages[1]',
            commitDeep(messageOfDepth(id, depth)),
          );
          const arrays = {
            id,
            role: 'user',
            parts: [{ type: 'data-list', data: nestedArray(depth) }],
          };
          await expectRefused(
            store,
            chatId,
            `arrays ${depth} deep`,
            'messages[1]',
            commitDeep(arrays),
          );
          const inMetadata = {
            ...textMessage(id),
            metadata: { deep: nestedValue(depth) },
          } as never;
          await expectRefused(
            store,
            chatId,
            `message metadata ${depth} deep`,
            'metadata',
            commitDeep(inMetadata),
          );
          await expectRefused(store, chatId, `append ${depth} deep`, 'messages[0]', () =>
            store.append({
              chatId,
              branch: 'main',
              messages: [{ id, message: messageOfDepth(id, depth) }],
            }),
          );
          const deepMetadata = { deep: nestedValue(depth) } as never;
          await expectRefused(store, chatId, `updateChat metadata ${depth} deep`, 'metadata', () =>
            store.updateChat({ chatId, metadata: deepMetadata }),
          );
          await expectRefused(store, chatId, `openChat metadata ${depth} deep`, 'metadata', () =>
            store.openChat({ chatId, userId, metadata: deepMetadata }),
          );
          const newChat = uniqueId('chat');
          await expectRejection(
            () => store.openChat({ chatId: newChat, userId, metadata: deepMetadata }),
            ValidationError,
          );
          expect(await store.getChat(newChat)).toBeNull();
          expect(await store.getMessage({ chatId, messageId: id })).toBeNull();
        }
        // Replacing a node with a too-deep message keeps its old content.
        const before = await snapshot(store, chatId);
        await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: deepest,
              messages: [{ id: head, message: messageOfDepth(head, MAX_JSON_DEPTH + 1) }],
            }),
          ValidationError,
        );
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      slowTimeout,
    );

    it(
      'getChain takes limits past 32 bits up to MAX_SAFE_INTEGER and returns the whole chain',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = sequentialIds(uniqueId('big'), 6);
        await appendMessages(store, chatId, ids);
        const head = ids[5] as string;
        for (const limit of [2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER]) {
          const page = await store.getChain({ chatId, headMessageId: head, limit });
          expect(
            page.nodes.map((node) => node.id),
            `limit ${limit}`,
          ).toEqual(ids);
          expect(page).toMatchObject({ nextCursor: null, reachedUntil: false });
          const until = await store.getChain({
            chatId,
            headMessageId: head,
            limit,
            until: ids[1] as string,
          });
          expect(
            until.nodes.map((node) => node.id),
            `limit ${limit} with until`,
          ).toEqual(ids.slice(2));
          expect(until).toMatchObject({ nextCursor: null, reachedUntil: true });
        }
      },
      timeout,
    );
  });
}

/** `depth` arrays nested one in another around a string. */
function nestedArray(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
}
