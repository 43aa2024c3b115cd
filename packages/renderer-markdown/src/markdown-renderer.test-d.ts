import type { ContextRenderer, TreeRendererOptions } from '@ctxgraph/fragments-core';
import { describe, expectTypeOf, it } from 'vitest';
import { MarkdownRenderer, type MarkdownRendererOptions } from './index';

describe('MarkdownRenderer types', () => {
  it('is a ContextRenderer with a literal format', () => {
    expectTypeOf<MarkdownRenderer>().toExtend<ContextRenderer>();
    expectTypeOf<MarkdownRenderer['format']>().toEqualTypeOf<'markdown'>();
    expectTypeOf<MarkdownRenderer['specificationVersion']>().toEqualTypeOf<'v1'>();
  });

  it('takes the walk options and its own', () => {
    expectTypeOf<MarkdownRendererOptions>().toExtend<TreeRendererOptions>();
    expectTypeOf<MarkdownRendererOptions['headingLevel']>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error: headingLevel is a number
    new MarkdownRenderer({ headingLevel: '##' });
  });
});
