import {
  BranchNotFoundError,
  ChatNotFoundError,
  OwnershipError,
  type SearchHit,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { contractScore, hitIds, say, searchAll } from './search-harness';
import {
  expectRejection,
  missingCapability,
  openFreshChat,
  pruneIn,
  type StoreHarness,
  searchIn,
  textMessage,
  uniqueId,
} from './store-harness';

/**
 * `searchMessages` (when `capabilities.search` is declared): full-text search scoped to a branch,
 * a chat or a user's chats, ownership, cursor paging, relevance order, snippets, the branches of
 * each hit, unicode, messages replaced in place, and bad input.
 */
export function defineSearchTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('searchMessages', () => {
    it(
      "scopes to a branch's chain, a chat, or every chat of the user, and names each hit's branches",
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [root, answer] = await say(store, chatId, [
          'Where does the quokka live?',
          'The quokka lives on Rottnest Island.',
        ]);
        const [onMain] = await say(store, chatId, ['Tell me more about the quokka diet.']);
        await store.createBranch({ chatId, name: 'alt', headMessageId: answer as string });
        const [onAlt] = await say(store, chatId, ['Is the quokka endangered?'], 'alt');
        const other = uniqueId('chat');
        await store.openChat({ chatId: other, userId });
        const [elsewhere] = await say(store, other, ['A quokka in another chat.']);

        const everywhere = await searchIn(store, { userId, query: 'quokka' });
        expect(hitIds(everywhere.items).sort()).toEqual(
          [root, answer, onMain, onAlt, elsewhere].sort(),
        );
        expect(everywhere.nextCursor).toBeNull();
        const inChat = await searchIn(store, { userId, chatId, query: 'quokka' });
        expect(hitIds(inChat.items).sort()).toEqual([root, answer, onMain, onAlt].sort());
        const onMainBranch = await searchIn(store, {
          userId,
          chatId,
          branch: 'main',
          query: 'quokka',
        });
        expect(hitIds(onMainBranch.items).sort()).toEqual([root, answer, onMain].sort());
        const onAltBranch = await searchIn(store, {
          userId,
          chatId,
          branch: 'alt',
          query: 'QUOKKA',
        });
        expect(hitIds(onAltBranch.items).sort()).toEqual([root, answer, onAlt].sort());

        const byId = new Map(everywhere.items.map((hit) => [hit.messageId, hit]));
        expect(byId.get(root as string)?.branches).toEqual(['main', 'alt']);
        expect(byId.get(onMain as string)?.branches).toEqual(['main']);
        expect(byId.get(onAlt as string)?.branches).toEqual(['alt']);
        expect(byId.get(elsewhere as string)).toMatchObject({
          chatId: other,
          role: 'user',
          branches: ['main'],
          message: textMessage(elsewhere as string, 'A quokka in another chat.', 'user'),
        });
        const hit = byId.get(answer as string) as SearchHit;
        expect(hit).toMatchObject({ chatId, role: 'assistant', sequence: 2 });
        expect(hit.snippet).toContain('quokka');
        expect(typeof hit.score).toBe('number');
        expect(Number.isFinite(hit.score)).toBe(true);
      },
      timeout,
    );

    it(
      'needs every word of the query, ignores case, punctuation and operator words',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [both, onlyRed] = await say(store, chatId, [
          'A red kite over the valley.',
          'A red balloon.',
        ]);
        expect(hitIds((await searchIn(store, { userId, query: 'red kite' })).items)).toEqual([
          both,
        ]);
        expect(
          hitIds((await searchIn(store, { userId, query: '"Red" AND (kite*)' })).items),
        ).toEqual([both]);
        expect(hitIds((await searchIn(store, { userId, query: 'red' })).items).sort()).toEqual(
          [both, onlyRed].sort(),
        );
        expect((await searchIn(store, { userId, query: 'kites' })).items).toEqual([]);
      },
      timeout,
    );

    it(
      'ranks a message that uses the words more, in fewer words, first',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [weak, strong] = await say(store, chatId, [
          'one mention of mangosteen among many other words about fruit markets and travel plans',
          'mangosteen mangosteen mangosteen',
        ]);
        const page = await searchIn(store, { userId, query: 'mangosteen' });
        expect(hitIds(page.items)).toEqual([strong, weak]);
        expect(page.items[0]?.score).toBeGreaterThan(page.items[1]?.score ?? Number.NaN);
      },
      timeout,
    );

    it(
      'pages by cursor through every hit once, and refuses a cursor of another search',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const texts = Array.from({ length: 25 }, (_, index) => `page test ${index} of zebu`);
        const ids = await say(store, chatId, texts);
        const { hits, pages } = await searchAll(store, { userId, query: 'zebu', limit: 10 });
        expect(pages).toBe(3);
        expect(hitIds(hits).sort()).toEqual([...ids].sort());
        const first = await searchIn(store, { userId, query: 'zebu', limit: 10 });
        expect(first.items).toHaveLength(10);
        expect(hitIds(first.items)).toEqual(hitIds(hits.slice(0, 10)));
        const cursor = first.nextCursor as string;
        expect(typeof cursor).toBe('string');
        const refused = await expectRejection(
          () => searchIn(store, { userId, query: 'other words', cursor }),
          ValidationError,
        );
        expect(refused.message).toContain('cursor');
        const exact = await searchIn(store, { userId, query: 'zebu', limit: 25 });
        expect(exact.items).toHaveLength(25);
        expect(exact.nextCursor).toBeNull();
      },
      slowTimeout,
    );

    it(
      'finds only the chats of the user asking, and refuses a chat of another user',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const owner = await openFreshChat(store);
        await say(store, owner.chatId, ['the secret word is axolotl']);
        const stranger = await openFreshChat(store);
        await say(store, stranger.chatId, ['no secrets here']);
        const theirs = await searchIn(store, { userId: stranger.userId, query: 'axolotl' });
        expect(theirs.items).toEqual([]);
        await expectRejection(
          () =>
            searchIn(store, { userId: stranger.userId, chatId: owner.chatId, query: 'axolotl' }),
          OwnershipError,
        );
        const nobody = await searchIn(store, { userId: uniqueId('nobody'), query: 'axolotl' });
        expect(nobody).toEqual({ items: [], nextCursor: null });
      },
      timeout,
    );

    it(
      'finds words in any script, and a query in another Unicode normal form',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [greek, japanese, french] = await say(store, chatId, [
          'η γλώσσα είναι ελληνικά',
          '今日は 東京 に 行きます 🎉',
          'un café au lait, s’il vous plaît',
        ]);
        const find = async (query: string): Promise<string[]> =>
          hitIds((await searchIn(store, { userId, query })).items);
        expect(await find('ελληνικά')).toEqual([greek]);
        expect(await find('東京')).toEqual([japanese]);
        expect(await find('café')).toEqual([french]);
        // "café" with a combining accent (NFD) is the same word.
        expect(await find('cafe\u0301')).toEqual([french]);
        const hit = (await searchIn(store, { userId, query: '東京' })).items[0] as SearchHit;
        expect(hit.snippet).toContain('東京');
        expect(hit.message.parts).toEqual([{ type: 'text', text: '今日は 東京 に 行きます 🎉' }]);
      },
      timeout,
    );

    it(
      'finds a message replaced in place by its new text only',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [id] = await say(store, chatId, ['first draft mentions a walrus']);
        // Searched once before the replace, so a store that indexes on first use has indexed it.
        expect(hitIds((await searchIn(store, { userId, query: 'walrus' })).items)).toEqual([id]);
        const head = await store.getHead({ chatId, branch: 'main' });
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: head.headMessageId,
          messages: [{ id: id as string, message: textMessage(id as string, 'now a narwhal') }],
        });
        expect((await searchIn(store, { userId, query: 'walrus' })).items).toEqual([]);
        const found = await searchIn(store, { userId, query: 'narwhal' });
        expect(hitIds(found.items)).toEqual([id]);
        expect(found.items[0]?.snippet).toBe('now a narwhal');
      },
      timeout,
    );

    it(
      'follows the one tokenization rule: emails, decimals, file names, URLs, hosts, versions, phone numbers, İstanbul, café',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [mail, decimal, file, url, host, version, phone, city, coffee] = await say(
          store,
          chatId,
          [
            'Write to jane.doe@example.com today',
            'The rate went up to 10.5 percent',
            'I attached report_final.pdf for review',
            'See https://docs.acme.org/guide/setup-steps?lang=en#intro please',
            'ssh into db-01.internal.acme.net first',
            'Upgrade the package to version 1.2.3 tonight',
            'Call +1 (555) 010-9999 after lunch',
            'Flights to İSTANBUL are cheap',
            'un café au lait',
          ],
        );
        const cases: [string, (string | undefined)[]][] = [
          ['jane', [mail]],
          ['doe', [mail]],
          ['example com', [mail]],
          ['jane.doe@example.com', [mail]],
          ['10.5', [decimal]],
          ['10', [decimal]],
          ['report', [file]],
          ['final pdf', [file]],
          ['report_final.pdf', [file]],
          ['docs acme', [url]],
          ['guide setup steps', [url]],
          ['lang', [url]],
          ['intro', [url]],
          ['https', [url]],
          ['db', [host]],
          ['01 internal', [host]],
          ['acme', [url, host]],
          ['1.2.3', [version]],
          ['version 3', [version]],
          ['555', [phone]],
          ['010-9999', [phone]],
          ['istanbul', [city]],
          ['İstanbul', [city]],
          ['Istanbul', [city]],
          ['cafe', [coffee]],
          ['CAFÉ', [coffee]],
          ['cafe\u0301', [coffee]],
          ['jan', []],
          ['10.50', []],
        ];
        for (const [query, expected] of cases) {
          const page = await searchIn(store, { userId, chatId, query });
          expect(hitIds(page.items).sort(), query).toEqual([...expected].sort());
        }
      },
      timeout,
    );

    it(
      'scores every hit as the contract computes it, so every store ranks alike',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        await say(store, chatId, [
          'tapir',
          'tapir tapir and a tapir',
          'a long message that mentions the Tapir only once among very many other words of text',
          'Tapír, TAPIR: tapir?',
          'tapir and okapi',
          'okapi tapir okapi',
        ]);
        for (const query of ['tapir', 'okapi tapir', 'TAPIR AND okapi']) {
          const page = await searchIn(store, { userId, chatId, query });
          expect(page.items.length, query).toBeGreaterThan(0);
          for (const hit of page.items) expect(hit.score, query).toBe(contractScore(hit, query));
          const order = [...page.items].sort(
            (left, right) => right.score - left.score || left.sequence - right.sequence,
          );
          expect(hitIds(page.items), query).toEqual(hitIds(order));
        }
      },
      timeout,
    );

    it(
      'pages by the last hit, not by an offset: a branch deleted between pages skips nothing',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search') ?? missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const onMain = await say(
          store,
          chatId,
          Array.from({ length: 8 }, (_, index) => `zebu note ${index} with a few more words`),
        );
        await store.createBranch({ chatId, name: 'alt', headMessageId: onMain[0] as string });
        // Shorter, so they rank first and sit on the first page.
        const onAlt = await say(store, chatId, ['zebu zebu', 'zebu zebu zebu'], 'alt');
        const first = await searchIn(store, { userId, chatId, query: 'zebu', limit: 4 });
        expect(hitIds(first.items).slice(0, 2).sort()).toEqual([...onAlt].sort());
        await pruneIn(store, { chatId, deleteBranches: ['alt'] });
        const rest = await searchAll(store, {
          userId,
          chatId,
          query: 'zebu',
          limit: 4,
          ...(first.nextCursor === null ? {} : { cursor: first.nextCursor }),
        });
        const seen = [...hitIds(first.items), ...hitIds(rest.hits)];
        expect(new Set(seen).size).toBe(seen.length);
        expect(seen.filter((id) => onMain.includes(id)).sort()).toEqual([...onMain].sort());
      },
      slowTimeout,
    );

    it(
      'pages by the last hit, not by an offset: a better hit saved between pages repeats nothing',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const ids = await say(
          store,
          chatId,
          Array.from({ length: 8 }, (_, index) => `gnu ${'word '.repeat(index)}end`),
        );
        const first = await searchIn(store, { userId, chatId, query: 'gnu', limit: 3 });
        expect(first.items).toHaveLength(3);
        const [better] = await say(store, chatId, ['gnu gnu gnu']);
        const rest = await searchAll(store, {
          userId,
          chatId,
          query: 'gnu',
          limit: 3,
          cursor: first.nextCursor as string,
        });
        const seen = [...hitIds(first.items), ...hitIds(rest.hits)];
        expect(new Set(seen).size).toBe(seen.length);
        expect([...seen].sort()).toEqual([...ids].sort());
        expect(seen).not.toContain(better);
        // A fresh search finds it, first.
        expect(hitIds((await searchIn(store, { userId, chatId, query: 'gnu' })).items)[0]).toBe(
          better,
        );
      },
      slowTimeout,
    );

    it(
      'finds messages saved before and after the first search, and never a pruned or deleted one',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search') ?? missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [before] = await say(store, chatId, ['an okapi before any search']);
        expect(hitIds((await searchIn(store, { userId, query: 'okapi' })).items)).toEqual([before]);
        const [after] = await say(store, chatId, ['an okapi after the first search']);
        expect(hitIds((await searchIn(store, { userId, query: 'okapi' })).items).sort()).toEqual(
          [before, after].sort(),
        );
        // A branch whose node has the chat's highest sequence, found, then pruned away.
        await store.createBranch({ chatId, name: 'side', headMessageId: before as string });
        const [pruned] = await say(store, chatId, ['a pruned okapi quagga'], 'side');
        expect(hitIds((await searchIn(store, { userId, query: 'quagga' })).items)).toEqual([
          pruned,
        ]);
        await pruneIn(store, { chatId, deleteBranches: ['side'] });
        expect((await searchIn(store, { userId, query: 'quagga' })).items).toEqual([]);
        expect(hitIds((await searchIn(store, { userId, query: 'okapi' })).items).sort()).toEqual(
          [before, after].sort(),
        );
        // The next node may take the pruned node's place (its sequence, even its id).
        const head = await store.getHead({ chatId, branch: 'main' });
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: head.headMessageId,
          messages: [
            { id: pruned as string, message: textMessage(pruned as string, 'a new quokka') },
          ],
        });
        expect((await searchIn(store, { userId, query: 'quagga' })).items).toEqual([]);
        expect(hitIds((await searchIn(store, { userId, query: 'quokka' })).items)).toEqual([
          pruned,
        ]);
        await store.deleteChat(chatId);
        expect((await searchIn(store, { userId, query: 'okapi' })).items).toEqual([]);
        expect((await searchIn(store, { userId, query: 'quokka' })).items).toEqual([]);
      },
      timeout,
    );

    it(
      'searches text and reasoning parts, not tool calls, ids or metadata',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const id = uniqueId('parts');
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [
            {
              id,
              message: {
                id,
                role: 'assistant',
                metadata: { note: 'metadataword' },
                parts: [
                  { type: 'reasoning', text: 'thinking about capybaras' },
                  {
                    type: 'tool-lookup',
                    toolCallId: 'call-1',
                    state: 'output-available',
                    input: { q: 'toolword' },
                    output: 'toolword',
                  },
                  { type: 'text', text: 'final answer' },
                ],
              },
            },
          ],
        });
        expect(
          hitIds((await searchIn(store, { userId, query: 'capybaras answer' })).items),
        ).toEqual([id]);
        expect((await searchIn(store, { userId, query: 'toolword' })).items).toEqual([]);
        expect((await searchIn(store, { userId, query: 'metadataword' })).items).toEqual([]);
      },
      timeout,
    );

    it(
      'refuses bad input with a ValidationError that names the field, and unknown chats or branches',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const refusals: [string, Record<string, unknown>, string][] = [
          ['an empty query', { userId, query: '' }, 'query'],
          ['a blank query', { userId, query: '   ' }, 'query'],
          ['a query of operators only', { userId, query: 'AND OR NOT * ( ) "" -' }, 'query'],
          ['a query that is not a string', { userId, query: 42 }, 'query'],
          ['a negative limit', { userId, query: 'x', limit: -1 }, 'limit'],
          ['a zero limit', { userId, query: 'x', limit: 0 }, 'limit'],
          ['a limit over 100', { userId, query: 'x', limit: 101 }, 'limit'],
          ['a fractional limit', { userId, query: 'x', limit: 2.5 }, 'limit'],
          ['a branch without a chat', { userId, query: 'x', branch: 'main' }, 'branch'],
          ['a made-up cursor', { userId, query: 'x', cursor: 'not-a-cursor' }, 'cursor'],
          ['no user', { query: 'x' }, 'userId'],
        ];
        for (const [label, input, field] of refusals) {
          const error = await expectRejection(
            () => searchIn(store, input as never),
            ValidationError,
          ).catch((failure: unknown) => {
            throw new Error(`${label}: ${String(failure)}`);
          });
          expect(error.message, label).toContain(field);
        }
        await expectRejection(
          () => searchIn(store, { userId, chatId, branch: 'no-such-branch', query: 'x' }),
          BranchNotFoundError,
        );
        await expectRejection(
          () => searchIn(store, { userId, chatId: uniqueId('missing'), query: 'x' }),
          ChatNotFoundError,
        );
      },
      timeout,
    );
  });
}
