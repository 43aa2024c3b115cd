import { describe, expectTypeOf, it } from 'vitest';
import type { OptionalStoreMethod, RequiredStoreMethod } from '../capabilities';
import type { AppendInput, AppendResult, ContextStore } from '../context-store';
import type { ChatRecord, Page } from '../records';
import type { PruneInput, PruneResult } from '../retention';
import type { ChatListQuery } from './chat-input';
import {
  type Awaitable,
  CheckedContextStore,
  type ContextStoreDriver,
  type DriverMethodName,
  defineContextStore,
  type PreparedCommit,
} from './index';

/** The names of the function members of a type. */
type MethodNames<T> = {
  [Key in keyof T]-?: NonNullable<T[Key]> extends (...args: never[]) => unknown ? Key : never;
}[keyof T];

describe('the contract tables', () => {
  it('name every method of ContextStore once: required or brought by a capability', () => {
    expectTypeOf<RequiredStoreMethod | OptionalStoreMethod>().toEqualTypeOf<
      MethodNames<ContextStore>
    >();
    expectTypeOf<Extract<RequiredStoreMethod, OptionalStoreMethod>>().toBeNever();
  });

  it('make the required methods required and the optional ones optional', () => {
    expectTypeOf<Pick<ContextStore, RequiredStoreMethod>>().toEqualTypeOf<
      Required<Pick<ContextStore, RequiredStoreMethod>>
    >();
    expectTypeOf<Pick<ContextStore, OptionalStoreMethod>>().toEqualTypeOf<
      Partial<Pick<ContextStore, OptionalStoreMethod>>
    >();
  });

  it('derive a driver method for every contract method but close and watchChat', () => {
    expectTypeOf<DriverMethodName>().toEqualTypeOf<
      Exclude<MethodNames<ContextStore>, 'close' | 'watchChat'>
    >();
  });
});

describe('store kit types', () => {
  it('makes a v1 ContextStore whose required methods are present and optional ones optional', () => {
    expectTypeOf<CheckedContextStore>().toExtend<ContextStore>();
    expectTypeOf(defineContextStore).returns.toEqualTypeOf<CheckedContextStore>();
    expectTypeOf<CheckedContextStore['append']>().toEqualTypeOf<
      (input: AppendInput) => Promise<AppendResult>
    >();
    expectTypeOf<CheckedContextStore['prune']>().toEqualTypeOf<
      ((input: PruneInput) => Promise<PruneResult>) | undefined
    >();
  });

  it('lets a subclass that always serves a capability declare its method as present', () => {
    class AlwaysPrunes extends CheckedContextStore {
      declare readonly prune: (input: PruneInput) => Promise<PruneResult>;
    }
    expectTypeOf<AlwaysPrunes['prune']>().toEqualTypeOf<
      (input: PruneInput) => Promise<PruneResult>
    >();
  });

  it('lets driver methods answer synchronously or with a promise', () => {
    expectTypeOf<ReturnType<ContextStoreDriver['commit']>>().toEqualTypeOf<
      Awaitable<Awaited<ReturnType<ContextStore['commit']>>>
    >();
    expectTypeOf<Parameters<ContextStoreDriver['commit']>[0]>().toEqualTypeOf<PreparedCommit>();
  });

  it('derives the driver from the contract: prepared inputs in, the contract result out', () => {
    expectTypeOf<Parameters<ContextStoreDriver['listChats']>[0]>().toEqualTypeOf<ChatListQuery>();
    expectTypeOf<ReturnType<ContextStoreDriver['listChats']>>().toEqualTypeOf<
      Awaitable<readonly ChatRecord[]>
    >();
    expectTypeOf<Awaited<ReturnType<ContextStore['listChats']>>>().toEqualTypeOf<
      Page<ChatRecord>
    >();
    // append and forkBranch may be left to the kit; the rest of the required part may not.
    expectTypeOf<ContextStoreDriver['append']>().toExtend<unknown>();
    expectTypeOf<undefined>().toExtend<ContextStoreDriver['append']>();
    expectTypeOf<undefined>().toExtend<ContextStoreDriver['forkBranch']>();
    expectTypeOf<undefined>().not.toExtend<ContextStoreDriver['renameBranch']>();
    expectTypeOf<undefined>().not.toExtend<ContextStoreDriver['findMessageNodes']>();
    expectTypeOf<undefined>().not.toExtend<ContextStoreDriver['getContext']>();
  });
});
