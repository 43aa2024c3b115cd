import {
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  ChatNotFoundError,
  type ContextStore,
  HeadConflictError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  badIdentifiers,
  expectRefused,
  expectRejection,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textEntries,
  uniqueId,
} from './store-harness';

/**
 * `renameBranch` (every store has it): one atomic write that keeps the
 * head and the listing order, moves the active branch with it, and never loses a write of a
 * writer that still holds the old name.
 */
export function defineRenameTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('renameBranch', () => {
    it(
      'renames in place: head, createdAt and listing order kept, checkpoints and revision untouched',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('a'), uniqueId('b')];
        await appendMessages(store, chatId, [a, b]);
        const idea = await store.createBranch({ chatId, name: 'idea', headMessageId: a });
        await store.createBranch({ chatId, name: 'later', headMessageId: null });
        await store.createCheckpoint({ chatId, name: 'mark', messageId: b });
        const before = await store.getChat(chatId);
        const renamed = await store.renameBranch({ chatId, from: 'idea', to: 'idea-final' });
        expect(renamed).toMatchObject({
          chatId,
          name: 'idea-final',
          headMessageId: a,
          createdAt: idea.createdAt,
        });
        expect(renamed.updatedAt).toBeGreaterThanOrEqual(idea.updatedAt);
        expect(await store.getBranch({ chatId, name: 'idea' })).toBeNull();
        expect(await store.getBranch({ chatId, name: 'idea-final' })).toEqual(renamed);
        expect((await store.listBranches(chatId)).map((branch) => branch.name)).toEqual([
          'main',
          'idea-final',
          'later',
        ]);
        expect((await store.getHead({ chatId, branch: 'idea-final' })).headMessageId).toBe(a);
        await expectRejection(() => store.getHead({ chatId, branch: 'idea' }), BranchNotFoundError);
        const after = await store.getChat(chatId);
        expect(after).toMatchObject({ activeBranch: 'main', revision: before?.revision });
        expect(await store.listCheckpoints(chatId)).toMatchObject([{ name: 'mark', messageId: b }]);
        // The renamed branch takes writes under its new name.
        const c = uniqueId('c');
        await appendMessages(store, chatId, [c], 'idea-final');
        expect((await store.getHead({ chatId, branch: 'idea-final' })).headMessageId).toBe(c);
        // The old name is free again.
        await store.createBranch({ chatId, name: 'idea', headMessageId: b });
        expect((await store.getHead({ chatId, branch: 'idea' })).headMessageId).toBe(b);
      },
      timeout,
    );

    it(
      "moves the chat's active branch when it was the renamed one",
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const a = uniqueId('a');
        await appendMessages(store, chatId, [a]);
        await store.renameBranch({ chatId, from: 'main', to: 'trunk' });
        expect((await store.getChat(chatId))?.activeBranch).toBe('trunk');
        const opened = await store.openChat({ chatId, userId });
        expect(opened.branch).toMatchObject({ name: 'trunk', headMessageId: a });
        expect((await store.getGraph(chatId)).branches.map((branch) => branch.name)).toEqual([
          'trunk',
        ]);
      },
      timeout,
    );

    it(
      'refuses an unknown branch, a taken name, a missing chat and bad names, writing nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('a')]);
        await store.createBranch({ chatId, name: 'other', headMessageId: null });
        const before = await snapshot(store, chatId);
        const unknown = await expectRejection(
          () => store.renameBranch({ chatId, from: 'nope', to: 'fresh' }),
          BranchNotFoundError,
        );
        expect(unknown.message).toContain('nope');
        const taken = await expectRejection(
          () => store.renameBranch({ chatId, from: 'main', to: 'other' }),
          BranchExistsError,
        );
        expect(taken.message).toContain('other');
        await expectRejection(
          () => store.renameBranch({ chatId: uniqueId('missing'), from: 'main', to: 'x' }),
          ChatNotFoundError,
        );
        expect(await snapshot(store, chatId)).toEqual(before);
        await expectRefused(store, chatId, 'to equal to from', 'to', () =>
          store.renameBranch({ chatId, from: 'main', to: 'main' }),
        );
        for (const [label, bad] of badIdentifiers) {
          await expectRefused(store, chatId, `to: ${label}`, 'to', () =>
            store.renameBranch({ chatId, from: 'main', to: bad as string }),
          );
          await expectRefused(store, chatId, `from: ${label}`, 'from', () =>
            store.renameBranch({ chatId, from: bad as string, to: 'fresh' }),
          );
        }
        expect(await store.getChat(chatId)).toMatchObject({ activeBranch: 'main' });
      },
      timeout,
    );

    it(
      'a rename racing commits on the branch loses no write: each commit lands or fails with a clear error',
      async () => {
        const store = harness.store();
        await expectRenameRace([store], store);
      },
      slowTimeout,
    );

    it(
      'the same race spread over two store objects on the same data',
      async ({ skip }) => {
        const store = harness.store();
        if (!store.capabilities.multiProcess)
          skip('the store does not declare capabilities.multiProcess');
        if (harness.options.reopenStore === undefined) skip('no reopenStore was given');
        await harness.withReopened(store, async (reopened) => {
          await expectRenameRace([store, reopened], reopened);
        });
      },
      slowTimeout,
    );
  });
}

