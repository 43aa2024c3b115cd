import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/errors';
import { chat, message, stubDriver } from './__fixtures__/stub-driver';
import { CheckedContextStore } from './checked-context-store';
import type { SearchMatch } from './search-input';

// What the wrapper hands a driver: inputs checked once, prepared values, pages cut.

describe('CheckedContextStore: inputs', () => {
  it('refuses bad input with the shared messages and never calls the driver', async () => {
    const { driver, calls } = stubDriver();
    const store = new CheckedContextStore(driver);
    await expect(store.getChat(42 as never)).rejects.toThrow(
      'getChat(chatId): chatId expected a string, received number.',
    );
    await expect(store.getHead(null as never)).rejects.toThrow(
      'getHead(input): input must be an object.',
    );
    await expect(
      store.createBranch({ chatId: 'c', name: 'b', headMessageId: null, activate: 'yes' as never }),
    ).rejects.toThrow('createBranch(input): activate must be a boolean, received string.');
    await expect(
      store.commit({ chatId: 'c', branch: 'main', expectedHeadId: null, messages: [] }),
    ).rejects.toThrow('commit(input): messages must be a non-empty array.');
    await expect(store.listChats({ userId: 'u', limit: 0 })).rejects.toThrow(ValidationError);
    expect(calls).toEqual([]);
  });

  it('hands the driver fresh, prepared values', async () => {
    const { driver, calls } = stubDriver();
    const store = new CheckedContextStore(driver);
    const metadata = { nested: { list: [1] } };
    await store.openChat({ chatId: 'c', userId: 'u', metadata });
    await store.openChat({ chatId: 'c', userId: 'u', title: 'T' });
    await store.createBranch({ chatId: 'c', name: 'b', headMessageId: null });
    await store.createCheckpoint({ chatId: 'c', name: 'p', messageId: 'm', replace: true });
    const saved = message('m', 'é');
    await store.commit({ chatId: 'c', branch: 'main', expectedHeadId: null, messages: [saved] });
    await store.getChain({ chatId: 'c', headMessageId: 'm', limit: 2 });
    expect(calls.map((entry) => entry.argument)).toEqual([
      { chatId: 'c', userId: 'u', title: null, metadata, metadataJson: '{"nested":{"list":[1]}}' },
      { chatId: 'c', userId: 'u', title: 'T', metadata: undefined, metadataJson: '{}' },
      { chatId: 'c', name: 'b', headMessageId: null, activate: false },
      { chatId: 'c', name: 'p', messageId: 'm', replace: true },
      {
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [
          {
            id: 'm',
            messageId: 'm',
            role: 'user',
            json: JSON.stringify(message('m', 'é').message),
            message: saved.message,
            engineRecordJson: null,
            newVersion: false,
          },
        ],
        fork: undefined,
      },
      { chatId: 'c', headMessageId: 'm', until: undefined, limit: 2 },
    ]);
    // The metadata the driver got is a copy: the caller's object is not reachable from it.
    expect((calls[0]?.argument as { metadata?: unknown } | undefined)?.metadata).not.toBe(metadata);
    // A message is what `json` holds; `message` is the caller's object, for a read in the same
    // call only (to index its text without parsing `json` again).
    const committed = calls[4]?.argument as { messages: { message: unknown }[] } | undefined;
    expect(committed?.messages[0]?.message).toBe(saved.message);
  });

  it('passes an engine record on to the driver, serialized', async () => {
    const entry = { ...message('m'), engineRecord: { usage: { n: 1 } } };
    const input = { chatId: 'c', branch: 'main', expectedHeadId: null, messages: [entry] };
    const { driver, calls } = stubDriver();
    await new CheckedContextStore(driver).commit(input);
    expect(calls[0]?.argument).toMatchObject({
      messages: [{ id: 'm', engineRecordJson: '{"usage":{"n":1}}' }],
    });
  });

  it('refuses JSON and titles above maxJsonBytes, naming the field, before the driver', async () => {
    const { driver, calls } = stubDriver({ maxJsonBytes: 64 });
    const store = new CheckedContextStore(driver);
    const error = await store
      .commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [message('a'), message('b', 'é'.repeat(40))],
      })
      .catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as ValidationError).issues[0]?.path).toBe('messages[1].message');
    expect((error as Error).message).toMatch(/bytes, more than the store accepts \(64\)/);
    await expect(
      store.updateChat({ chatId: 'c', metadata: { blob: 'x'.repeat(64) } }),
    ).rejects.toThrow('updateChat(input): metadata is');
    await expect(
      store.openChat({ chatId: 'c', userId: 'u', title: '漢'.repeat(22) }),
    ).rejects.toThrow('openChat(input): title is 66 bytes');
    expect(calls).toEqual([]);
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [message('a')],
    });
    expect(calls).toHaveLength(1);
  });

  it('cuts the page and makes the cursor from the one extra chat the driver returns', async () => {
    const chats = ['a', 'b', 'c'].map((id, index) => ({ ...chat, id, updatedAt: 10 - index }));
    const { driver, calls } = stubDriver({
      listChats: (query) => {
        calls.push({ method: 'listChats', argument: query });
        return chats.slice(0, query.limit + 1);
      },
    });
    const store = new CheckedContextStore(driver);
    const first = await store.listChats({ userId: 'u', limit: 2 });
    expect(first.items.map((item) => item.id)).toEqual(['a', 'b']);
    expect(first.nextCursor).toBe('9:b');
    const last = await store.listChats({ userId: 'u', limit: 3, cursor: '9:b' });
    expect(last.nextCursor).toBeNull();
    expect(calls.at(-1)?.argument).toEqual({
      userId: 'u',
      limit: 3,
      after: { updatedAt: 9, id: 'b' },
    });
  });

  it('searchMessages: prefix refused unless searchPrefix is declared, passed on when it is', async () => {
    const plain = stubDriver({
      capabilities: { persistent: false, multiProcess: false, search: true },
      searchMessages: () => [],
    });
    await expect(
      new CheckedContextStore(plain.driver).searchMessages?.({
        userId: 'u',
        query: 'fib',
        prefix: true,
      }),
    ).rejects.toThrow('capabilities.searchPrefix');
    const { driver, calls } = stubDriver({
      capabilities: { persistent: false, multiProcess: false, search: true, searchPrefix: true },
      searchMessages(query) {
        calls.push({ method: 'searchMessages', argument: query });
        return [];
      },
    });
    const store = new CheckedContextStore(driver);
    await store.searchMessages?.({ userId: 'u', query: 'fib', prefix: true });
    await store.searchMessages?.({ userId: 'u', query: 'fib' });
    expect(calls.map((entry) => (entry.argument as { prefix: boolean }).prefix)).toEqual([
      true,
      false,
    ]);
  });

  it('searchMessages: hits with role and snippet, the page cut and the next cursor', async () => {
    const match = (index: number): SearchMatch => ({
      chatId: 'c',
      messageId: `m${index}`,
      sequence: index,
      score: 10 - index,
      message: { id: `m${index}`, role: 'user', parts: [{ type: 'text', text: `hit ${index}` }] },
      branches: ['main'],
    });
    const { driver, calls } = stubDriver({
      capabilities: { persistent: false, multiProcess: false, search: true },
      searchMessages(query) {
        calls.push({ method: 'searchMessages', argument: query });
        return [match(1), match(2), match(3)];
      },
    });
    const store = new CheckedContextStore(driver);
    const page = await store.searchMessages?.({ userId: 'u', query: 'hit', limit: 2 });
    expect(page?.items.map((hit) => [hit.messageId, hit.role, hit.snippet])).toEqual([
      ['m1', 'user', 'hit 1'],
      ['m2', 'user', 'hit 2'],
    ]);
    expect(calls.map((entry) => entry.argument)).toEqual([
      {
        userId: 'u',
        chatId: undefined,
        branch: undefined,
        terms: ['hit'],
        prefix: false,
        limit: 2,
        after: undefined,
      },
    ]);
    const next = await store.searchMessages?.({
      userId: 'u',
      query: 'hit',
      limit: 2,
      cursor: page?.nextCursor as string,
    });
    // The next page starts after the last hit's sort key.
    expect(calls[1]?.argument).toMatchObject({ after: { score: 8, chatId: 'c', sequence: 2 } });
    expect(next?.nextCursor).not.toBeNull();
    await expect(store.searchMessages?.({ userId: 'u', query: '***' })).rejects.toThrow(
      ValidationError,
    );
  });
});
