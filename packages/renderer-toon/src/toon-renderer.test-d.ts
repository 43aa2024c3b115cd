import type { ContextRenderer, TreeRendererOptions } from '@ctxgraph/fragments-core';
import { describe, expectTypeOf, it } from 'vitest';
import { ToonRenderer, type ToonRendererOptions, type ToonValue } from './index';

describe('ToonRenderer types', () => {
  it('is a ContextRenderer with a literal format', () => {
    expectTypeOf<ToonRenderer>().toExtend<ContextRenderer>();
    expectTypeOf<ToonRenderer['format']>().toEqualTypeOf<'toon'>();
    expectTypeOf<ToonRenderer['specificationVersion']>().toEqualTypeOf<'v1'>();
  });

  it('takes the walk options and its own', () => {
    expectTypeOf<ToonRendererOptions>().toExtend<TreeRendererOptions>();
    expectTypeOf<ToonRendererOptions['delimiter']>().toEqualTypeOf<
      'comma' | 'tab' | 'pipe' | undefined
    >();
    // @ts-expect-error: only the three TOON delimiters
    new ToonRenderer({ delimiter: ';' });
  });

  it('builds JSON-model values', () => {
    expectTypeOf<string>().toExtend<ToonValue>();
    expectTypeOf<{ a: [1, 'x', { b: true }] }>().toExtend<ToonValue>();
    expectTypeOf<undefined>().not.toExtend<ToonValue>();
  });
});
