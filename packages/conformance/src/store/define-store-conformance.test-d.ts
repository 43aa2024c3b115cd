import type { ContextStore, StoredMessage } from '@ctxgraph/fragments-core';
import { describe, expectTypeOf, it } from 'vitest';
import {
  defineStoreConformance,
  type StoreConformanceOptions,
  type StoreFactoryContext,
} from './define-store-conformance';
import { uiMessageFixtures } from './ui-message-fixtures';

declare const store: ContextStore;

describe('store kit types', () => {
  it('accepts sync or async factories and only needs a name and createStore', () => {
    expectTypeOf<{
      name: string;
      createStore: () => ContextStore;
    }>().toExtend<StoreConformanceOptions>();
    expectTypeOf<{
      name: string;
      createStore: () => Promise<ContextStore>;
    }>().toExtend<StoreConformanceOptions>();
    expectTypeOf<{ name: string }>().not.toExtend<StoreConformanceOptions>();
    expectTypeOf<{
      name: string;
      createStore: (context: StoreFactoryContext) => ContextStore;
    }>().toExtend<StoreConformanceOptions>();
    expectTypeOf<StoreFactoryContext['clock']>().toEqualTypeOf<() => number>();
    expectTypeOf<StoreConformanceOptions['reopenStore']>().toEqualTypeOf<
      | ((
          store: ContextStore,
          context: StoreFactoryContext,
        ) => ContextStore | Promise<ContextStore>)
      | undefined
    >();
    expectTypeOf<StoreConformanceOptions['destroyStore']>().toEqualTypeOf<
      ((store: ContextStore) => void | Promise<void>) | undefined
    >();
    expectTypeOf(defineStoreConformance).returns.toEqualTypeOf<void>();
    expectTypeOf(defineStoreConformance).parameter(0).toEqualTypeOf<StoreConformanceOptions>();
    expectTypeOf(store).toExtend<ContextStore>();
  });

  it('types the fixtures as read-only stored messages', () => {
    expectTypeOf(uiMessageFixtures).toEqualTypeOf<readonly StoredMessage[]>();
  });
});
