import {
  type BranchRecord,
  ChatNotFoundError,
  type ContextStore,
  MAX_IDENTIFIER_LENGTH,
  MessageNotFoundError,
  nextBranchName,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  badIdentifiers,
  expectRefused,
  expectRejection,
  idOfBytes,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textEntries,
  uniqueId,
} from './store-harness';

/**
 * `forkBranch` (every store has it, the kit's default included): the store names the fork with
 * `nextBranchName` in the write that creates it, so concurrent forks all succeed.
 */
export function defineForkTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('forkBranch', () => {
    it(
      'names each fork with nextBranchName over every branch name of the chat',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('a'), uniqueId('b')];
        const { revision } = await appendMessages(store, chatId, [a, b]);
        // A name that only looks like a fork number (a leading zero) is not one.
        await store.createBranch({ chatId, name: 'topic-v01', headMessageId: a });
        const forks: [from: string, head: string | null, expected: string][] = [
          ['main', b, 'main-v2'],
          ['main', a, 'main-v3'],
          // From a fork: the base name's next free fork number, above every one taken.
          ['main-v2', b, 'main-v4'],
          ['main-v3', null, 'main-v5'],
          // `from` need not exist.
          ['topic', a, 'topic-v2'],
          ['topic-v9', b, 'topic-v3'],
          ['elsewhere', null, 'elsewhere-v2'],
        ];
        const created: BranchRecord[] = [];
        for (const [from, headMessageId, expected] of forks) {
          const names = (await store.listBranches(chatId)).map((branch) => branch.name);
          expect(nextBranchName(from, names), 'the kit and nextBranchName agree').toBe(expected);
          const fork = await store.forkBranch({ chatId, from, headMessageId });
          expect(fork).toMatchObject({ chatId, name: expected, headMessageId });
          expect(Number.isSafeInteger(fork.createdAt)).toBe(true);
          expect(fork.updatedAt).toBeGreaterThanOrEqual(fork.createdAt);
          expect(await store.getBranch({ chatId, name: expected })).toEqual(fork);
          expect((await store.getHead({ chatId, branch: expected })).headMessageId).toBe(
            headMessageId,
          );
          created.push(fork);
        }
        const listed = await store.listBranches(chatId);
        expect(listed.map((branch) => branch.name)).toEqual([
          'main',
          'topic-v01',
          ...forks.map(([, , name]) => name),
        ]);
        expect(listed.slice(2)).toEqual(created);
        // A fork is a pointer write: the active branch and the revision stay.
        const chat = await store.getChat(chatId);
        expect(chat).toMatchObject({ activeBranch: 'main', revision });
        expect((await store.getGraph(chatId)).nodes).toHaveLength(2);
      },
      timeout,
    );

    it(
      'activate makes the fork the active branch in the same write; a null head makes an empty branch',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        const a = uniqueId('a');
        await appendMessages(store, chatId, [a]);
        const active = await store.forkBranch({
          chatId,
          from: 'main',
          headMessageId: a,
          activate: true,
        });
        expect(active.name).toBe('main-v2');
        expect((await store.getChat(chatId))?.activeBranch).toBe('main-v2');
        expect((await store.openChat({ chatId, userId })).branch).toEqual(active);
        const quiet = await store.forkBranch({
          chatId,
          from: 'main-v2',
          headMessageId: null,
          activate: false,
        });
        expect(quiet).toMatchObject({ name: 'main-v3', headMessageId: null });
        expect((await store.getChat(chatId))?.activeBranch).toBe('main-v2');
        // The empty fork takes a root, and the branch it was named after is untouched.
        const root = uniqueId('root');
        const rooted = await store.commit({
          chatId,
          branch: 'main-v3',
          expectedHeadId: null,
          messages: textEntries([root]),
        });
        expect(rooted.nodes[0]?.parentId).toBeNull();
        expect((await store.getBranch({ chatId, name: 'main-v2' }))?.headMessageId).toBe(a);
      },
      timeout,
    );

    it(
      'a head not in the chat throws MessageNotFoundError, an unknown chat ChatNotFoundError; nothing is created',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('m')]);
        const other = await openFreshChat(store);
        const foreign = uniqueId('foreign');
        await appendMessages(store, other.chatId, [foreign]);
        const before = await snapshot(store, chatId);
        for (const headMessageId of [uniqueId('absent'), foreign]) {
          const error = await expectRejection(
            () => store.forkBranch({ chatId, from: 'main', headMessageId, activate: true }),
            MessageNotFoundError,
          );
          expect(error).toMatchObject({ chatId, messageId: headMessageId });
        }
        expect(await snapshot(store, chatId)).toEqual(before);
        const absentChat = uniqueId('chat');
        for (const headMessageId of [null, foreign]) {
          const error = await expectRejection(
            () => store.forkBranch({ chatId: absentChat, from: 'main', headMessageId }),
            ChatNotFoundError,
          );
          expect(error).toMatchObject({ chatId: absentChat });
        }
        expect(await store.getChat(absentChat)).toBeNull();
      },
      timeout,
    );

    it(
      'refuses bad input with ValidationError naming the field, and creates nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const a = uniqueId('a');
        await appendMessages(store, chatId, [a]);
        const fork = (input: object) => () =>
          store.forkBranch({ chatId, from: 'main', headMessageId: a, ...input });
        for (const [what, bad] of badIdentifiers) {
          await expectRefused(store, chatId, `chatId ${what}`, 'chatId', fork({ chatId: bad }));
          await expectRefused(store, chatId, `from ${what}`, 'from', fork({ from: bad }));
          if (bad !== null) {
            await expectRefused(
              store,
              chatId,
              `headMessageId ${what}`,
              'headMessageId',
              fork({ headMessageId: bad }),
            );
          }
        }
        for (const activate of ['yes', 1, null]) {
          await expectRefused(
            store,
            chatId,
            `activate ${String(activate)}`,
            'activate',
            fork({ activate }),
          );
        }
        await expectRefused(store, chatId, 'input null', 'input', () =>
          store.forkBranch(null as never),
        );
        // A `from` at the length limit has no valid next name: its `-v2` suffix does not fit.
        for (const [what, from] of [
          ['characters', 'f'.repeat(MAX_IDENTIFIER_LENGTH)],
          ['bytes', idOfBytes('from')],
        ] as const) {
          await expectRefused(
            store,
            chatId,
            `from at the limit in ${what}`,
            'from',
            fork({ from }),
          );
        }
      },
      timeout,
    );

    it(
      '25 concurrent forks from one branch all succeed, with 25 distinct names',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = Array.from({ length: 5 }, () => uniqueId('m'));
        await appendMessages(store, chatId, ids);
        await expectConcurrentForks([store], chatId, ids, 25);
      },
      slowTimeout,
    );

    it(
      '25 concurrent forks spread over two store objects on the same data: the same guarantees',
      async ({ skip }) => {
        const store = harness.store();
        if (!store.capabilities.multiProcess)
          skip('the store does not declare capabilities.multiProcess');
        if (harness.options.reopenStore === undefined) skip('no reopenStore was given');
        await harness.withReopened(store, async (reopened) => {
          const { chatId } = await openFreshChat(store);
          const ids = Array.from({ length: 5 }, () => uniqueId('m'));
          await appendMessages(store, chatId, ids);
          await expectConcurrentForks([store, reopened], chatId, ids, 25);
        });
      },
      slowTimeout,
    );
  });
}

