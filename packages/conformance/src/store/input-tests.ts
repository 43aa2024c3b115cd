import {
  type ContextStore,
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  type StoredMessage,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  badIdentifiers,
  expectRefused,
  expectRejection,
  openFreshChat,
  type StoreHarness,
  textMessage,
  uniqueId,
} from './store-harness';

/** Bad input refused with `ValidationError` and nothing changed; unicode; large payloads. */
export function defineInputTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  /** A chat with two nodes, a branch and a checkpoint: something for a bad call to damage. */
  async function populatedChat(
    store: ContextStore,
  ): Promise<{ chatId: string; userId: string; head: string; first: string }> {
    const { chatId, userId } = await openFreshChat(store, {
      title: 'Populated',
      metadata: { keep: true },
    });
    const [first, head] = [uniqueId('m'), uniqueId('m')];
    await appendMessages(store, chatId, [first, head]);
    await store.createBranch({ chatId, name: 'side', headMessageId: first });
    await store.createCheckpoint({ chatId, name: 'cp', messageId: first });
    return { chatId, userId, head, first };
  }

  describe('bad input', () => {
    it(
      'every id and name argument refuses empty, non-string, too long (characters or bytes) and NUL values',
      async () => {
        const store = harness.store();
        const { chatId, userId, head, first } = await populatedChat(store);
        for (const [what, bad] of badIdentifiers) {
          const value = bad as string;
          const cases: [string, string, () => Promise<unknown>][] = [
            ['openChat chatId', 'chatId', () => store.openChat({ chatId: value, userId })],
            ['openChat userId', 'userId', () => store.openChat({ chatId, userId: value })],
            ['getChat', 'chatId', () => store.getChat(value)],
            ['updateChat chatId', 'chatId', () => store.updateChat({ chatId: value, title: 'x' })],
            ['listChats userId', 'userId', () => store.listChats({ userId: value })],
            ['deleteChat', 'chatId', () => store.deleteChat(value)],
            ['getHead branch', 'branch', () => store.getHead({ chatId, branch: value })],
            [
              'commit chatId',
              'chatId',
              () =>
                store.commit({
                  chatId: value,
                  branch: 'main',
                  expectedHeadId: head,
                  messages: [fresh()],
                }),
            ],
            [
              'commit branch',
              'branch',
              () =>
                store.commit({ chatId, branch: value, expectedHeadId: head, messages: [fresh()] }),
            ],
            [
              'getChain headMessageId',
              'headMessageId',
              () => store.getChain({ chatId, headMessageId: value }),
            ],
            [
              'getMessage messageId',
              'messageId',
              () => store.getMessage({ chatId, messageId: value }),
            ],
            [
              'createBranch name',
              'name',
              () => store.createBranch({ chatId, name: value, headMessageId: head }),
            ],
            ['getBranch name', 'name', () => store.getBranch({ chatId, name: value })],
            ['listBranches', 'chatId', () => store.listBranches(value)],
            ['setActiveBranch name', 'name', () => store.setActiveBranch({ chatId, name: value })],
            [
              'createCheckpoint name',
              'name',
              () => store.createCheckpoint({ chatId, name: value, messageId: first }),
            ],
            [
              'createCheckpoint messageId',
              'messageId',
              () => store.createCheckpoint({ chatId, name: 'other', messageId: value }),
            ],
            ['getCheckpoint name', 'name', () => store.getCheckpoint({ chatId, name: value })],
            ['listCheckpoints', 'chatId', () => store.listCheckpoints(value)],
            [
              'deleteCheckpoint name',
              'name',
              () => store.deleteCheckpoint({ chatId, name: value }),
            ],
            ['getGraph', 'chatId', () => store.getGraph(value)],
          ];
          if (bad !== null) {
            cases.push(
              [
                'commit expectedHeadId',
                'expectedHeadId',
                () =>
                  store.commit({
                    chatId,
                    branch: 'main',
                    expectedHeadId: value,
                    messages: [fresh()],
                  }),
              ],
              [
                'createBranch headMessageId',
                'headMessageId',
                () => store.createBranch({ chatId, name: 'b', headMessageId: value }),
              ],
            );
          }
          if (bad !== undefined) {
            cases.push([
              'getChain until',
              'until',
              () => store.getChain({ chatId, headMessageId: head, until: value }),
            ]);
          }
          const withId = { id: value, message: { ...textMessage('x'), id: value } };
          cases.push([
            'commit message id',
            'messages[0].id',
            () =>
              store.commit({ chatId, branch: 'main', expectedHeadId: head, messages: [withId] }),
          ]);
          cases.push(
            [
              'append chatId',
              'chatId',
              () => store.append({ chatId: value, branch: 'main', messages: [fresh()] }),
            ],
            [
              'append branch',
              'branch',
              () => store.append({ chatId, branch: value, messages: [fresh()] }),
            ],
            [
              'append message id',
              'messages[0].id',
              () => store.append({ chatId, branch: 'main', messages: [withId] }),
            ],
            [
              'forkBranch chatId',
              'chatId',
              () => store.forkBranch({ chatId: value, from: 'main', headMessageId: head }),
            ],
            [
              'forkBranch from',
              'from',
              () => store.forkBranch({ chatId, from: value, headMessageId: head }),
            ],
          );
          if (bad !== null) {
            cases.push([
              'forkBranch headMessageId',
              'headMessageId',
              () => store.forkBranch({ chatId, from: 'main', headMessageId: value }),
            ]);
          }
          for (const [method, field, call] of cases)
            await expectRefused(store, chatId, `${method} with ${what}`, field, call);
        }
        // The longest allowed id is fine, everywhere.
        const longest = 'L'.repeat(MAX_IDENTIFIER_LENGTH);
        const opened = await store.openChat({
          chatId: `${uniqueId('c')}-`.padEnd(MAX_IDENTIFIER_LENGTH, 'c'),
          userId: longest,
        });
        const committed = await store.commit({
          chatId: opened.chat.id,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: longest, message: textMessage(longest) }],
        });
        expect(committed.headMessageId).toBe(longest);
        expect(
          (
            await store.createBranch({
              chatId: opened.chat.id,
              name: longest,
              headMessageId: longest,
            })
          ).name,
        ).toBe(longest);
      },
      slowTimeout,
    );

    it(
      'commit refuses malformed message lists and names the problem',
      async () => {
        const store = harness.store();
        const { chatId, head } = await populatedChat(store);
        const id = uniqueId('m');
        const other = uniqueId('m');
        const commit = (messages: unknown) => () =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: head,
            messages: messages as never,
          });
        await expectRefused(store, chatId, 'empty messages', 'messages', commit([]));
        await expectRefused(
          store,
          chatId,
          'messages not an array',
          'messages',
          commit({ 0: fresh() }),
        );
        await expectRefused(
          store,
          chatId,
          'id differs from message.id',
          'id',
          // A node id may differ from its message id; the message id is still an id.
          commit([{ id, message: textMessage('') }]),
        );
        await expectRefused(
          store,
          chatId,
          'an id twice',
          'id',
          commit([
            { id, message: textMessage(id) },
            { id, message: textMessage(id, 'again') },
          ]),
        );
        await expectRefused(
          store,
          chatId,
          'an existing id twice',
          'id',
          commit([
            { id: head, message: textMessage(head) },
            { id: head, message: textMessage(head) },
          ]),
        );
        await expectRefused(
          store,
          chatId,
          'message not an object',
          'message',
          commit([{ id, message: 'hello' }]),
        );
        await expectRefused(
          store,
          chatId,
          'message null',
          'message',
          commit([{ id, message: null }]),
        );
        await expectRefused(
          store,
          chatId,
          'no role',
          'role',
          commit([{ id, message: { id, parts: [] } }]),
        );
        await expectRefused(
          store,
          chatId,
          'parts not an array',
          'parts',
          commit([{ id, message: { id, role: 'user', parts: 'text' } }]),
        );
        await expectRefused(store, chatId, 'entry not an object', 'messages', commit([fresh(), 7]));
        // One bad message refuses the whole batch: the good one before it is not written either.
        await expectRefused(
          store,
          chatId,
          'good then bad',
          'messages',
          commit([
            fresh(),
            { id: other, message: { id: other, role: 'user', parts: [Number.NaN] } },
          ]),
        );
      },
      timeout,
    );

    it(
      'commit refuses content that JSON cannot carry unchanged (functions, cycles, NaN, …)',
      async () => {
        const store = harness.store();
        const { chatId, head } = await populatedChat(store);
        const cyclic: Record<string, unknown> = { type: 'data-loop' };
        cyclic.data = cyclic;
        const payloads: [string, unknown][] = [
          ['a function', { type: 'data-fn', data: () => 1 }],
          ['a cycle', cyclic],
          ['NaN', { type: 'data-number', data: Number.NaN }],
          ['Infinity', { type: 'data-number', data: Number.POSITIVE_INFINITY }],
          ['a bigint', { type: 'data-big', data: BigInt(1) }],
          ['a symbol', { type: 'data-symbol', data: Symbol('s') }],
          ['a Date instance', { type: 'data-date', data: new Date(0) }],
          ['a Map instance', { type: 'data-map', data: new Map([[1, 2]]) }],
          ['undefined in an array', { type: 'data-list', data: [1, undefined, 3] }],
          ['a NUL in a string', { type: 'text', text: 'nul \u0000 here' }],
          ['a NUL in a key', { type: 'data-key', data: { 'bad\u0000key': 1 } }],
        ];
        for (const [what, part] of payloads) {
          const id = uniqueId('m');
          await expectRefused(store, chatId, `a part with ${what}`, 'messages[0]', () =>
            store.commit({
              chatId,
              branch: 'main',
              expectedHeadId: head,
              messages: [{ id, message: { id, role: 'user', parts: [part] } as StoredMessage }],
            }),
          );
        }
        const id = uniqueId('m');
        await expectRefused(store, chatId, 'metadata with a function', 'metadata', () =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: head,
            messages: [{ id, message: { ...textMessage(id), metadata: { f: () => 0 } } }],
          }),
        );
        // Replacing an existing node with bad content leaves the old content.
        await expectRefused(store, chatId, 'replace with NaN', 'messages[0]', () =>
          store.commit({
            chatId,
            branch: 'main',
            expectedHeadId: head,
            messages: [
              {
                id: head,
                message: { id: head, role: 'user', parts: [{ type: 'data-x', data: Number.NaN }] },
              },
            ],
          }),
        );
      },
      timeout,
    );

    it(
      'chat metadata and titles must be JSON objects and strings',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await populatedChat(store);
        const badMetadata: [string, unknown][] = [
          ['an array', [1, 2]],
          ['a string', 'meta'],
          ['null', null],
          ['a function inside', { f: () => 1 }],
          ['NaN inside', { n: Number.NaN }],
          ['a Date inside', { d: new Date(0) }],
        ];
        for (const [what, metadata] of badMetadata) {
          await expectRefused(store, chatId, `updateChat metadata ${what}`, 'metadata', () =>
            store.updateChat({ chatId, metadata: metadata as never }),
          );
          await expectRefused(store, chatId, `openChat metadata ${what}`, 'metadata', () =>
            store.openChat({ chatId, userId, metadata: metadata as never }),
          );
        }
        for (const [what, title] of [
          ['a number', 7],
          ['an object', { t: 1 }],
          ['a NUL', 'a\u0000b'],
        ] as const) {
          await expectRefused(store, chatId, `updateChat title ${what}`, 'title', () =>
            store.updateChat({ chatId, title: title as never }),
          );
        }
        // openChat takes a string title only (null is for clearing one with updateChat).
        for (const [what, title] of [
          ['a number', 7],
          ['null', null],
          ['a NUL', 'a\u0000b'],
        ] as const) {
          const id = uniqueId('chat');
          await expectRefused(store, chatId, `openChat title ${what}`, 'title', () =>
            store.openChat({ chatId: id, userId, title: title as never }),
          );
          expect(await store.getChat(id)).toBeNull();
        }
        // A refused openChat for a new id creates nothing.
        const newId = uniqueId('chat');
        await expectRejection(
          () => store.openChat({ chatId: newId, userId, metadata: [1] as never }),
          ValidationError,
        );
        expect(await store.getChat(newId)).toBeNull();
      },
      timeout,
    );

    it(
      'listChats refuses a bad limit or a cursor it did not issue',
      async () => {
        const store = harness.store();
        const { chatId, userId } = await populatedChat(store);
        for (const limit of [0, -1, 101, 1.5, Number.NaN, '5']) {
          await expectRefused(store, chatId, `listChats limit ${String(limit)}`, 'limit', () =>
            store.listChats({ userId, limit: limit as never }),
          );
        }
        for (const cursor of ['garbage', '', ':abc', '12:', 'NaN:x', 42]) {
          await expectRefused(
            store,
            chatId,
            `listChats cursor ${JSON.stringify(cursor)}`,
            'cursor',
            () => store.listChats({ userId, cursor: cursor as never }),
          );
        }
      },
      timeout,
    );

    it(
      'getChain refuses a limit that is not a positive integer',
      async () => {
        const store = harness.store();
        const { chatId, head } = await populatedChat(store);
        for (const limit of [0, -3, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '3']) {
          await expectRefused(store, chatId, `getChain limit ${String(limit)}`, 'limit', () =>
            store.getChain({ chatId, headMessageId: head, limit: limit as never }),
          );
        }
      },
      timeout,
    );
  });

  describe('unicode and size', () => {
    it(
      'unicode ids, names, titles and content round-trip exactly, with no normalization',
      async () => {
        const store = harness.store();
        const tag = uniqueId('u');
        const chatId = `chat-${tag}-💬-مرحبا-שלום`;
        const userId = `user-${tag}-👩🏽‍💻-Zoë`;
        const title = 'Ünïcödé 标题 — مرحبا بالعالم ‏(RTL)‏ 👨‍👩‍👧‍👦';
        const metadata = {
          'ключ 🔑': 'значение',
          rtl: 'עברית',
          combining: 'e\u0301',
          emoji: '🏳️‍🌈',
        };
        await store.openChat({ chatId, userId, title, metadata });
        const decomposed = `e\u0301-${tag}`;
        const composed = `\u00e9-${tag}`;
        const ids = [
          `🚀-${tag}`,
          `سلام-${tag}`,
          decomposed,
          composed,
          `Case-${tag}`,
          `case-${tag}`,
          `pad-${tag}`,
          `pad-${tag} `,
        ];
        const messages = ids.map((id, index) => ({
          id,
          message: {
            id,
            role: 'user',
            parts: [
              { type: 'text', text: `${index}: ${id} — ✓ 日本語 العربية 👍🏾 ä\u0308 ｆｕｌｌ` },
            ],
          },
        }));
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages,
        });
        expect(result.nodes.map((node) => node.id)).toEqual(ids);
        for (const { id, message } of messages) {
          expect((await store.getMessage({ chatId, messageId: id }))?.message, id).toEqual(message);
        }
        // Canonically equivalent, case-different and space-padded ids stay distinct nodes.
        expect((await store.getGraph(chatId)).nodes).toHaveLength(ids.length);
        const chain = await store.getChain({
          chatId,
          headMessageId: ids.at(-1) as string,
          until: composed,
        });
        expect(chain.nodes.map((node) => node.id)).toEqual(ids.slice(4));
        await store.createBranch({ chatId, name: 'ветка-🌿', headMessageId: decomposed });
        await store.createCheckpoint({ chatId, name: 'נקודה-📍', messageId: composed });
        expect((await store.getBranch({ chatId, name: 'ветка-🌿' }))?.headMessageId).toBe(
          decomposed,
        );
        expect((await store.getCheckpoint({ chatId, name: 'נקודה-📍' }))?.messageId).toBe(composed);
        const chat = await store.getChat(chatId);
        expect(chat).toMatchObject({ id: chatId, userId, title, metadata });
        expect((await store.listChats({ userId })).items.map((item) => item.id)).toEqual([chatId]);
        // An id of the largest size made of surrogate pairs: 128 four-byte characters.
        const emojiId = '😀'.repeat(MAX_IDENTIFIER_BYTES / 4);
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: ids.at(-1) as string,
          messages: [{ id: emojiId, message: textMessage(emojiId) }],
        });
        expect((await store.getMessage({ chatId, messageId: emojiId }))?.id).toBe(emojiId);
      },
      timeout,
    );

    it(
      'a 1 MB text part and a message with 2,000 parts round-trip',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const unit = 'All work and no play — ünïcödé 👍 ';
        const big = unit.repeat(Math.ceil(1_048_576 / unit.length)).slice(0, 1_048_576);
        const bigId = uniqueId('big');
        const bigMessage: StoredMessage = {
          id: bigId,
          role: 'assistant',
          parts: [{ type: 'text', text: big }],
        };
        const manyId = uniqueId('many');
        const manyMessage: StoredMessage = {
          id: manyId,
          role: 'assistant',
          parts: Array.from({ length: 2_000 }, (_, index) => ({
            type: 'data-row',
            id: `row-${index}`,
            data: { index, label: `row ${index}` },
          })),
        };
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [
            { id: bigId, message: bigMessage },
            { id: manyId, message: manyMessage },
          ],
        });
        const readBig = await store.getMessage({ chatId, messageId: bigId });
        expect((readBig?.message.parts[0] as { text?: string } | undefined)?.text?.length).toBe(
          1_048_576,
        );
        expect(readBig?.message).toEqual(bigMessage);
        const chain = await store.getChain({ chatId, headMessageId: manyId });
        expect(chain.nodes.map((node) => node.message)).toEqual([bigMessage, manyMessage]);
      },
      slowTimeout,
    );
  });
}

let freshCounter = 0;

/** A new, valid commit entry. */
function fresh(): { id: string; message: StoredMessage } {
  freshCounter += 1;
  const id = uniqueId(`fresh${freshCounter}`);
  return { id, message: textMessage(id) };
}
