import { describe, expectTypeOf, it } from 'vitest';
import type { AppendInput, AppendResult, ContextStore } from '../context-store';
import {
  type Awaitable,
  CheckedContextStore,
  type ContextStoreDriver,
  defineContextStore,
  type PreparedCommit,
} from './index';

describe('store kit types', () => {
  it('makes a v1 ContextStore whose optional methods stay optional', () => {
    expectTypeOf<CheckedContextStore>().toExtend<ContextStore>();
    expectTypeOf(defineContextStore).returns.toEqualTypeOf<CheckedContextStore>();
    expectTypeOf<CheckedContextStore['append']>().toEqualTypeOf<
      ((input: AppendInput) => Promise<AppendResult>) | undefined
    >();
  });

  it('lets a subclass that always serves an ability declare its method as present', () => {
    class AlwaysAppends extends CheckedContextStore {
      declare readonly append: (input: AppendInput) => Promise<AppendResult>;
    }
    expectTypeOf<AlwaysAppends['append']>().toEqualTypeOf<
      (input: AppendInput) => Promise<AppendResult>
    >();
  });

  it('lets driver methods answer synchronously or with a promise', () => {
    expectTypeOf<ReturnType<ContextStoreDriver['commit']>>().toEqualTypeOf<
      Awaitable<Awaited<ReturnType<ContextStore['commit']>>>
    >();
    expectTypeOf<Parameters<ContextStoreDriver['commit']>[0]>().toEqualTypeOf<PreparedCommit>();
  });
});
