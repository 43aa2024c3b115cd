import {
  BranchExistsError,
  type CommitResult,
  type ContextStore,
  HeadConflictError,
  type StoredMessage,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  openFreshChat,
  type StoreHarness,
  textMessage,
  uniqueId,
} from './store-harness';

/** The atomic head-moving write and other races, in one store object and (when declared) across several. */
export function defineConcurrencyTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('concurrent writers', () => {
    it(
      '20 commits on the same expected head: one wins, 19 get HeadConflictError with its head, nothing of theirs is written',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const base = await appendMessages(store, chatId, [uniqueId('base')]);
        const outcome = await raceCommits([store], chatId, base.headMessageId, 20);
        expectSingleWinner(outcome, chatId, base.headMessageId);
        const graph = await store.getGraph(chatId);
        expect(graph.chat.revision).toBe(base.revision + 1);
        expect(graph.nodes).toHaveLength(1 + (outcome.winner?.nodes.length ?? 0));
        for (const loser of outcome.loserIds)
          expect(await store.getMessage({ chatId, messageId: loser })).toBeNull();
      },
      slowTimeout,
    );

    it(
      'writers that re-read the head and retry lose no turn',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const start = await store.getHead({ chatId, branch: 'main' });
        const turns = await runRetryingWriters([store], chatId, 8, 5);
        await expectEveryTurnOnce(store, chatId, turns);
        expect((await store.getHead({ chatId, branch: 'main' })).revision).toBe(
          start.revision + 8 * 5,
        );
      },
      slowTimeout,
    );

    it(
      'commits to different branches and different chats all succeed side by side',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const root = uniqueId('root');
        await appendMessages(store, chatId, [root]);
        const names = Array.from({ length: 8 }, (_, index) => `side-${index}`);
        for (const name of names) await store.createBranch({ chatId, name, headMessageId: root });
        const others = await Promise.all(Array.from({ length: 4 }, () => openFreshChat(store)));
        const results = await Promise.all([
          ...names.map((name) => {
            const id = uniqueId(name);
            return store.commit({
              chatId,
              branch: name,
              expectedHeadId: root,
              messages: [{ id, message: textMessage(id) }],
            });
          }),
          ...others.map((other) => {
            const id = uniqueId('other');
            return store.commit({
              chatId: other.chatId,
              branch: 'main',
              expectedHeadId: null,
              messages: [{ id, message: textMessage(id) }],
            });
          }),
        ]);
        expect(results).toHaveLength(names.length + others.length);
        for (const [index, name] of names.entries()) {
          const head = await store.getHead({ chatId, branch: name });
          expect(head.headMessageId).toBe(results[index]?.headMessageId);
          const chain = await store.getChain({
            chatId,
            headMessageId: head.headMessageId as string,
          });
          expect(chain.nodes.map((node) => node.id)).toEqual([root, results[index]?.headMessageId]);
        }
        const versions = results.slice(0, names.length).map((result) => result.revision);
        expect(new Set(versions).size).toBe(names.length);
        const sequences = (await store.getGraph(chatId)).nodes.map((node) => node.sequence);
        expect(new Set(sequences).size).toBe(sequences.length);
      },
      slowTimeout,
    );

    it(
      'concurrent openChat of a new chat creates it exactly once',
      async () => {
        const store = harness.store();
        const chatId = uniqueId('chat');
        const userId = uniqueId('user');
        const results = await Promise.all(
          Array.from({ length: 10 }, () => store.openChat({ chatId, userId })),
        );
        expect(results.filter((result) => result.created)).toHaveLength(1);
        for (const result of results) expect(result.chat.id).toBe(chatId);
        expect((await store.listBranches(chatId)).map((branch) => branch.name)).toEqual(['main']);
        expect((await store.listChats({ userId })).items).toHaveLength(1);
      },
      timeout,
    );

    it(
      'concurrent createBranch with one name: one succeeds, the others get BranchExistsError',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const ids = Array.from({ length: 6 }, () => uniqueId('m'));
        await appendMessages(store, chatId, ids);
        const settled = await Promise.allSettled(
          ids.map((headMessageId) =>
            store.createBranch({ chatId, name: 'contested', headMessageId }),
          ),
        );
        const won = settled.filter((result) => result.status === 'fulfilled');
        expect(won).toHaveLength(1);
        for (const result of settled) {
          if (result.status === 'rejected')
            expect(BranchExistsError.isInstance(result.reason), String(result.reason)).toBe(true);
        }
        const stored = await store.getBranch({ chatId, name: 'contested' });
        expect(stored).toEqual((won[0] as PromiseFulfilledResult<unknown>).value);
      },
      timeout,
    );

    it(
      'across store objects over the same data: one winner, and retrying writers lose no turn',
      async ({ skip }) => {
        const store = harness.store();
        if (!store.capabilities.multiProcess)
          skip('the store does not declare capabilities.multiProcess');
        if (harness.options.reopenStore === undefined) skip('no reopenStore was given');
        await harness.withReopened(store, async (reopened) => {
          const { chatId } = await openFreshChat(store);
          const base = await appendMessages(reopened, chatId, [uniqueId('base')]);
          const outcome = await raceCommits([store, reopened], chatId, base.headMessageId, 20);
          expectSingleWinner(outcome, chatId, base.headMessageId);
          const turns = await runRetryingWriters([store, reopened], chatId, 6, 4);
          await expectEveryTurnOnce(reopened, chatId, turns, outcome.winner?.headMessageId ?? null);
        });
      },
      slowTimeout,
    );
  });
}

