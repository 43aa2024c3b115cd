import { describe, expect, it } from 'vitest';
import {
  ChatNotFoundError,
  HeadConflictError,
  StoreError,
  ValidationError,
} from '../../errors/errors';
import type { ContextStore } from '../context-store';
import type { BranchRecord, ChatRecord } from '../records';
import { CheckedContextStore, defineContextStore } from './checked-context-store';
import type { ContextStoreDriver, StoreCall } from './context-store-driver';
import type { SearchMatch } from './search-input';

// A driver that records what it was called with and answers with fixed records, so each test is
// about what the wrapper does around it.

const chat: ChatRecord = {
  id: 'c',
  userId: 'u',
  title: null,
  metadata: {},
  activeBranch: 'main',
  version: 0,
  rewrittenAt: 0,
  createdAt: 1,
  updatedAt: 1,
};
const branch: BranchRecord = {
  chatId: 'c',
  name: 'main',
  headMessageId: null,
  createdAt: 1,
  updatedAt: 1,
};

type Calls = { method: string; argument: unknown }[];

function stubDriver(overrides: Partial<ContextStoreDriver> = {}): {
  driver: ContextStoreDriver;
  calls: Calls;
} {
  const calls: Calls = [];
  const record =
    <T>(method: string, answer: T) =>
    (argument: unknown): T => {
      calls.push({ method, argument });
      return answer;
    };
  const driver: ContextStoreDriver = {
    name: 'StubStore',
    capabilities: { persistent: false, multiProcess: false },
    openChat: record('openChat', { chat, branch, created: true }),
    getChat: record('getChat', chat),
    updateChat: record('updateChat', chat),
    listChats: record('listChats', [chat]),
    deleteChat: record('deleteChat', true),
    getHead: record('getHead', { version: 0, headMessageId: null, rewrittenAt: 0 }),
    commit: record('commit', { headMessageId: 'm', version: 1, rewrittenAt: 0, nodes: [] }),
    getChain: record('getChain', { nodes: [], nextCursor: null, reachedUntil: false }),
    getMessage: record('getMessage', null),
    createBranch: record('createBranch', branch),
    getBranch: record('getBranch', branch),
    listBranches: record('listBranches', [branch]),
    setActiveBranch: record('setActiveBranch', branch),
    createCheckpoint: record('createCheckpoint', {
      chatId: 'c',
      name: 'p',
      messageId: 'm',
      createdAt: 1,
    }),
    getCheckpoint: record('getCheckpoint', null),
    listCheckpoints: record('listCheckpoints', []),
    deleteCheckpoint: record('deleteCheckpoint', false),
    getGraph: record('getGraph', { chat, nodes: [], branches: [branch], checkpoints: [] }),
    ...overrides,
  };
  return { driver, calls };
}

const message = (id: string, text = id) => ({
  id,
  message: { id, role: 'user', parts: [{ type: 'text', text }] },
});

/** One valid call of every required method. */
const everyCall: readonly [string, (store: ContextStore) => Promise<unknown>][] = [
  ['openChat(input)', (store) => store.openChat({ chatId: 'c', userId: 'u' })],
  ['getChat(chatId)', (store) => store.getChat('c')],
  ['updateChat(input)', (store) => store.updateChat({ chatId: 'c', title: 't' })],
  ['listChats(input)', (store) => store.listChats({ userId: 'u' })],
  ['deleteChat(chatId)', (store) => store.deleteChat('c')],
  ['getHead(input)', (store) => store.getHead({ chatId: 'c', branch: 'main' })],
  [
    'commit(input)',
    (store) =>
      store.commit({ chatId: 'c', branch: 'main', expectedHeadId: null, messages: [message('m')] }),
  ],
  ['getChain(input)', (store) => store.getChain({ chatId: 'c', headMessageId: 'm' })],
  ['getMessage(input)', (store) => store.getMessage({ chatId: 'c', messageId: 'm' })],
  [
    'createBranch(input)',
    (store) => store.createBranch({ chatId: 'c', name: 'b', headMessageId: null }),
  ],
  ['getBranch(input)', (store) => store.getBranch({ chatId: 'c', name: 'main' })],
  ['listBranches(chatId)', (store) => store.listBranches('c')],
  ['setActiveBranch(input)', (store) => store.setActiveBranch({ chatId: 'c', name: 'main' })],
  [
    'createCheckpoint(input)',
    (store) => store.createCheckpoint({ chatId: 'c', name: 'p', messageId: 'm' }),
  ],
  ['getCheckpoint(input)', (store) => store.getCheckpoint({ chatId: 'c', name: 'p' })],
  ['listCheckpoints(chatId)', (store) => store.listCheckpoints('c')],
  ['deleteCheckpoint(input)', (store) => store.deleteCheckpoint({ chatId: 'c', name: 'p' })],
  ['getGraph(chatId)', (store) => store.getGraph('c')],
];