/**
 * `count` forks from `main`, all at once over `stores`, at nodes taken in turn from `heads`, every
 * fifth one activating: all succeed, named `main-v2` … `main-v<count + 1>` exactly once, each at
 * the head it asked for, and the active branch is one of those that asked to be.
 */
async function expectConcurrentForks(
  stores: readonly ContextStore[],
  chatId: string,
  heads: readonly string[],
  count: number,
): Promise<void> {
  const requests = Array.from({ length: count }, (_, index) => ({
    store: stores[index % stores.length] as ContextStore,
    headMessageId: heads[index % heads.length] as string,
    activate: index % 5 === 0,
  }));
  const settled = await Promise.allSettled(
    requests.map(({ store, headMessageId, activate }) =>
      store.forkBranch({ chatId, from: 'main', headMessageId, activate }),
    ),
  );
  const failures = settled.flatMap((result) =>
    result.status === 'rejected' ? [String(result.reason)] : [],
  );
  expect(failures).toEqual([]);
  const forks = settled.map((result) => (result as PromiseFulfilledResult<BranchRecord>).value);
  const names = forks.map((fork) => fork.name);
  expect(new Set(names).size).toBe(count);
  expect([...names].sort()).toEqual(
    Array.from({ length: count }, (_, index) => `main-v${index + 2}`).sort(),
  );
  forks.forEach((fork, index) => {
    expect(fork.headMessageId).toBe(requests[index]?.headMessageId);
  });
  const stored = await (stores[0] as ContextStore).listBranches(chatId);
  expect(stored).toHaveLength(count + 1);
  for (const fork of forks)
    expect(stored.find((branch) => branch.name === fork.name)).toEqual(fork);
  const activated = forks.filter((_, index) => requests[index]?.activate).map((fork) => fork.name);
  expect(activated).toContain((await (stores[0] as ContextStore).getChat(chatId))?.activeBranch);
}
