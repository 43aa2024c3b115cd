import { type ContextStore, ValidationError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  expectRejection,
  missingCapability,
  openFreshChat,
  type StoreHarness,
  searchIn,
  textMessage,
  uniqueId,
} from './store-harness';

async function say(
  store: ContextStore,
  chatId: string,
  texts: readonly string[],
): Promise<string[]> {
  const head = await store.getHead({ chatId, branch: 'main' });
  const ids = texts.map(() => uniqueId('p'));
  await store.commit({
    chatId,
    branch: 'main',
    expectedHeadId: head.headMessageId,
    messages: texts.map((text, index) => ({
      id: ids[index] as string,
      message: textMessage(ids[index] as string, text),
    })),
  });
  return ids;
}

// The contract's prefix score, written out from `SearchMessagesInput.prefix` and `SearchHit.score`.
function words(text: string): string[] {
  const fold = (value: string): string => value.normalize('NFKD').replace(/\p{M}+/gu, '');
  return fold(fold(text).toLowerCase()).match(/[\p{L}\p{N}]+/gu) ?? [];
}
function prefixScore(text: string, whole: readonly string[], stem: string): number {
  const tokens = words(text);
  let score = 0;
  const add = (count: number): void => {
    score += (count * 2.2) / (count + 0.3 + 0.028125 * tokens.length);
  };
  for (const term of whole) add(tokens.filter((token) => token === term).length);
  add(tokens.filter((token) => token.startsWith(stem)).length);
  return score;
}

/** Prefix search (`capabilities.searchPrefix`): the last query word matches as a prefix. */
export function defineSearchPrefixTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('searchMessages with prefix', () => {
    it(
      'matches the last word as a prefix, the others as whole words, with the contract score',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'searchPrefix');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const texts = [
          'The Fibonacci sequence: fib(10) is 55.',
          'fib fib fibre and a fiber',
          'A lucas sequence is not fibonacci',
          'Nothing relevant here, only a fob',
          'Un café à Fïbourg',
        ];
        const ids = await say(store, chatId, texts);
        const found = await searchIn(store, { userId, chatId, query: 'fib', prefix: true });
        expect(found.items.map((hit) => hit.messageId).sort()).toEqual(
          [ids[0], ids[1], ids[2], ids[4]].sort(),
        );
        for (const hit of found.items) {
          const text = texts[ids.indexOf(hit.messageId)] as string;
          expect(hit.score).toBeCloseTo(prefixScore(text, [], 'fib'), 12);
        }
        // The whole-word search still finds whole words only.
        const whole = await searchIn(store, { userId, chatId, query: 'fib' });
        expect(whole.items.map((hit) => hit.messageId).sort()).toEqual([ids[0], ids[1]].sort());
        // Only the last word is a prefix: `sequence fibo` needs the whole word `sequence`.
        const two = await searchIn(store, { userId, chatId, query: 'sequence fibo', prefix: true });
        expect(two.items.map((hit) => hit.messageId).sort()).toEqual([ids[0], ids[2]].sort());
        for (const hit of two.items) {
          const text = texts[ids.indexOf(hit.messageId)] as string;
          expect(hit.score).toBeCloseTo(prefixScore(text, ['sequence'], 'fibo'), 12);
        }
        const seq = await searchIn(store, { userId, chatId, query: 'fibonacci seq', prefix: true });
        expect(seq.items.map((hit) => hit.messageId).sort()).toEqual([ids[0], ids[2]].sort());
        expect(seq.items[0]?.snippet).toMatch(/[Ss]equence/);
        // Folding applies to the prefix too.
        const folded = await searchIn(store, { userId, chatId, query: 'CAF', prefix: true });
        expect(folded.items.map((hit) => hit.messageId)).toEqual([ids[4]]);
      },
      timeout,
    );

    it(
      'treats pattern and operator characters as data, and pages with its own cursor',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'searchPrefix');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const ids = await say(store, chatId, [
          'percent 100% and under_score',
          'star* and "quoted" words',
          'alpha alphabet alphanumeric',
          'alpha beta',
          'alpine',
        ]);
        // `%`, `_`, `*` and quotes are separators under the search rule, never patterns.
        for (const query of ['%', '_', '*', '"']) {
          await expectRejection(
            () => searchIn(store, { userId, chatId, query, prefix: true }),
            ValidationError,
          );
        }
        const under = await searchIn(store, { userId, chatId, query: 'under_', prefix: true });
        expect(under.items.map((hit) => hit.messageId)).toEqual([ids[0]]);
        const star = await searchIn(store, { userId, chatId, query: 'star*"', prefix: true });
        expect(star.items.map((hit) => hit.messageId)).toEqual([ids[1]]);
        const orQuery = await searchIn(store, { userId, chatId, query: 'zzz OR al', prefix: true });
        expect(orQuery.items).toEqual([]);
        // Pages of a prefix search, one hit each, cover the matches once.
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 5; page += 1) {
          const result = await searchIn(store, {
            userId,
            chatId,
            query: 'al',
            prefix: true,
            limit: 1,
            ...(cursor === undefined ? {} : { cursor }),
          });
          seen.push(...result.items.map((hit) => hit.messageId));
          if (result.nextCursor === null) break;
          cursor = result.nextCursor;
        }
        expect(seen.sort()).toEqual([ids[2], ids[3], ids[4]].sort());
        // A cursor of the prefix search is not one of the whole-word search.
        const first = await searchIn(store, {
          userId,
          chatId,
          query: 'al',
          prefix: true,
          limit: 1,
        });
        await expectRejection(
          () =>
            searchIn(store, {
              userId,
              chatId,
              query: 'al',
              limit: 1,
              cursor: first.nextCursor as string,
            }),
          ValidationError,
        );
        await expectRejection(
          () =>
            searchIn(store, {
              userId,
              chatId,
              query: 'al',
              prefix: 'yes' as unknown as boolean,
            }),
          ValidationError,
        );
      },
      timeout,
    );
  });
}
