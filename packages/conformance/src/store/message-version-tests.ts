import {
  ChatNotFoundError,
  type CommitResult,
  type ContextStore,
  MAX_IDENTIFIER_LENGTH,
  MessageIdConflictError,
  MessageNotFoundError,
  nextBranchName,
  type StoredMessage,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  badIdentifiers,
  expectRefused,
  expectRejection,
  findBranch,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** A message with id `messageId` and this text, as the node `nodeId` (a version when they differ). */
function version(
  nodeId: string,
  messageId: string,
  text: string,
  role = 'user',
): { id: string; message: StoredMessage } {
  return { id: nodeId, message: textMessage(messageId, text, role) };
}

/**
 * Message versions (every store keeps them): node ids apart from message
 * ids, so one message id has a node on each of several sibling branches; `findMessageNodes`; and
 * the fork-commit, a new branch and its messages in one transaction.
 */
export function defineMessageVersionTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('message versions', () => {
    it(
      'keeps the same message id on two sibling branches under two node ids, and every read gives each its message id',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u1, a1, u2] = [uniqueId('u1'), uniqueId('a1'), uniqueId('u2')];
        // main: u1 → a1 → u2 ("first question"); u2 is then edited, keeping its message id.
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [
            version(u1, u1, 'hello'),
            version(a1, a1, 'hi', 'assistant'),
            version(u2, u2, 'first question'),
          ],
        });
        const edited = `${u2}~2`;
        const fork = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: a1,
          fork: { from: 'main' },
          messages: [version(edited, u2, 'edited question')],
        });
        expect(fork.branch).toBe('main-v2');
        expect(fork.headMessageId).toBe(edited);
        expect(fork.nodes.map((node) => [node.id, node.message.id, node.parentId])).toEqual([
          [edited, u2, a1],
        ]);
        const original = await store.getMessage({ chatId, messageId: u2 });
        const version2 = await store.getMessage({ chatId, messageId: edited });
        expect(original?.message).toEqual(textMessage(u2, 'first question'));
        expect(version2?.message).toEqual(textMessage(u2, 'edited question'));
        expect(version2?.id).toBe(edited);
        const chainIds = async (head: string) =>
          (await store.getChain({ chatId, headMessageId: head })).nodes.map((node) => [
            node.id,
            node.message.id,
          ]);
        expect(await chainIds(u2)).toEqual([
          [u1, u1],
          [a1, a1],
          [u2, u2],
        ]);
        expect(await chainIds(edited)).toEqual([
          [u1, u1],
          [a1, a1],
          [edited, u2],
        ]);
        const graph = await store.getGraph(chatId);
        expect(graph.nodes.map((node) => [node.id, node.message.id])).toEqual([
          [u1, u1],
          [a1, a1],
          [u2, u2],
          [edited, u2],
        ]);
        expect(findBranch(graph.branches, 'main-v2').headMessageId).toBe(edited);
        expect(findBranch(graph.branches, 'main').headMessageId).toBe(u2);
        // The message id has both nodes, newest first.
        expect(
          (await store.findMessageNodes({ chatId, messageId: u2 })).map((node) => node.id),
        ).toEqual([edited, u2]);
      },
      timeout,
    );

    it(
      'replaces a version in place by its node id, and the index follows a changed message id',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a] = [uniqueId('u'), uniqueId('a')];
        await appendMessages(store, chatId, [u, a]);
        const a2 = uniqueId('a2');
        const fork = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: u,
          fork: { from: 'main' },
          messages: [version(a2, a, 'second reply', 'assistant')],
        });
        const branch = fork.branch as string;
        // The reply of the version, updated (a client-side tool result): same node, new content.
        const replaced = await store.commit({
          chatId,
          branch,
          expectedHeadId: a2,
          messages: [version(a2, a, 'second reply, finished', 'assistant')],
        });
        expect(replaced.headMessageId).toBe(a2);
        expect(replaced.rewrittenAt).toBe(replaced.revision);
        expect((await store.getMessage({ chatId, messageId: a2 }))?.message).toEqual(
          textMessage(a, 'second reply, finished', 'assistant'),
        );
        expect((await store.getMessage({ chatId, messageId: a }))?.message).toEqual(
          textMessage(a, `turn 1 (${a})`, 'assistant'),
        );
        expect(
          (await store.findMessageNodes({ chatId, messageId: a })).map((node) => node.id),
        ).toEqual([a2, a]);
        // A replace that gives the node another message id moves it in the index.
        const renamed = uniqueId('renamed');
        await store.commit({
          chatId,
          branch,
          expectedHeadId: a2,
          messages: [version(a2, renamed, 'renamed', 'assistant')],
        });
        expect(
          (await store.findMessageNodes({ chatId, messageId: a })).map((node) => node.id),
        ).toEqual([a]);
        expect(
          (await store.findMessageNodes({ chatId, messageId: renamed })).map((node) => node.id),
        ).toEqual([a2]);
        expect((await store.getGraph(chatId)).nodes).toHaveLength(3);
      },
      timeout,
    );

    it(
      'findMessageNodes: newest first, limit, other chats apart, unknown id [], unknown chat ChatNotFoundError, bad input refused',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const other = await openFreshChat(store);
        const root = uniqueId('root');
        const shared = uniqueId('shared');
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [version(root, root, 'root')],
        });
        // Five versions of `shared`, each on a branch of its own from the root.
        const versions: string[] = [];
        for (let index = 0; index < 5; index += 1) {
          const nodeId = `${shared}~${index + 1}`;
          await store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: root,
            fork: { from: 'main' },
            messages: [version(nodeId, shared, `version ${index + 1}`)],
          });
          versions.push(nodeId);
        }
        // The same message id in another chat is another chat's business.
        await store.commit({
          chatId: other.chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [version(shared, shared, 'elsewhere')],
        });
        const newestFirst = [...versions].reverse();
        const found = await store.findMessageNodes({ chatId, messageId: shared });
        expect(found.map((node) => node.id)).toEqual(newestFirst);
        expect(found.every((node) => node.chatId === chatId && node.message.id === shared)).toBe(
          true,
        );
        expect(found.map((node) => node.sequence)).toEqual(
          [...found.map((node) => node.sequence)].sort((left, right) => right - left),
        );
        expect(found[0]?.message).toEqual(textMessage(shared, 'version 5'));
        expect(found[0]?.parentId).toBe(root);
        expect(
          (await store.findMessageNodes({ chatId, messageId: shared, limit: 2 })).map(
            (node) => node.id,
          ),
        ).toEqual(newestFirst.slice(0, 2));
        expect(
          (await store.findMessageNodes({ chatId, messageId: shared, limit: 100 })).map(
            (node) => node.id,
          ),
        ).toEqual(newestFirst);
        expect(
          (await store.findMessageNodes({ chatId: other.chatId, messageId: shared })).map(
            (node) => node.id,
          ),
        ).toEqual([shared]);
        expect(await store.findMessageNodes({ chatId, messageId: uniqueId('unknown') })).toEqual(
          [],
        );
        // A node id that is not a message id finds nothing.
        expect(await store.findMessageNodes({ chatId, messageId: versions[0] as string })).toEqual(
          [],
        );
        await expectRejection(
          () => store.findMessageNodes({ chatId: uniqueId('missing'), messageId: shared }),
          ChatNotFoundError,
        );
        for (const limit of [0, 101, 1.5, -1, Number.NaN, '2']) {
          await expectRefused(store, chatId, `limit ${String(limit)}`, 'limit', () =>
            store.findMessageNodes({ chatId, messageId: shared, limit: limit as never }),
          );
        }
        for (const [what, bad] of badIdentifiers) {
          await expectRefused(store, chatId, `messageId ${what}`, 'messageId', () =>
            store.findMessageNodes({ chatId, messageId: bad as never }),
          );
          await expectRejection(
            () => store.findMessageNodes({ chatId: bad as never, messageId: shared }),
            ValidationError,
          );
        }
      },
      slowTimeout,
    );

    it(
      'a fork-commit creates the branch named like forkBranch and writes on it in one step; the active branch moves only with activate',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a] = [uniqueId('u'), uniqueId('a')];
        const base = await appendMessages(store, chatId, [u, a]);
        await store.createBranch({ chatId, name: 'main-v2', headMessageId: u });
        const names = (await store.listBranches(chatId)).map((branch) => branch.name);
        const expected = nextBranchName('main', names);
        expect(expected).toBe('main-v3');
        const [n1, n2] = [uniqueId('n1'), uniqueId('n2')];
        const result: CommitResult = await store.commit({
          chatId,
          branch: 'no-such-branch-is-read',
          expectedHeadId: u,
          fork: { from: 'main' },
          messages: [version(n1, n1, 'other reply', 'assistant'), version(n2, n2, 'next')],
        });
        expect(result).toMatchObject({
          branch: expected,
          headMessageId: n2,
          revision: base.revision + 1,
        });
        expect(result.nodes.map((node) => [node.id, node.parentId])).toEqual([
          [n1, u],
          [n2, n1],
        ]);
        const branch = await store.getBranch({ chatId, name: expected });
        expect(branch?.headMessageId).toBe(n2);
        expect((await store.getChat(chatId))?.activeBranch).toBe('main');
        expect((await store.getHead({ chatId, branch: 'main' })).headMessageId).toBe(a);
        // A new root (null) and activate.
        const r = uniqueId('r');
        const rooted = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          fork: { from: 'main', activate: true },
          messages: [version(r, u, 'edited first message')],
        });
        expect(rooted.branch).toBe('main-v4');
        expect(rooted.nodes[0]?.parentId).toBeNull();
        expect((await store.getChat(chatId))?.activeBranch).toBe('main-v4');
        expect(
          (await store.getChain({ chatId, headMessageId: r })).nodes.map((node) => node.id),
        ).toEqual([r]);
        // A fork-commit may replace a node on the new branch's chain (the start or an ancestor).
        const replaced = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: a,
          fork: { from: 'topic' },
          messages: [version(u, u, 'the first message, corrected')],
        });
        expect(replaced.branch).toBe('topic-v2');
        expect(replaced.headMessageId).toBe(a);
        expect((await store.getMessage({ chatId, messageId: u }))?.message).toEqual(
          textMessage(u, 'the first message, corrected'),
        );
      },
      timeout,
    );

    it(
      'a refused fork-commit leaves no branch and no node: bad message, unknown start, off-branch id, bad fork, name too long',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a, side] = [uniqueId('u'), uniqueId('a'), uniqueId('side')];
        await appendMessages(store, chatId, [u, a]);
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: u,
          fork: { from: 'main' },
          messages: [version(side, side, 'side reply', 'assistant')],
        });
        const fresh = uniqueId('fresh');
        const forkCommit = (input: object) => () =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: u,
            fork: { from: 'main' },
            messages: [version(fresh, fresh, 'fresh')],
            ...input,
          });
        await expectRefused(
          store,
          chatId,
          'a message without role',
          'role',
          forkCommit({ messages: [{ id: fresh, message: { id: fresh, parts: [] } }] }),
        );
        await expectRefused(
          store,
          chatId,
          'a bad message id',
          'message.id',
          forkCommit({ messages: [{ id: fresh, message: textMessage('') }] }),
        );
        await expectRefused(store, chatId, 'fork not an object', 'fork', forkCommit({ fork: 1 }));
        await expectRefused(
          store,
          chatId,
          'fork.from missing',
          'fork.from',
          forkCommit({ fork: {} }),
        );
        await expectRefused(
          store,
          chatId,
          'fork.activate not a boolean',
          'fork.activate',
          forkCommit({ fork: { from: 'main', activate: 'yes' } }),
        );
        await expectRefused(
          store,
          chatId,
          'a from with no room for -vN',
          'from',
          forkCommit({ fork: { from: 'x'.repeat(MAX_IDENTIFIER_LENGTH) } }),
        );
        const before = await snapshot(store, chatId);
        await expectRejection(
          forkCommit({ expectedHeadId: uniqueId('unknown') }),
          MessageNotFoundError,
        );
        expect(await snapshot(store, chatId), 'unknown start: nothing changed').toEqual(before);
        // `side` is a node of the chat, but not on the chain of a branch started at `a`.
        await expectRejection(
          forkCommit({
            expectedHeadId: a,
            messages: [version(fresh, fresh, 'fresh'), version(side, side, 'changed')],
          }),
          MessageIdConflictError,
        );
        expect(await snapshot(store, chatId), 'off-branch id: nothing changed').toEqual(before);
        await expectRejection(
          forkCommit({ expectedHeadId: null, messages: [version(a, a, 'changed')] }),
          MessageIdConflictError,
        );
        expect(await snapshot(store, chatId), 'existing id on a new root: nothing changed').toEqual(
          before,
        );
        await expectRejection(forkCommit({ chatId: uniqueId('missing') }), ChatNotFoundError);
        // After all the refusals the next fork-commit gets the next name as if none had happened.
        const ok = await forkCommit({})();
        expect(ok.branch).toBe('main-v3');
      },
      timeout,
    );

    it(
      'concurrent fork-commits from the same node all succeed, each on a branch with its own name',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [u, a] = [uniqueId('u'), uniqueId('a')];
        await appendMessages(store, chatId, [u, a]);
        const stores: ContextStore[] = [store];
        const race = async (): Promise<void> => {
          const count = 12;
          const ids = Array.from({ length: count }, () => uniqueId('edit'));
          const results = await Promise.all(
            ids.map((id, index) =>
              (stores[index % stores.length] as ContextStore).commit({
                chatId,
                branch: 'main',
                expectedHeadId: u,
                fork: { from: 'main' },
                // Every one is a version of the same reply.
                messages: [version(id, a, `reply ${index}`, 'assistant')],
              }),
            ),
          );
          const names = results.map((result) => result.branch);
          expect(new Set(names).size).toBe(count);
          const expectedNames = Array.from({ length: count }, (_, index) => `main-v${index + 2}`);
          expect([...names].sort()).toEqual([...expectedNames].sort());
          for (const [index, result] of results.entries()) {
            const branch = await store.getBranch({ chatId, name: result.branch as string });
            expect(branch?.headMessageId).toBe(ids[index]);
            const chain = await store.getChain({ chatId, headMessageId: ids[index] as string });
            expect(chain.nodes.map((node) => node.id)).toEqual([u, ids[index]]);
          }
          const graph = await store.getGraph(chatId);
          expect(graph.nodes).toHaveLength(2 + count);
          expect(graph.branches).toHaveLength(1 + count);
          expect(graph.chat.revision).toBe(1 + count);
          expect(await store.findMessageNodes({ chatId, messageId: a, limit: 100 })).toHaveLength(
            1 + count,
          );
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
      'persists versions and finds them by message id after reopening',
      async ({ skip }) => {
        const store = harness.store();
        if (store.capabilities.persistent !== true)
          skip('the store does not declare capabilities.persistent');
        if (harness.options.reopenStore === undefined) skip('reopenStore was not given');
        const { chatId } = await openFreshChat(store);
        const u = uniqueId('u');
        await appendMessages(store, chatId, [u]);
        const edited = `${u}~2`;
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          fork: { from: 'main' },
          messages: [version(edited, u, 'edited')],
        });
        await harness.withReopened(store, async (reopened) => {
          expect(
            (await reopened.findMessageNodes({ chatId, messageId: u })).map((node) => [
              node.id,
              node.message.id,
            ]),
          ).toEqual([
            [edited, u],
            [u, u],
          ]);
        });
      },
      timeout,
    );
  });
}
