import { describe, expect, it } from 'vitest';
import {
  ChatNotFoundError,
  HeadConflictError,
  StoreError,
  ValidationError,
} from '../../errors/errors';
import {
  OPTIONAL_CAPABILITIES,
  OPTIONAL_CAPABILITY_METHODS,
  REQUIRED_STORE_METHODS,
} from '../capabilities';
import type { ChatRecord } from '../records';
import { chat, everyCall, message, stubDriver } from './__fixtures__/stub-driver';
import { CheckedContextStore, defineContextStore } from './checked-context-store';
import type { ContextStoreDriver, StoreCall } from './context-store-driver';

describe('CheckedContextStore: the driver it accepts', () => {
  it('refuses a driver without a required method, with a capability it cannot serve, or with a flag every store now has', () => {
    const { driver } = stubDriver();
    const { commit: _commit, renameBranch: _rename, ...withoutWrites } = driver;
    const error = (() => {
      try {
        new CheckedContextStore({
          ...withoutWrites,
          name: '',
          capabilities: {
            persistent: false,
            multiProcess: 'no' as never,
            engineRecords: true,
            searchPrefix: true,
            retention: true,
          } as never,
          append: 'yes',
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
      'capabilities.engineRecords',
      'searchMessages',
      'prune',
      'capabilities.searchPrefix',
      'commit',
      'renameBranch',
      'append',
      'maxJsonBytes',
    ]);
    expect((error as Error).message).toMatch(
      /^CheckedContextStore\(driver\): the driver cannot back a ContextStore: name: .*capabilities\.engineRecords: not a capability of contract v1: every store serves engineRecords; remove the flag; .*prune: capabilities\.retention is true, so the driver must have a prune\(\) method; capabilities\.searchPrefix: needs capabilities\.search .*; commit: expected a function: every v1 store serves it/,
    );
    expect(() => new CheckedContextStore(null as never)).toThrow(ValidationError);
    for (const flag of ['append', 'forkBranch', 'renameBranch', 'contextLane', 'messageVersions'])
      expect(
        () =>
          new CheckedContextStore(
            stubDriver({
              capabilities: { persistent: false, multiProcess: false, [flag]: false } as never,
            }).driver,
          ),
        flag,
      ).toThrow(`capabilities.${flag}: not a capability of contract v1`);
  });

  it("has every required method, and each optional capability's methods exactly when it is declared", () => {
    const required = REQUIRED_STORE_METHODS;
    const optional = OPTIONAL_CAPABILITIES.flatMap(
      (capability) => OPTIONAL_CAPABILITY_METHODS[capability],
    );
    const search = { searchMessages: () => [], prune: () => ({}) as never };
    const undeclared = new CheckedContextStore(stubDriver(search).driver);
    for (const method of required) expect(typeof undeclared[method], method).toBe('function');
    for (const method of optional) expect(typeof undeclared[method], method).toBe('undefined');
    const declared = new CheckedContextStore(
      stubDriver({
        capabilities: { persistent: false, multiProcess: false, search: true, retention: true },
        ...search,
      }).driver,
    );
    for (const method of ['searchMessages', 'prune'] as const)
      expect(typeof declared[method], method).toBe('function');
    expect(typeof declared.startReply).toBe('undefined');
  });

  it('findMessageNodes: input checked, limit defaulted to 20; a fork-commit read once and defaulted', async () => {
    const { driver, calls } = stubDriver();
    const store = new CheckedContextStore(driver);
    expect(await store.findMessageNodes({ chatId: 'c', messageId: 'm' })).toEqual([]);
    await store.findMessageNodes({ chatId: 'c', messageId: 'm', limit: 100 });
    for (const limit of [0, 101, 2.5, '3']) {
      await expect(
        store.findMessageNodes({ chatId: 'c', messageId: 'm', limit: limit as never }),
      ).rejects.toThrow(
        `findMessageNodes(input): limit must be an integer from 1 to 100 or omitted, received ${String(limit)}.`,
      );
    }
    await expect(store.findMessageNodes({ chatId: 'c', messageId: '' })).rejects.toThrow(
      ValidationError,
    );
    expect(calls.map((entry) => entry.argument)).toEqual([
      { chatId: 'c', messageId: 'm', limit: 20 },
      { chatId: 'c', messageId: 'm', limit: 100 },
    ]);
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

  it('renameBranch: input checked before the driver', async () => {
    const renamed = { chatId: 'c', name: 'b', headMessageId: null, createdAt: 1, updatedAt: 2 };
    const { driver, calls } = stubDriver({
      renameBranch(input) {
        calls.push({ method: 'renameBranch', argument: input });
        return renamed;
      },
    });
    const store = new CheckedContextStore(driver);
    expect(await store.renameBranch({ chatId: 'c', from: 'a', to: 'b' })).toEqual(renamed);
    await expect(store.renameBranch({ chatId: 'c', from: 'a', to: 'a' })).rejects.toThrow(
      /to is "a", the branch's current name/,
    );
    for (const bad of ['', 'x'.repeat(1_000), 7]) {
      await expect(
        store.renameBranch({ chatId: 'c', from: 'a', to: bad as never }),
      ).rejects.toThrow(ValidationError);
      await expect(
        store.renameBranch({ chatId: 'c', from: bad as never, to: 'b' }),
      ).rejects.toThrow(ValidationError);
    }
    await expect(store.renameBranch(null as never)).rejects.toThrow(ValidationError);
    expect(calls.map((entry) => entry.argument)).toEqual([{ chatId: 'c', from: 'a', to: 'b' }]);
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