describe('CheckedContextStore: the driver it accepts', () => {
  it('refuses a driver without a required method, or with an ability it cannot serve', () => {
    const { driver } = stubDriver();
    const { commit: _commit, ...withoutCommit } = driver;
    const error = (() => {
      try {
        new CheckedContextStore({
          ...withoutCommit,
          name: '',
          capabilities: { persistent: false, multiProcess: 'no' as never, contextLane: true },
          getContext: () => ({ chatId: 'c', fragments: [], revision: 0, updatedAt: null }),
          maxJsonBytes: 0,
        } as unknown as ContextStoreDriver);
      } catch (caught) {
        return caught;
      }
    })();
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([
      'name',
      'capabilities.multiProcess',
      'saveContext',
      'commit',
      'maxJsonBytes',
    ]);
    expect((error as Error).message).toMatch(
      /^CheckedContextStore\(driver\): the driver cannot back a ContextStore: name: .*saveContext: capabilities.contextLane is true, so the driver must have a saveContext\(\) method/,
    );
    expect(() => new CheckedContextStore(null as never)).toThrow(ValidationError);
  });

  it('exposes each optional method exactly when its ability is declared', () => {
    const lane = {
      getContext: () => ({ chatId: 'c', fragments: [], revision: 0, updatedAt: null }),
      saveContext: () => ({ chatId: 'c', fragments: [], revision: 1, updatedAt: 1 }),
    };
    const branchAbilities = { searchMessages: () => [], prune: () => ({}) as never };
    const methods = [
      'append',
      'forkBranch',
      'getContext',
      'saveContext',
      'searchMessages',
      'prune',
    ] as const;
    const undeclared = new CheckedContextStore(
      stubDriver({
        append: () => ({}) as never,
        forkBranch: () => branch,
        ...lane,
        ...branchAbilities,
      }).driver,
    );
    for (const method of methods) expect(typeof undeclared[method], method).toBe('undefined');
    const declared = new CheckedContextStore(
      stubDriver({
        capabilities: {
          persistent: false,
          multiProcess: false,
          append: true,
          forkBranch: true,
          contextLane: true,
          search: true,
          retention: true,
        },
        append: () => ({}) as never,
        forkBranch: () => branch,
        ...lane,
        ...branchAbilities,
      }).driver,
    );
    for (const method of methods) expect(typeof declared[method], method).toBe('function');
  });

  it('findMessageNodes: present only with messageVersions, input checked, limit defaulted to 20', async () => {
    expect(
      () =>
        new CheckedContextStore(
          stubDriver({
            capabilities: { persistent: false, multiProcess: false, messageVersions: true },
          }).driver,
        ),
    ).toThrow(
      'findMessageNodes: capabilities.messageVersions is true, so the driver must have a findMessageNodes() method',
    );
    const without = new CheckedContextStore(stubDriver({ findMessageNodes: () => [] }).driver);
    expect(without.findMessageNodes).toBeUndefined();
    const { driver, calls } = stubDriver({
      capabilities: { persistent: false, multiProcess: false, messageVersions: true },
      findMessageNodes(input) {
        calls.push({ method: 'findMessageNodes', argument: input });
        return [];
      },
    });
    const store = new CheckedContextStore(driver);
    expect(await store.findMessageNodes?.({ chatId: 'c', messageId: 'm' })).toEqual([]);
    await store.findMessageNodes?.({ chatId: 'c', messageId: 'm', limit: 100 });
    for (const limit of [0, 101, 2.5, '3']) {
      await expect(
        store.findMessageNodes?.({ chatId: 'c', messageId: 'm', limit: limit as never }),
      ).rejects.toThrow(
        `findMessageNodes(input): limit must be an integer from 1 to 100 or omitted, received ${String(limit)}.`,
      );
    }
    await expect(store.findMessageNodes?.({ chatId: 'c', messageId: '' })).rejects.toThrow(
      ValidationError,
    );
    expect(calls.map((entry) => entry.argument)).toEqual([
      { chatId: 'c', messageId: 'm', limit: 20 },
      { chatId: 'c', messageId: 'm', limit: 100 },
    ]);
    // A fork-commit goes to the driver with its fork, read once and defaulted.
    await store.commit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      fork: { from: 'main' },
      messages: [{ id: 'n', message: { id: 'm', role: 'user', parts: [] } }],
    });
    expect(calls.at(-1)?.argument).toMatchObject({
      fork: { from: 'main', activate: false },
      messages: [{ id: 'n', messageId: 'm' }],
    });
  });

  it('renameBranch: present only with its ability, input checked before the driver', async () => {
    expect(
      () =>
        new CheckedContextStore(
          stubDriver({
            capabilities: { persistent: false, multiProcess: false, renameBranch: true },
          }).driver,
        ),
    ).toThrow(
      'renameBranch: capabilities.renameBranch is true, so the driver must have a renameBranch() method',
    );
    const renamed = { chatId: 'c', name: 'b', headMessageId: null, createdAt: 1, updatedAt: 2 };
    const without = new CheckedContextStore(stubDriver({ renameBranch: () => renamed }).driver);
    expect(without.renameBranch).toBeUndefined();
    const { driver, calls } = stubDriver({
      capabilities: { persistent: false, multiProcess: false, renameBranch: true },
      renameBranch(input) {
        calls.push({ method: 'renameBranch', argument: input });
        return renamed;
      },
    });
    const store = new CheckedContextStore(driver);
    expect(await store.renameBranch?.({ chatId: 'c', from: 'a', to: 'b' })).toEqual(renamed);
    await expect(store.renameBranch?.({ chatId: 'c', from: 'a', to: 'a' })).rejects.toThrow(
      /to is "a", the branch's current name/,
    );
    for (const bad of ['', 'x'.repeat(1_000), 7]) {
      await expect(
        store.renameBranch?.({ chatId: 'c', from: 'a', to: bad as never }),
      ).rejects.toThrow(ValidationError);
      await expect(
        store.renameBranch?.({ chatId: 'c', from: bad as never, to: 'b' }),
      ).rejects.toThrow(ValidationError);
    }
    await expect(store.renameBranch?.(null as never)).rejects.toThrow(ValidationError);
    expect(calls.map((entry) => entry.argument)).toEqual([{ chatId: 'c', from: 'a', to: 'b' }]);
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

  it('keeps a frozen copy of the capabilities and describes itself by name only', () => {
    const capabilities = { persistent: true, multiProcess: false };
    const store = defineContextStore(stubDriver({ capabilities }).driver);
    capabilities.persistent = false;
    expect(store.capabilities).toEqual({ persistent: true, multiProcess: false });
    expect(Object.isFrozen(store.capabilities)).toBe(true);
    expect(store.specificationVersion).toBe('v1');
    expect(JSON.stringify({ store })).toBe('{"store":"[StubStore]"}');
  });
});

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

  it('passes an engine record to a driver that declares engineRecords, and refuses it otherwise', async () => {
    const entry = { ...message('m'), engineRecord: { usage: { n: 1 } } };
    const input = { chatId: 'c', branch: 'main', expectedHeadId: null, messages: [entry] };
    const plain = stubDriver();
    await expect(new CheckedContextStore(plain.driver).commit(input)).rejects.toThrow(
      'messages[0].engineRecord: this store does not keep engine records',
    );
    expect(plain.calls).toEqual([]);
    const keeping = stubDriver({
      capabilities: { persistent: false, multiProcess: false, engineRecords: true },
    });
    await new CheckedContextStore(keeping.driver).commit(input);
    expect(keeping.calls[0]?.argument).toMatchObject({
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
});

describe('CheckedContextStore: errors', () => {
  it('turns a synchronous throw into a rejection; ctxgraph errors pass through as they are', async () => {
    const conflict = new HeadConflictError({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      currentHeadId: 'x',
    });
    const store = new CheckedContextStore(
      stubDriver({
        commit: () => {
          throw conflict;
        },
        getChat: () => Promise.reject(new ChatNotFoundError('c')),
      }).driver,
    );
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [message('m')],
      });
    }).not.toThrow();
    await expect(promise).rejects.toBe(conflict);
    await expect(store.getChat('c')).rejects.toSatisfy((error) =>
      ChatNotFoundError.isInstance(error),
    );
  });

  it('wraps any other error in a StoreError naming the call, through mapError when given', async () => {
    const boom = new TypeError('socket hang up');
    const plain = new CheckedContextStore(
      stubDriver({
        getHead: () => {
          throw boom;
        },
      }).driver,
    );
    const error = await plain
      .getHead({ chatId: 'c', branch: 'main' })
      .catch((caught: unknown) => caught);
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      "getHead(input): StubStore failed: socket hang up (the driver's error is the cause).",
    );
    expect((error as Error).cause).toBe(boom);

    const seen: StoreCall[] = [];
    class DriverDownError extends StoreError {
      static override readonly errorName: string = 'DriverDownError';
    }
    const mapped = new CheckedContextStore(
      stubDriver({
        commit: () => Promise.reject(boom),
        getChat: () => Promise.reject(new Error('other')),
        mapError: (caught, call) => {
          seen.push(call);
          return call.method === 'commit'
            ? new DriverDownError(`${call.label}: down`, { cause: caught })
            : new Error('not a ctxgraph error');
        },
      }).driver,
    );
    await expect(
      mapped.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: [message('m')],
      }),
    ).rejects.toSatisfy((caught) => DriverDownError.isInstance(caught));
    // A mapper that returns something else still ends in a StoreError.
    await expect(mapped.getChat('c')).rejects.toSatisfy(
      (caught) => StoreError.isInstance(caught) && (caught as Error).message.includes('other'),
    );
    expect(seen).toEqual([
      { method: 'commit', label: 'commit(input)', writes: true },
      { method: 'getChat', label: 'getChat(chatId)', writes: false },
    ]);
  });
});

