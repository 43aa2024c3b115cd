import {
  type CommitMessage,
  type CommitResult,
  type ContextStore,
  HeadConflictError,
  MAX_IDENTIFIER_LENGTH,
  type StoredMessage,
} from '@ctxgraph/fragments-core';
import { versionNodeId } from '@ctxgraph/fragments-core/store-kit';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRefused,
  expectRejection,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** A new version of message `messageId` with this text: the store allocates its node id. */
function newVersion(messageId: string, text: string, role = 'user'): CommitMessage {
  return { id: messageId, message: textMessage(messageId, text, role), newVersion: true };
}

/** The ids `<messageId>~<from>` … `<messageId>~<to>`. */
function versionIds(messageId: string, from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, index) => `${messageId}~${from + index}`);
}

/** The node ids holding `messageId`, newest first (every one of them, by pages of 100 nodes). */
async function nodeIdsOf(
  store: ContextStore,
  chatId: string,
  messageId: string,
): Promise<string[]> {
  const graph = await store.getGraph(chatId);
  const newest = await store.findMessageNodes({ chatId, messageId, limit: 100 });
  const all = graph.nodes
    .filter((node) => node.message.id === messageId)
    .sort((left, right) => right.sequence - left.sequence)
    .map((node) => node.id);
  // The index gives the newest 100 of them, in the same order.
  expect(newest.map((node) => node.id)).toEqual(all.slice(0, 100));
  return all;
}

/**
 * New versions whose node ids the store allocates (`CommitMessage.newVersion`): any number of them, one after the other or all at once, each
 * with its own id `<messageId>~<n>`, never a replacement, refused with nothing written where
 * the input is wrong.
 */
