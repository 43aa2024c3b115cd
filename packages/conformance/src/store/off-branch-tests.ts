import {
  type CommitMessage,
  type CommitResult,
  ConflictError,
  type ContextStore,
  HeadConflictError,
  MessageIdConflictError,
  type MessageNodeRecord,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRejection,
  openFreshChat,
  type StoreHarness,
  sequentialIds,
  snapshot,
  textEntries,
  textMessage,
  uniqueId,
} from './store-harness';

/** One of the two message writes, as the tests call it: on top of whatever the branch head is. */
interface Write {
  readonly method: 'commit' | 'append';
  readonly write: (
    store: ContextStore,
    chatId: string,
    branch: string,
    messages: readonly CommitMessage[],
  ) => Promise<CommitResult>;
}

const writes: readonly Write[] = [
  {
    method: 'commit',
    write: async (store, chatId, branch, messages) => {
      const { headMessageId } = await store.getHead({ chatId, branch });
      return store.commit({ chatId, branch, expectedHeadId: headMessageId, messages });
    },
  },
  {
    method: 'append',
    write: (store, chatId, branch, messages) => store.append({ chatId, branch, messages }),
  },
];

/**
 * The replace-in-place rule of `commit` and `append`: an id already in the chat replaces its node
 * only when the node is on the branch written (the head or an ancestor); an id that exists only
 * elsewhere in the chat is refused with `MessageIdConflictError` and nothing is written.
 */
export function defineOffBranchTests(harness: StoreHarness): void {
  const { timeout } = harness;

  for (const { method, write } of writes) {
    describe(`${method}: message ids on other branches`, () => {
      it(
        'an id that exists only off the branch is refused with MessageIdConflictError and nothing is written',
        async () => {
          const store = harness.store();
          const { chatId } = await openFreshChat(store);
          // main: a → b → c; side: a → s; blank: empty; short: at a (c and b are ahead of it).
          const [a, b, c, s] = [uniqueId('a'), uniqueId('b'), uniqueId('c'), uniqueId('s')];
          await appendMessages(store, chatId, [a, b, c]);
          await store.createBranch({ chatId, name: 'side', headMessageId: a });
          await appendMessages(store, chatId, [s], 'side');
          await store.createBranch({ chatId, name: 'blank', headMessageId: null });
          await store.createBranch({ chatId, name: 'short', headMessageId: a });
          const fresh = uniqueId('fresh');
          const attempts: [branch: string, offBranch: string, batch: string[]][] = [
            // Another branch's node, after a new id that must not be written either.
            ['side', b, [fresh, b]],
            ['side', c, [c]],
            ['main', s, [s, fresh]],
            // A node the branch's own head has not reached (a descendant of its head).
            ['short', b, [fresh, b]],
            // Every node is off an empty branch.
            ['blank', a, [a]],
            // An on-branch replace in the same batch does not make the off-branch one pass.
            ['side', c, [a, fresh, c]],
          ];
          const before = await snapshot(store, chatId);
          for (const [branch, offBranch, batch] of attempts) {
            const error = await expectRejection(
              () =>
                write(
                  store,
                  chatId,
                  branch,
                  batch.map((id) => ({ id, message: textMessage(id, `overwrite from ${branch}`) })),
                ),
              MessageIdConflictError,
            );
            expect(error, `${branch} with ${offBranch}`).toMatchObject({
              chatId,
              branch,
              messageId: offBranch,
            });
            // A conflict, but not one a retry on a fresh head could ever resolve.
            expect(ConflictError.isInstance(error)).toBe(true);
            expect(HeadConflictError.isInstance(error)).toBe(false);
            expect(await snapshot(store, chatId), `${branch} with ${offBranch}`).toEqual(before);
          }
          expect(await store.getMessage({ chatId, messageId: fresh })).toBeNull();
          // The refused batch's new id is still free.
          const written = await write(store, chatId, 'side', textEntries([fresh]));
          expect(written.nodes.map((node) => [node.id, node.parentId])).toEqual([[fresh, s]]);
        },
        timeout,
      );

      it(
        'an id on the branch is replaced in place, from the head back to a deep ancestor',
        async () => {
          const store = harness.store();
          const { chatId } = await openFreshChat(store);
          const trunk = sequentialIds(uniqueId('t'), 40);
          await appendMessages(store, chatId, trunk);
          const forkAt = trunk[30] as string;
          await store.createBranch({ chatId, name: 'side', headMessageId: forkAt });
          const twig = sequentialIds(uniqueId('w'), 3);
          await appendMessages(store, chatId, twig, 'side');
          const root = trunk[0] as string;
          const head = twig[2] as string;
          const [middle, added] = [trunk[17] as string, uniqueId('added')];
          const before = new Map<string, MessageNodeRecord>();
          for (const id of [root, middle, forkAt, head])
            before.set(
              id,
              (await store.getMessage({ chatId, messageId: id })) as MessageNodeRecord,
            );
          const start = await store.getHead({ chatId, branch: 'side' });
          const replacing = [root, added, middle, forkAt, head];
          const result = await write(
            store,
            chatId,
            'side',
            replacing.map((id) => ({ id, message: textMessage(id, `replaced ${id}`) })),
          );
          expect(result.revision).toBe(start.revision + 1);
          expect(result.rewrittenAt).toBe(result.revision);
          expect(result.headMessageId).toBe(added);
          expect(result.nodes.map((node) => [node.id, node.parentId])).toEqual([
            [root, null],
            [added, head],
            [middle, trunk[16]],
            [forkAt, trunk[29]],
            [head, twig[1]],
          ]);
          for (const [id, old] of before) {
            const now = (await store.getMessage({ chatId, messageId: id })) as MessageNodeRecord;
            expect(now).toMatchObject({
              parentId: old.parentId,
              sequence: old.sequence,
              createdAt: old.createdAt,
            });
            expect(now.message).toEqual(textMessage(id, `replaced ${id}`));
          }
          const chain = await store.getChain({ chatId, headMessageId: added });
          expect(chain.nodes.map((node) => node.id)).toEqual([
            ...trunk.slice(0, 31),
            ...twig,
            added,
          ]);
          // Shared ancestors are shared: main sees the new content, and its head did not move.
          expect((await store.getHead({ chatId, branch: 'main' })).headMessageId).toBe(trunk[39]);
          const mainChain = await store.getChain({ chatId, headMessageId: trunk[39] as string });
          expect(mainChain.nodes[17]?.message).toEqual(textMessage(middle, `replaced ${middle}`));
          expect((await store.getGraph(chatId)).nodes).toHaveLength(trunk.length + twig.length + 1);
        },
        timeout,
      );

      it(
        'a batch of replacements only leaves the head where it is and still counts as one write',
        async () => {
          const store = harness.store();
          const { chatId } = await openFreshChat(store);
          const [a, b] = [uniqueId('a'), uniqueId('b')];
          const base = await appendMessages(store, chatId, [a, b]);
          const result = await write(store, chatId, 'main', [
            { id: b, message: textMessage(b, 'b again') },
            { id: a, message: textMessage(a, 'a again') },
          ]);
          expect(result).toMatchObject({
            headMessageId: b,
            revision: base.revision + 1,
            rewrittenAt: base.revision + 1,
          });
          expect(result.nodes.map((node) => node.id)).toEqual([b, a]);
          expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
            headMessageId: b,
            revision: base.revision + 1,
            rewrittenAt: base.revision + 1,
          });
        },
        timeout,
      );
    });
  }
}
