import type { ContextStore, ContextStoreCapabilities } from '@ctxgraph/fragments-core';
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

  it('takes no constructor options', () => {
    expectTypeOf(InMemoryContextStore).constructorParameters.toEqualTypeOf<[]>();
  });
});
