import { type ContextStore, LIVE_REPLY_LIMITS, ValidationError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { askWithLiveReply, type LiveStore, liveOrSkip, textChunks } from './live-reply-harness';
import {
  badIdentifiers,
  expectRejection,
  nestedValue,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** Everything a refused live-reply call must leave as it was: the graph, the live state, the reply. */
async function everything(
  store: ContextStore,
  live: LiveStore,
  chatId: string,
  replyId: string,
): Promise<unknown> {
  return {
    graph: await snapshot(store, chatId),
    state: await live.getLiveState(chatId),
    reply: await live.readReply({ chatId, replyId }),
  };
}

/**
 * Bad live-reply input (`capabilities.liveReplies`): each method and a commit's `startReply` /
 * `endReply` refuse it with a `ValidationError` naming the field, and nothing changes.
 */
export function defineLiveReplyInputTests(harness: StoreHarness): void {
  const { slowTimeout } = harness;

  describe('live reply input', () => {
    it(
      'refuses bad ids, owners, offsets, leases, data and chunks, and writes nothing',
      async ({ skip }) => {
        const store = harness.store();
        const live = liveOrSkip(store, skip);
        const { chatId } = await openFreshChat(store);
        const { replyId, owner, questionId } = await askWithLiveReply(store, chatId);
        await live.appendReplyChunks({
          chatId,
          replyId,
          owner,
          from: 0,
          chunks: textChunks(0, 2),
          leaseMs: 60_000,
        });
        const before = await everything(store, live, chatId, replyId);
        const valid = { chatId, replyId, owner, from: 2, chunks: textChunks(2, 1), leaseMs: 1000 };
        const refusals: [label: string, field: string, call: () => Promise<unknown>][] = [];
        for (const [what, bad] of badIdentifiers) {
          refusals.push(
            [
              `append: replyId ${what}`,
              'replyId',
              () => live.appendReplyChunks({ ...valid, replyId: bad as string }),
            ],
            [
              `append: owner ${what}`,
              'owner',
              () => live.appendReplyChunks({ ...valid, owner: bad as string }),
            ],
            [
              `read: replyId ${what}`,
              'replyId',
              () => live.readReply({ chatId, replyId: bad as string }),
            ],
            [
              `take over: owner ${what}`,
              'owner',
              () => live.takeOverReply({ chatId, replyId, owner: bad as string, leaseMs: 1000 }),
            ],
            [
              `end: owner ${what}`,
              'owner',
              () => live.endReply({ chatId, replyId, owner: bad as string }),
            ],
            [
              `start: replyId ${what}`,
              'replyId',
              () =>
                live.startReply({
                  chatId,
                  replyId: bad as string,
                  branch: 'main',
                  afterNodeId: null,
                  owner,
                  leaseMs: 1000,
                }),
            ],
          );
          // undefined is an absent replyId (stop every reply); null is "no branch".
          if (bad !== undefined && bad !== null) {
            refusals.push(
              [
                `stop: replyId ${what}`,
                'replyId',
                () => live.stopReply({ chatId, replyId: bad as string }),
              ],
              [
                `start: branch ${what}`,
                'branch',
                () =>
                  live.startReply({
                    chatId,
                    replyId: uniqueId('r'),
                    branch: bad as string,
                    afterNodeId: null,
                    owner,
                    leaseMs: 1000,
                  }),
              ],
            );
          }
        }
        for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2', null]) {
          refusals.push(
            [
              `append: from ${String(bad)}`,
              'from',
              () => live.appendReplyChunks({ ...valid, from: bad as number }),
            ],
            [
              `read: from ${String(bad)}`,
              'from',
              () => live.readReply({ chatId, replyId, from: bad as number }),
            ],
            [
              `read: limit ${String(bad)}`,
              'limit',
              () => live.readReply({ chatId, replyId, limit: bad as number }),
            ],
          );
        }
        for (const bad of [0, -5, 1.5, LIVE_REPLY_LIMITS.maxLeaseMs + 1, '1000', null, undefined]) {
          refusals.push(
            [
              `append: leaseMs ${String(bad)}`,
              'leaseMs',
              () => live.appendReplyChunks({ ...valid, leaseMs: bad as number }),
            ],
            [
              `take over: leaseMs ${String(bad)}`,
              'leaseMs',
              () => live.takeOverReply({ chatId, replyId, owner: 'x', leaseMs: bad as number }),
            ],
            [
              `start: leaseMs ${String(bad)}`,
              'leaseMs',
              () =>
                live.startReply({
                  chatId,
                  replyId: uniqueId('r'),
                  branch: null,
                  afterNodeId: null,
                  owner,
                  leaseMs: bad as number,
                }),
            ],
          );
        }
        for (const [what, bad] of [
          ['not an array', { 0: 'chunk' }],
          ['a chunk undefined', [{ type: 'start' }, undefined]],
          ['a function', [() => 1]],
          ['a non-finite number', [{ n: Number.POSITIVE_INFINITY }]],
          ['a NUL character', [{ delta: 'a\u0000b' }]],
          ['a lone surrogate', [{ delta: '\uD800' }]],
          ['nested too deep', [nestedValue(200)]],
          [
            'too many chunks',
            Array.from({ length: LIVE_REPLY_LIMITS.maxChunksPerBatch + 1 }, () => 1),
          ],
        ] as const) {
          refusals.push([
            `append: chunks ${what}`,
            'chunks',
            () => live.appendReplyChunks({ ...valid, chunks: bad as never }),
          ]);
        }
        for (const [what, bad] of [
          ['an array', ['x']],
          ['a string', 'x'],
          ['null', null],
          ['a Date', { at: new Date(0) }],
        ] as const) {
          refusals.push([
            `start: data ${what}`,
            'data',
            () =>
              live.startReply({
                chatId,
                replyId: uniqueId('r'),
                branch: null,
                afterNodeId: null,
                owner,
                leaseMs: 1000,
                data: bad as never,
              }),
          ]);
        }
        const question = uniqueId('q');
        const commitWith = (extra: object) => () =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: questionId,
            messages: [{ id: question, message: textMessage(question) }],
            ...extra,
          });
        refusals.push(
          ['commit: startReply not an object', 'startReply', commitWith({ startReply: 'r' })],
          [
            'commit: startReply.replyId',
            'startReply.replyId',
            commitWith({ startReply: { replyId: '', owner, leaseMs: 1000 } }),
          ],
          [
            'commit: startReply.owner',
            'startReply.owner',
            commitWith({ startReply: { replyId: 'r', owner: 7, leaseMs: 1000 } }),
          ],
          [
            'commit: startReply.leaseMs',
            'leaseMs',
            commitWith({ startReply: { replyId: 'r', owner, leaseMs: 0 } }),
          ],
          [
            'commit: startReply.data',
            'data',
            commitWith({ startReply: { replyId: 'r', owner, leaseMs: 1000, data: [] } }),
          ],
          [
            'commit: endReply.owner',
            'endReply.owner',
            commitWith({ endReply: { replyId, owner: '' } }),
          ],
          [
            'commit: both startReply and endReply',
            'endReply',
            commitWith({
              startReply: { replyId: 'r', owner, leaseMs: 1000 },
              endReply: { replyId, owner },
            }),
          ],
        );
        for (const [label, field, call] of refusals) {
          const error = await expectRejection(call, ValidationError).catch((failure: unknown) => {
            throw new Error(`${label}: ${String(failure)}`);
          });
          const named =
            error.message.includes(field) ||
            error.issues.some((issue) => issue.path.includes(field));
          expect(named, `${label}: the error should name ${field}, got "${error.message}"`).toBe(
            true,
          );
        }
        expect(await everything(store, live, chatId, replyId), 'nothing changed').toEqual(before);
      },
      slowTimeout,
    );
  });
}