describe('CheckedContextStore: close()', () => {
  it('refuses every call afterwards with a StoreError naming the call', async () => {
    const { driver, calls } = stubDriver();
    const store = new CheckedContextStore(driver);
    await store.close();
    for (const [label, run] of everyCall) {
      const error = await run(store).catch((caught: unknown) => caught);
      expect(StoreError.isInstance(error), label).toBe(true);
      expect((error as Error).message).toBe(`${label}: this StubStore is closed.`);
    }
    expect(calls).toEqual([]);
  });

  it('closes the driver once, after the calls under way, and returns the same promise', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const { driver } = stubDriver({
      getChat: () =>
        new Promise<ChatRecord>((resolve) => {
          release = () => {
            order.push('getChat settled');
            resolve(chat);
          };
        }),
      close: () => {
        order.push('driver closed');
      },
    });
    const store = new CheckedContextStore(driver);
    const reading = store.getChat('c');
    const first = store.close();
    const second = store.close();
    expect(second).toBe(first);
    await expect(store.getChat('c')).rejects.toThrow('getChat(chatId): this StubStore is closed.');
    release();
    await first;
    await expect(reading).resolves.toEqual(chat);
    expect(order).toEqual(['getChat settled', 'driver closed']);
    await store.close();
    expect(order).toEqual(['getChat settled', 'driver closed']);
  });

  it('gives a subclass its own guarded calls and its closed state', async () => {
    class MigratingStore extends CheckedContextStore {
      runs = 0;
      migrate(): Promise<number> {
        return this.guard('migrate()', () => {
          this.runs += 1;
          if (this.runs > 1) throw new Error('lock timeout');
          return this.runs;
        });
      }
      isClosed(): boolean {
        return this.closed;
      }
    }
    const store = new MigratingStore(stubDriver().driver);
    await expect(store.migrate()).resolves.toBe(1);
    await expect(store.migrate()).rejects.toThrow(
      "migrate(): StubStore failed: lock timeout (the driver's error is the cause).",
    );
    expect(store.isClosed()).toBe(false);
    await store.close();
    expect(store.isClosed()).toBe(true);
    await expect(store.migrate()).rejects.toThrow('migrate(): this StubStore is closed.');
  });
});