export function defineVersionIdTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('message versions: node ids the store allocates', () => {
    it(
      '150 successive edits of one message each get a new version with its own id, <id>~2 to <id>~151',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u1, a1, u2] = [uniqueId('u1'), uniqueId('a1'), uniqueId('u2')];
        await appendMessages(store, chatId, [u1, a1, u2]);
        const count = 150;
        const allocated: string[] = [];
        for (let index = 0; index < count; index += 1) {
          // Each edit is a version of u2 at its parent, on a branch of its own.
          const result = await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: a1,
            fork: { from: 'main' },
            messages: [newVersion(u2, `edit ${index + 2}`)],
          });
          const node = result.nodes[0];
          expect(node?.message).toEqual(textMessage(u2, `edit ${index + 2}`));
          expect(node?.parentId).toBe(a1);
          expect(result.headMessageId).toBe(node?.id);
          allocated.push(node?.id as string);
        }
        expect(allocated).toEqual(versionIds(u2, 2, count + 1));
        expect(new Set(allocated).size).toBe(count);
        expect(await nodeIdsOf(store, chatId, u2)).toEqual([...allocated].reverse().concat(u2));
        // Every version reads back as written, the original untouched.
        const last = allocated.at(-1) as string;
        expect((await store.getMessage({ chatId, messageId: last }))?.message).toEqual(
          textMessage(u2, `edit ${count + 1}`),
        );
        expect((await store.getMessage({ chatId, messageId: u2 }))?.message).toEqual(
          textMessage(u2, `turn 2 (${u2})`),
        );
        const chain = await store.getChain({ chatId, headMessageId: last });
        expect(chain.nodes.map((node) => node.id)).toEqual([u1, a1, last]);
      },
      slowTimeout,
    );

    it(
      'concurrent edits of one message (12, over two store objects when the store is multi-process) all succeed with distinct ids',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a] = [uniqueId('u'), uniqueId('a')];
        await appendMessages(store, chatId, [u, a]);
        // One version already there, so the race starts at ~3.
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          fork: { from: 'main' },
          messages: [newVersion(u, 'first edit')],
        });
        const stores: ContextStore[] = [store];
        const race = async (): Promise<void> => {
          const count = 12;
          const results = await Promise.all(
            Array.from({ length: count }, (_, index) => {
              const writer = stores[index % stores.length] as ContextStore;
              // Half of them fork-commits at the root (an edit of the first message), half
              // plain commits on empty branches of their own, so both writes allocate at once.
              if (index % 2 === 0)
                return writer.commit({
                  chatId,
                  branch: 'main',
                  expectedHeadId: null,
                  fork: { from: 'main' },
                  messages: [newVersion(u, `edit ${index}`)],
                });
              return writer
                .createBranch({ chatId, name: uniqueId('edit'), headMessageId: null })
                .then((branch) =>
                  writer.commit({
                    chatId,
                    branch: branch.name,
                    expectedHeadId: null,
                    messages: [newVersion(u, `edit ${index}`)],
                  }),
                );
            }),
          );
          const ids = results.map((result: CommitResult) => result.nodes[0]?.id as string);
          expect(new Set(ids).size).toBe(count);
          expect([...ids].sort()).toEqual(versionIds(u, 3, count + 2).sort());
          for (const [index, result] of results.entries()) {
            const node = await store.getMessage({ chatId, messageId: ids[index] as string });
            expect(node?.message).toEqual(textMessage(u, `edit ${index}`));
            expect(node?.parentId).toBeNull();
            expect(result.headMessageId).toBe(ids[index]);
          }
          expect(await nodeIdsOf(store, chatId, u)).toHaveLength(count + 2);
        };
        if (store.capabilities.multiProcess === true && harness.options.reopenStore !== undefined) {
          await harness.withReopened(store, async (reopened) => {
            stores.push(reopened);
            await race();
          });
        } else {
          await race();
        }
      },
      slowTimeout,
    );

    it(
      'a new version is a new node, never a replacement; its id goes past taken ids, other entries and the newest version, and is short when long',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a] = [uniqueId('u'), uniqueId('a')];
        await appendMessages(store, chatId, [u, a]);
        // A new version of the head's own message, on the same branch: a child, not a replace.
        const child = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: a,
          messages: [newVersion(a, 'a again', 'assistant')],
        });
        expect(child.nodes.map((node) => [node.id, node.parentId])).toEqual([[`${a}~2`, a]]);
        expect(child.rewrittenAt).toBeLessThan(child.revision);
        expect((await store.getMessage({ chatId, messageId: a }))?.message).toEqual(
          textMessage(a, `turn 1 (${a})`, 'assistant'),
        );
        // `<u>~2` is taken by a message of its own; `<u>~3` is the id of another entry of the
        // write; `<u>~4` is free.
        const other = `${u}~2`;
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: `${a}~2`,
          messages: [{ id: other, message: textMessage(other, 'not a version of u') }],
        });
        const mixed = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: other,
          messages: [
            newVersion(u, 'u, version 4'),
            { id: `${u}~3`, message: textMessage(`${u}~3`, 'another message') },
          ],
        });
        expect(mixed.nodes.map((node) => [node.id, node.message.id])).toEqual([
          [`${u}~4`, u],
          [`${u}~3`, `${u}~3`],
        ]);
        // The next version goes on from the newest one (~9, written by its id), not from a gap.
        const explicit = `${u}~9`;
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          fork: { from: 'main' },
          messages: [{ id: explicit, message: textMessage(u, 'u, version 9') }],
        });
        const after = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          fork: { from: 'main' },
          messages: [newVersion(u, 'u, version 10')],
        });
        expect(after.nodes[0]?.id).toBe(`${u}~10`);
        // A message id with no room for `~<n>`: the short form.
        const long = `${uniqueId('long')}-`.padEnd(MAX_IDENTIFIER_LENGTH, 'x');
        await appendMessages(store, chatId, [long]);
        const versions: string[] = [];
        for (let index = 0; index < 2; index += 1) {
          const result = await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: null,
            fork: { from: 'main' },
            messages: [newVersion(long, `long, edit ${index}`)],
          });
          versions.push(result.nodes[0]?.id as string);
        }
        expect(versions).toEqual([versionNodeId(long, 2), versionNodeId(long, 3)]);
        expect(versions[0]).toMatch(/^~2~[0-9a-f]{8}$/);
        expect(
          (await store.getMessage({ chatId, messageId: versions[1] as string }))?.message,
        ).toEqual(textMessage(long, 'long, edit 1'));
      },
      timeout,
    );

    it(
      'append allocates too; a refused write with a new version writes nothing, and the next one takes the id',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a] = [uniqueId('u'), uniqueId('a')];
        await appendMessages(store, chatId, [u, a]);
        const before = await snapshot(store, chatId);
        await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: u,
              messages: [newVersion(u, 'stale head')],
            }),
          HeadConflictError,
        );
        expect(await snapshot(store, chatId), 'head conflict: nothing changed').toEqual(before);
        const appended = await store.append({
          chatId,
          branch: 'main',
          messages: [newVersion(u, 'appended')],
        });
        expect(appended.previousHeadId).toBe(a);
        expect(appended.nodes.map((node) => [node.id, node.parentId])).toEqual([[`${u}~2`, a]]);
        expect(await nodeIdsOf(store, chatId, u)).toEqual([`${u}~2`, u]);
      },
      timeout,
    );

    it(
      'newVersion: refused when not a boolean or when the node id is not the message id',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const u = uniqueId('u');
        await appendMessages(store, chatId, [u]);
        const commit = (entry: object) => () =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: u,
            messages: [entry as CommitMessage],
          });
        const message: StoredMessage = textMessage(u, 'edited');
        await expectRefused(
          store,
          chatId,
          'newVersion not a boolean',
          'newVersion',
          commit({ id: u, message, newVersion: 'yes' }),
        );
        await expectRefused(
          store,
          chatId,
          'a node id other than the message id',
          'id',
          commit({ id: uniqueId('node'), message, newVersion: true }),
        );
      },
      timeout,
    );
  });
}