/**
 * Four writers (spread over `writers`) keep committing on branch `work`, re-reading its head on
 * a conflict, while `renamer` renames it (started right after the third write lands). Every commit either lands (and
 * is then on the renamed branch's chain) or fails with `BranchNotFoundError` (and is stored
 * nowhere); the old name is gone.
 */
async function expectRenameRace(
  writers: readonly ContextStore[],
  renamer: ContextStore,
): Promise<void> {
  const { chatId } = await openFreshChat(renamer);
  const first = uniqueId('first');
  await appendMessages(renamer, chatId, [first]);
  await renamer.createBranch({ chatId, name: 'work', headMessageId: first });
  const written: string[] = [];
  const refused: string[] = [];
  const write = async (store: ContextStore, writer: number): Promise<void> => {
    for (let turn = 0; turn < 8; turn += 1) {
      const id = uniqueId(`w${writer}-${turn}`);
      for (;;) {
        try {
          const { headMessageId } = await store.getHead({ chatId, branch: 'work' });
          await store.commit({
            chatId,
            branch: 'work',
            expectedHeadId: headMessageId,
            messages: textEntries([id]),
          });
          written.push(id);
          // The third write starts the rename, so the writers' next calls meet it whatever the
          // store's timing (a synchronous store included).
          if (written.length === 3) startRename();
          break;
        } catch (error) {
          if (HeadConflictError.isInstance(error)) continue;
          if (BranchNotFoundError.isInstance(error)) {
            refused.push(id);
            return;
          }
          throw error;
        }
      }
    }
  };
  let renamed: Promise<BranchRecord> | undefined;
  const startRename = (): void => {
    renamed = renamer.renameBranch({ chatId, from: 'work', to: 'work-renamed' });
  };
  await Promise.all(
    Array.from({ length: 4 }, (_, writer) =>
      write(writers[writer % writers.length] as ContextStore, writer),
    ),
  );
  if (renamed === undefined) return expect.fail('the rename never started');
  const record = await renamed;
  expect(record.name).toBe('work-renamed');
  expect(await renamer.getBranch({ chatId, name: 'work' })).toBeNull();
  const head = (await renamer.getHead({ chatId, branch: 'work-renamed' })).headMessageId;
  const chain = await renamer.getChain({ chatId, headMessageId: head as string });
  const onChain = chain.nodes.map((node) => node.id);
  expect(onChain[0]).toBe(first);
  expect(onChain.slice(1).sort()).toEqual([...written].sort());
  for (const id of refused) expect(await renamer.getMessage({ chatId, messageId: id })).toBeNull();
  expect(written.length).toBeGreaterThanOrEqual(3);
  // Four writers, eight turns each: the rename started at the third write, so some turns met it.
  expect(refused.length, 'writers that met the rename').toBeGreaterThan(0);
}
