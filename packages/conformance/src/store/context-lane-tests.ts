import {
  ChatNotFoundError,
  ContextConflictError,
  type ContextStore,
  type JsonValue,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRejection,
  nestedValue,
  openFreshChat,
  type StoreHarness,
  uniqueId,
} from './store-harness';

/**
 * A lane that exercises what a JSON column can lose: key order (not sorted), unicode in keys and
 * values (astral characters, combining marks, RTL, line and paragraph separators), escapes,
 * numbers of every shape JSON has, empty containers, nulls and nesting.
 */
const laneFixture: readonly JsonValue[] = [
  { type: 'role', text: 'You are terse.' },
  { type: 'hint', text: 'Cite sources: 漢字, émoji 🎉👩🏽‍💻, עברית, e\u0301, a\u2028b\u2029c' },
  {
    zeta: 1,
    alpha: { y: [1, 2, { b: null, a: [] }], x: {} },
    'ключ 🔑': 'значение',
    '': 'empty key',
    quote: '"\\/\b\f\n\r\t',
  },
  'a plain string',
  0,
  -17,
  1.5e-7,
  123456789012345,
  true,
  false,
  null,
  [],
  {},
  [[[['deep']]]],
];

function attempt(mutation: () => unknown): void {
  try {
    mutation();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

/** The context lane (`getContext` / `saveContext`): every store keeps one per chat. */
export function defineContextLaneTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('context lane', () => {
    it(
      'is empty at revision 0 (updatedAt null) until the first save',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        expect(await store.getContext(chatId)).toEqual({
          chatId,
          fragments: [],
          revision: 0,
          updatedAt: null,
        });
      },
      timeout,
    );

    it(
      'round-trips the fragments byte for byte (key order, unicode, numbers, nesting)',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const fragments = [...laneFixture, nestedValue(100) as JsonValue];
        const saved = await store.saveContext({ chatId, fragments });
        const loaded = await store.getContext(chatId);
        expect(JSON.stringify(saved.fragments)).toBe(JSON.stringify(fragments));
        expect(JSON.stringify(loaded.fragments)).toBe(JSON.stringify(fragments));
        expect(loaded).toEqual(saved);
        expect(saved.chatId).toBe(chatId);
        expect(saved.revision).toBe(1);
        expect(typeof saved.updatedAt).toBe('number');
      },
      timeout,
    );

    it(
      'keeps its own copy: changing the input or a result afterwards changes nothing stored',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const fragments: JsonValue[] = [{ type: 'hint', text: 'original', list: [1] }];
        const saved = await store.saveContext({ chatId, fragments });
        (fragments[0] as { text: string }).text = 'changed input';
        fragments.push('added');
        // A store may hand out frozen values; mutating those fails, which is fine too.
        attempt(() => (saved.fragments as JsonValue[]).push('added to the result'));
        const loaded = await store.getContext(chatId);
        attempt(() => (loaded.fragments[0] as { list: number[] }).list.push(2));
        expect((await store.getContext(chatId)).fragments).toEqual([
          { type: 'hint', text: 'original', list: [1] },
        ]);
      },
      timeout,
    );

    it(
      'goes up by exactly one per save, with or without expectedRevision, an empty lane included',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const first = await store.saveContext({ chatId, fragments: ['one'], expectedRevision: 0 });
        const second = await store.saveContext({ chatId, fragments: ['two'] });
        const third = await store.saveContext({ chatId, fragments: [], expectedRevision: 2 });
        expect([first.revision, second.revision, third.revision]).toEqual([1, 2, 3]);
        expect(third.fragments).toEqual([]);
        expect(first.updatedAt).not.toBeNull();
        expect(third.updatedAt as number).toBeGreaterThanOrEqual(first.updatedAt as number);
        expect(await store.getContext(chatId)).toEqual(third);
      },
      timeout,
    );

    it(
      'refuses a stale expectedRevision with ContextConflictError and writes nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await store.saveContext({ chatId, fragments: ['v1'] });
        const before = await store.saveContext({ chatId, fragments: ['v2'] });
        for (const expectedRevision of [0, 1, 3, 100]) {
          const error = await expectRejection(
            () => store.saveContext({ chatId, fragments: ['lost'], expectedRevision }),
            ContextConflictError,
          );
          expect(error.chatId).toBe(chatId);
          expect(error.expectedRevision).toBe(expectedRevision);
          expect(error.currentRevision).toBe(2);
          expect(await store.getContext(chatId)).toEqual(before);
        }
      },
      timeout,
    );

    it(
      'refuses an unknown chat with ChatNotFoundError, and saving does not create it',
      async () => {
        const store = harness.store();
        const chatId = uniqueId('missing');
        const read = await expectRejection(() => store.getContext(chatId), ChatNotFoundError);
        expect(read.chatId).toBe(chatId);
        await expectRejection(
          () => store.saveContext({ chatId, fragments: ['x'] }),
          ChatNotFoundError,
        );
        await expectRejection(
          () => store.saveContext({ chatId, fragments: ['x'], expectedRevision: 0 }),
          ChatNotFoundError,
        );
        expect(await store.getChat(chatId)).toBeNull();
      },
      timeout,
    );

    it(
      'leaves the chat revision, rewrittenAt and graph alone; commits still count from where they were',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [a]);
        await store.createCheckpoint({ chatId, name: 'cp', messageId: a });
        const before = await store.getGraph(chatId);
        const head = await store.getHead({ chatId, branch: 'main' });
        await store.saveContext({ chatId, fragments: laneFixture });
        await store.saveContext({ chatId, fragments: ['again'], expectedRevision: 1 });
        expect(await store.getHead({ chatId, branch: 'main' })).toEqual(head);
        const after = await store.getGraph(chatId);
        expect(after.chat.revision).toBe(before.chat.revision);
        expect(after.chat.rewrittenAt).toBe(before.chat.rewrittenAt);
        expect({ ...after, chat: null }).toEqual({ ...before, chat: null });
        const next = await appendMessages(store, chatId, [b]);
        expect(next.revision).toBe(head.revision + 1);
        expect((await store.getContext(chatId)).revision).toBe(2);
      },
      timeout,
    );

    it(
      'belongs to its chat: saves to one chat leave another as it was',
      async () => {
        const store = harness.store();
        const first = await openFreshChat(store);
        const second = await openFreshChat(store);
        await store.saveContext({ chatId: first.chatId, fragments: ['first'] });
        await store.saveContext({ chatId: first.chatId, fragments: ['first again'] });
        expect(await store.getContext(second.chatId)).toEqual({
          chatId: second.chatId,
          fragments: [],
          revision: 0,
          updatedAt: null,
        });
        const own = await store.saveContext({
          chatId: second.chatId,
          fragments: ['second'],
          expectedRevision: 0,
        });
        expect(own.revision).toBe(1);
        expect((await store.getContext(first.chatId)).fragments).toEqual(['first again']);
      },
      timeout,
    );

    it(
      'is deleted with its chat: a chat opened again under the same id starts at revision 0',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await openFreshChat(store);
        await store.saveContext({ chatId, fragments: ['doomed'] });
        expect(await store.deleteChat(chatId)).toBe(true);
        await expectRejection(() => store.getContext(chatId), ChatNotFoundError);
        await store.openChat({ chatId, userId });
        expect(await store.getContext(chatId)).toEqual({
          chatId,
          fragments: [],
          revision: 0,
          updatedAt: null,
        });
      },
      timeout,
    );

    it(
      'keeps a 1 MB lane intact',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const fragments = Array.from({ length: 200 }, (_, index) => ({
          type: 'hint',
          text: `${index}:${'λ🎉x'.repeat(1_300)}`,
        }));
        await store.saveContext({ chatId, fragments });
        expect(JSON.stringify((await store.getContext(chatId)).fragments)).toBe(
          JSON.stringify(fragments),
        );
      },
      slowTimeout,
    );

    it(
      'concurrent saves expecting the same revision: exactly one wins each round, the rest conflict',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await racingLanes(store, async (lanes) => {
          for (let round = 0; round < 3; round += 1) {
            const settled = await Promise.allSettled(
              Array.from({ length: 8 }, (_, writer) =>
                (lanes[writer % lanes.length] as ContextStore).saveContext({
                  chatId,
                  fragments: [`round ${round} writer ${writer}`],
                  expectedRevision: round,
                }),
              ),
            );
            const winners = settled.flatMap((result, writer) =>
              result.status === 'fulfilled' ? [{ writer, lane: result.value }] : [],
            );
            expect(winners, `round ${round}`).toHaveLength(1);
            for (const result of settled) {
              if (result.status === 'fulfilled') continue;
              expect(ContextConflictError.isInstance(result.reason), String(result.reason)).toBe(
                true,
              );
              expect((result.reason as ContextConflictError).currentRevision).toBe(round + 1);
            }
            const winner = winners[0] as { writer: number; lane: { revision: number } };
            expect(winner.lane.revision).toBe(round + 1);
            expect((await store.getContext(chatId)).fragments).toEqual([
              `round ${round} writer ${winner.writer}`,
            ]);
          }
        });
      },
      slowTimeout,
    );

    it(
      'concurrent saves without expectedRevision: all land, each one revision up (none lost)',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await racingLanes(store, async (lanes) => {
          const saved = await Promise.all(
            Array.from({ length: 8 }, (_, writer) =>
              (lanes[writer % lanes.length] as ContextStore).saveContext({
                chatId,
                fragments: [`writer ${writer}`],
              }),
            ),
          );
          const revisions = saved.map((entry) => entry.revision).sort((x, y) => x - y);
          expect(revisions).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
          const last = saved.find((entry) => entry.revision === 8);
          expect((await store.getContext(chatId)).fragments).toEqual(last?.fragments);
        });
      },
      slowTimeout,
    );

    it(
      'survives closing the store and opening it again',
      async ({ skip }) => {
        if (!harness.store().capabilities.persistent)
          skip('the store does not declare capabilities.persistent');
        if (harness.options.reopenStore === undefined)
          expect.fail(
            'the store declares capabilities.persistent, so defineStoreConformance needs reopenStore',
          );
        await harness.withOwnStore(async (store) => {
          const { chatId } = await openFreshChat(store);
          await store.saveContext({ chatId, fragments: laneFixture });
          const before = await store.getContext(chatId);
          await store.close();
          await harness.withReopened(store, async (reopened) => {
            const loaded = await reopened.getContext(chatId);
            expect(loaded).toEqual(before);
            expect(JSON.stringify(loaded.fragments)).toBe(JSON.stringify(laneFixture));
            const next = await reopened.saveContext({ chatId, fragments: [], expectedRevision: 1 });
            expect(next.revision).toBe(2);
          });
        });
      },
      slowTimeout,
    );
  });

  /**
   * Runs `body` with the lanes to race: the shared store's, plus a second store object's over the
   * same data when the store declares `multiProcess` and `reopenStore` was given.
   */
  async function racingLanes(
    store: ContextStore,
    body: (lanes: readonly ContextStore[]) => Promise<void>,
  ): Promise<void> {
    if (!store.capabilities.multiProcess || harness.options.reopenStore === undefined) {
      await body([store]);
      return;
    }
    await harness.withReopened(store, (other) => body([store, other]));
  }
}
