import {
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  CheckpointExistsError,
  type CheckpointRecord,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRejection,
  findBranch,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** Branches and checkpoints: the pointers into the graph. */
export function definePointerTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('branches', () => {
    it(
      'createBranch starts a branch at a node or empty; listBranches lists them oldest first',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        const atA = await store.createBranch({ chatId, name: 'at-a', headMessageId: a });
        const empty = await store.createBranch({ chatId, name: 'empty', headMessageId: null });
        const atB = await store.createBranch({
          chatId,
          name: 'at-b',
          headMessageId: b,
          activate: false,
        });
        expect(atA).toMatchObject({ chatId, name: 'at-a', headMessageId: a });
        expect(empty).toMatchObject({ chatId, name: 'empty', headMessageId: null });
        expectBranchShape(atA);
        const listed = await store.listBranches(chatId);
        expect(listed.map((branch) => branch.name)).toEqual(['main', 'at-a', 'empty', 'at-b']);
        expect(findBranch(listed, 'at-b')).toEqual(atB);
        expect(await store.getBranch({ chatId, name: 'at-a' })).toEqual(atA);
        expect(await store.getBranch({ chatId, name: uniqueId('nope') })).toBeNull();
        expect((await store.getChat(chatId))?.activeBranch).toBe('main');
        expect((await store.getHead({ chatId, branch: 'empty' })).headMessageId).toBeNull();
        expect((await store.getHead({ chatId, branch: 'at-a' })).headMessageId).toBe(a);
      },
      timeout,
    );

    it(
      'createBranch with activate makes it the active branch in the same call',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const a = uniqueId('m');
        await appendMessages(store, chatId, [a]);
        const created = await store.createBranch({
          chatId,
          name: 'main-v2',
          headMessageId: a,
          activate: true,
        });
        expect((await store.getChat(chatId))?.activeBranch).toBe('main-v2');
        expect((await store.openChat({ chatId, userId })).branch).toEqual(created);
      },
      timeout,
    );

    it(
      'a commit moves only its own branch; an empty branch takes a root',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        await store.createBranch({ chatId, name: 'fork', headMessageId: a });
        await store.createBranch({ chatId, name: 'blank', headMessageId: null });
        const onFork = uniqueId('m');
        const forked = await store.commit({
          chatId,
          branch: 'fork',
          expectedHeadId: a,
          messages: [{ id: onFork, message: textMessage(onFork) }],
        });
        expect(forked.nodes[0]?.parentId).toBe(a);
        const root = uniqueId('m');
        const rooted = await store.commit({
          chatId,
          branch: 'blank',
          expectedHeadId: null,
          messages: [{ id: root, message: textMessage(root) }],
        });
        expect(rooted.nodes[0]?.parentId).toBeNull();
        const heads = Object.fromEntries(
          (await store.listBranches(chatId)).map((branch) => [branch.name, branch.headMessageId]),
        );
        expect(heads).toEqual({ main: b, fork: onFork, blank: root });
      },
      timeout,
    );

    it(
      'createBranch refuses a taken name with BranchExistsError and changes nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const a = uniqueId('m');
        await appendMessages(store, chatId, [a]);
        await store.createBranch({ chatId, name: 'taken', headMessageId: null });
        const before = await snapshot(store, chatId);
        for (const name of ['main', 'taken']) {
          const error = await expectRejection(
            () => store.createBranch({ chatId, name, headMessageId: a, activate: true }),
            BranchExistsError,
          );
          expect(error).toMatchObject({ chatId, branch: name });
        }
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );

    it(
      'createBranch refuses a head that is not a node of the chat and changes nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('m')]);
        const other = await openFreshChat(store);
        const foreign = uniqueId('foreign');
        await appendMessages(store, other.chatId, [foreign]);
        const before = await snapshot(store, chatId);
        for (const headMessageId of [foreign, uniqueId('absent')]) {
          const error = await expectRejection(
            () => store.createBranch({ chatId, name: 'b', headMessageId, activate: true }),
            MessageNotFoundError,
          );
          expect(error).toMatchObject({ chatId, messageId: headMessageId });
        }
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );

    it(
      'setActiveBranch switches the active branch; an unknown name throws BranchNotFoundError',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const a = uniqueId('m');
        await appendMessages(store, chatId, [a]);
        const side = await store.createBranch({ chatId, name: 'side', headMessageId: a });
        expect(await store.setActiveBranch({ chatId, name: 'side' })).toEqual(side);
        expect((await store.openChat({ chatId, userId })).branch).toEqual(side);
        expect((await store.setActiveBranch({ chatId, name: 'main' })).name).toBe('main');
        expect((await store.getChat(chatId))?.activeBranch).toBe('main');
        const before = await snapshot(store, chatId);
        const unknown = uniqueId('unknown');
        const error = await expectRejection(
          () => store.setActiveBranch({ chatId, name: unknown }),
          BranchNotFoundError,
        );
        expect(error).toMatchObject({ chatId, branch: unknown });
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );

    it(
      'getHead and commit on an unknown branch throw BranchNotFoundError and write nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('m')]);
        const before = await snapshot(store, chatId);
        const unknown = uniqueId('unknown');
        await expectRejection(
          () => store.getHead({ chatId, branch: unknown }),
          BranchNotFoundError,
        );
        const id = uniqueId('m');
        const error = await expectRejection(
          () =>
            store.commit({
              chatId,
              branch: unknown,
              expectedHeadId: null,
              messages: [{ id, message: textMessage(id) }],
            }),
          BranchNotFoundError,
        );
        expect(error).toMatchObject({ chatId, branch: unknown });
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );
  });

  describe('checkpoints', () => {
    it(
      'createCheckpoint names a node; get and list (oldest first) return it',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        const first = await store.createCheckpoint({ chatId, name: 'before-tools', messageId: a });
        const second = await store.createCheckpoint({ chatId, name: 'after-reply', messageId: b });
        expect(first).toMatchObject({ chatId, name: 'before-tools', messageId: a });
        expectCheckpointShape(first);
        expect(await store.getCheckpoint({ chatId, name: 'before-tools' })).toEqual(first);
        expect(await store.listCheckpoints(chatId)).toEqual([first, second]);
        expect(await store.getCheckpoint({ chatId, name: uniqueId('nope') })).toBeNull();
        // A checkpoint is only a name: heads and nodes are as they were.
        expect((await store.getHead({ chatId, branch: 'main' })).headMessageId).toBe(b);
        expect((await store.getGraph(chatId)).nodes).toHaveLength(2);
      },
      timeout,
    );

    it(
      'a taken name throws CheckpointExistsError (nothing changes) unless replace moves it',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a, b]);
        await store.createCheckpoint({ chatId, name: 'mark', messageId: a });
        const before = await snapshot(store, chatId);
        for (const replace of [undefined, false]) {
          const error = await expectRejection(
            () =>
              store.createCheckpoint({
                chatId,
                name: 'mark',
                messageId: b,
                ...(replace === undefined ? {} : { replace }),
              }),
            CheckpointExistsError,
          );
          expect(error).toMatchObject({ chatId, checkpoint: 'mark' });
        }
        expect(await snapshot(store, chatId)).toEqual(before);
        const moved = await store.createCheckpoint({
          chatId,
          name: 'mark',
          messageId: b,
          replace: true,
        });
        expect(moved).toMatchObject({ chatId, name: 'mark', messageId: b });
        expect(await store.getCheckpoint({ chatId, name: 'mark' })).toEqual(moved);
        expect(await store.listCheckpoints(chatId)).toEqual([moved]);
        // replace on a free name simply creates it.
        const fresh = await store.createCheckpoint({
          chatId,
          name: 'fresh',
          messageId: a,
          replace: true,
        });
        expect(fresh).toMatchObject({ name: 'fresh', messageId: a });
      },
      timeout,
    );

    it(
      'createCheckpoint refuses a node that is not in the chat and changes nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const a = uniqueId('m');
        await appendMessages(store, chatId, [a]);
        await store.createCheckpoint({ chatId, name: 'kept', messageId: a });
        const before = await snapshot(store, chatId);
        const absent = uniqueId('absent');
        for (const replace of [false, true]) {
          const error = await expectRejection(
            () => store.createCheckpoint({ chatId, name: 'kept', messageId: absent, replace }),
            MessageNotFoundError,
          );
          expect(error).toMatchObject({ chatId, messageId: absent });
        }
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );

    it(
      'deleteCheckpoint removes the name, never the node; false when there was none',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const a = uniqueId('m');
        await appendMessages(store, chatId, [a]);
        await store.createCheckpoint({ chatId, name: 'one', messageId: a });
        const two = await store.createCheckpoint({ chatId, name: 'two', messageId: a });
        expect(await store.deleteCheckpoint({ chatId, name: 'one' })).toBe(true);
        expect(await store.getCheckpoint({ chatId, name: 'one' })).toBeNull();
        expect(await store.deleteCheckpoint({ chatId, name: 'one' })).toBe(false);
        expect(await store.deleteCheckpoint({ chatId, name: uniqueId('never') })).toBe(false);
        expect(await store.listCheckpoints(chatId)).toEqual([two]);
        expect((await store.getMessage({ chatId, messageId: a }))?.id).toBe(a);
        // The name is free again.
        expect((await store.createCheckpoint({ chatId, name: 'one', messageId: a })).name).toBe(
          'one',
        );
      },
      timeout,
    );

    it(
      'branch and checkpoint names are separate namespaces; pointer writes leave the revision',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const a = uniqueId('m');
        const { revision } = await appendMessages(store, chatId, [a]);
        await store.createCheckpoint({ chatId, name: 'main', messageId: a });
        await store.createCheckpoint({ chatId, name: 'shared', messageId: a });
        await store.createBranch({ chatId, name: 'shared', headMessageId: a });
        expect((await store.getCheckpoint({ chatId, name: 'main' }))?.messageId).toBe(a);
        expect((await store.getBranch({ chatId, name: 'shared' }))?.headMessageId).toBe(a);
        expect(await store.deleteCheckpoint({ chatId, name: 'shared' })).toBe(true);
        expect(await store.getBranch({ chatId, name: 'shared' })).not.toBeNull();
        await store.setActiveBranch({ chatId, name: 'shared' });
        await store.createCheckpoint({ chatId, name: 'main', messageId: a, replace: true });
        expect((await store.getChat(chatId))?.revision).toBe(revision);
        expect((await store.getHead({ chatId, branch: 'shared' })).revision).toBe(revision);
      },
      timeout,
    );
  });
}

function expectBranchShape(branch: BranchRecord): void {
  expect(Number.isSafeInteger(branch.createdAt)).toBe(true);
  expect(Number.isSafeInteger(branch.updatedAt)).toBe(true);
  expect(branch.updatedAt).toBeGreaterThanOrEqual(branch.createdAt);
}

function expectCheckpointShape(checkpoint: CheckpointRecord): void {
  expect(Number.isSafeInteger(checkpoint.createdAt)).toBe(true);
}