interface RaceOutcome {
  readonly winner: CommitResult | undefined;
  readonly winners: number;
  readonly conflicts: readonly HeadConflictError[];
  readonly others: readonly unknown[];
  readonly loserIds: readonly string[];
}

/** `count` writers commit two messages each on top of `expected`, all at once, spread over `stores`. */
async function raceCommits(
  stores: readonly ContextStore[],
  chatId: string,
  expected: string | null,
  count: number,
): Promise<RaceOutcome> {
  const batches = Array.from({ length: count }, (_, index) => [
    uniqueId(`w${index}u`),
    uniqueId(`w${index}a`),
  ]);
  const settled = await Promise.allSettled(
    batches.map((ids, index) =>
      (stores[index % stores.length] as ContextStore).commit({
        chatId,
        branch: 'main',
        expectedHeadId: expected,
        messages: ids.map((id) => ({ id, message: textMessage(id) })),
      }),
    ),
  );
  const fulfilled = settled.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const rejected = settled.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  const winnerIndex = settled.findIndex((result) => result.status === 'fulfilled');
  return {
    winner: fulfilled[0],
    winners: fulfilled.length,
    conflicts: rejected.filter((reason): reason is HeadConflictError =>
      HeadConflictError.isInstance(reason),
    ),
    others: rejected.filter((reason) => !HeadConflictError.isInstance(reason)),
    loserIds: batches.filter((_, index) => index !== winnerIndex).flat(),
  };
}

function expectSingleWinner(outcome: RaceOutcome, chatId: string, expected: string | null): void {
  expect(outcome.others.map(String)).toEqual([]);
  expect(outcome.winners).toBe(1);
  expect(outcome.conflicts).toHaveLength(outcome.loserIds.length / 2);
  for (const conflict of outcome.conflicts) {
    expect(conflict).toMatchObject({
      chatId,
      branch: 'main',
      expectedHeadId: expected,
      currentHeadId: outcome.winner?.headMessageId,
    });
  }
}

/** Each writer's turns: the ids it committed, in its own order. */
type Turns = readonly (readonly [string, string])[][];

/**
 * `writers` writers each save `turnsEach` turns (a user and an assistant message in one commit),
 * all at once, re-reading the head and retrying on every conflict, as the engine does.
 */
async function runRetryingWriters(
  stores: readonly ContextStore[],
  chatId: string,
  writers: number,
  turnsEach: number,
): Promise<Turns> {
  return Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      const store = stores[writer % stores.length] as ContextStore;
      const done: (readonly [string, string])[] = [];
      for (let turn = 0; turn < turnsEach; turn += 1) {
        const ids = [uniqueId(`w${writer}t${turn}u`), uniqueId(`w${writer}t${turn}a`)] as const;
        const messages = ids.map((id, index) => ({
          id,
          message: textMessage(
            id,
            `writer ${writer} turn ${turn}`,
            index === 0 ? 'user' : 'assistant',
          ) as StoredMessage,
        }));
        let expected = (await store.getHead({ chatId, branch: 'main' })).headMessageId;
        for (let attempt = 0; ; attempt += 1) {
          if (attempt > 500)
            expect.fail(`writer ${writer} could not save turn ${turn} in 500 attempts`);
          try {
            await store.commit({ chatId, branch: 'main', expectedHeadId: expected, messages });
            break;
          } catch (error) {
            if (!HeadConflictError.isInstance(error)) throw error;
            expected = (error as HeadConflictError).currentHeadId;
          }
        }
        done.push(ids);
      }
      return done;
    }),
  );
}

/** The branch's chain holds every turn once, each turn's two messages adjacent, each writer's turns in order. */
async function expectEveryTurnOnce(
  store: ContextStore,
  chatId: string,
  turns: Turns,
  after: string | null = null,
): Promise<void> {
  const head = (await store.getHead({ chatId, branch: 'main' })).headMessageId as string;
  const chain = await store.getChain({
    chatId,
    headMessageId: head,
    ...(after === null ? {} : { until: after }),
  });
  const ids = chain.nodes.map((node) => node.id);
  const expectedCount = turns.reduce((sum, writer) => sum + writer.length * 2, 0);
  expect(ids).toHaveLength(expectedCount);
  expect(new Set(ids).size).toBe(expectedCount);
  const position = new Map(ids.map((id, index) => [id, index]));
  for (const writer of turns) {
    let previous = -1;
    for (const [user, assistant] of writer) {
      const at = position.get(user) as number;
      expect(at).toBeGreaterThan(previous);
      expect(position.get(assistant)).toBe(at + 1);
      previous = at + 1;
    }
  }
  for (let index = 1; index < chain.nodes.length; index += 1) {
    expect(chain.nodes[index]?.parentId).toBe(chain.nodes[index - 1]?.id);
  }
}
