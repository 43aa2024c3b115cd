import type { ContextRenderer, TreeRendererOptions } from '@ctxgraph/fragments-core';
import { describe, expectTypeOf, it } from 'vitest';
import { XmlRenderer, type XmlRendererOptions } from './index';

describe('XmlRenderer types', () => {
  it('is a ContextRenderer with a literal format', () => {
    expectTypeOf<XmlRenderer>().toExtend<ContextRenderer>();
    expectTypeOf<XmlRenderer['format']>().toEqualTypeOf<'xml'>();
    expectTypeOf<XmlRenderer['specificationVersion']>().toEqualTypeOf<'v1'>();
  });

  it('takes the walk options and its own', () => {
    expectTypeOf<XmlRendererOptions>().toExtend<TreeRendererOptions>();
    expectTypeOf<XmlRendererOptions['indent']>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error: indent is a number of spaces
    new XmlRenderer({ indent: '  ' });
  });
});
