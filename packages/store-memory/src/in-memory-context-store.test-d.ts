import type {
  AppendInput,
  AppendResult,
  BranchRecord,
  ChatChangeListener,
  ContextLaneRecord,
  ContextStore,
  ContextStoreCapabilities,
  ForkBranchInput,
  LiveReplyRead,
  ReadReplyInput,
  SaveContextInput,
} from '@ctxgraph/fragments-core';
import { describe, expectTypeOf, it } from 'vitest';
import { InMemoryContextStore, type InMemoryContextStoreOptions } from './in-memory-context-store';

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

  it('takes only optional constructor options (the clock of its live replies)', () => {
    expectTypeOf(InMemoryContextStore).constructorParameters.toEqualTypeOf<
      [options?: InMemoryContextStoreOptions]
    >();
  });

  it('always serves live replies and the change feed: its type says so', () => {
    expectTypeOf<InMemoryContextStore['watchChat']>().toEqualTypeOf<
      (chatId: string, listener: ChatChangeListener) => () => void
    >();
    expectTypeOf<InMemoryContextStore['readReply']>().toEqualTypeOf<
      (input: ReadReplyInput) => Promise<LiveReplyRead | null>
    >();
  });
});
