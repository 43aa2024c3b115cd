import type {
  AppendInput,
  AppendResult,
  BranchRecord,
  ContextLaneRecord,
  ContextStore,
  ContextStoreCapabilities,
  ForkBranchInput,
  SaveContextInput,
} from '@ctxgraph/fragments-core';
import { describe, expectTypeOf, it } from 'vitest';
import { InMemoryContextStore } from './in-memory-context-store';

describe('InMemoryContextStore types', () => {
  it('is a v1 ContextStore, disposable with await using', () => {
    expectTypeOf<InMemoryContextStore>().toExtend<ContextStore>();
    expectTypeOf<InMemoryContextStore>().toExtend<AsyncDisposable>();
    expectTypeOf<InMemoryContextStore['specificationVersion']>().toEqualTypeOf<'v1'>();
    expectTypeOf<InMemoryContextStore['capabilities']>().toEqualTypeOf<ContextStoreCapabilities>();
    expectTypeOf(new InMemoryContextStore().toJSON()).toEqualTypeOf<string>();
  });

  it('always serves append, forkBranch and the context lane: its type says so', () => {
    expectTypeOf<InMemoryContextStore['append']>().toEqualTypeOf<
      (input: AppendInput) => Promise<AppendResult>
    >();
    expectTypeOf<InMemoryContextStore['forkBranch']>().toEqualTypeOf<
      (input: ForkBranchInput) => Promise<BranchRecord>
    >();
    expectTypeOf<InMemoryContextStore['getContext']>().toEqualTypeOf<
      (chatId: string) => Promise<ContextLaneRecord>
    >();
    expectTypeOf<InMemoryContextStore['saveContext']>().toEqualTypeOf<
      (input: SaveContextInput) => Promise<ContextLaneRecord>
    >();
  });

  it('takes no constructor options', () => {
    expectTypeOf(InMemoryContextStore).constructorParameters.toEqualTypeOf<[]>();
  });
});
