import { expectTypeOf, test } from 'vitest';
import {
  type ContextFragment,
  type ContextRenderer,
  type ContextStore,
  type FragmentData,
  fragment,
  hint,
  isFragment,
  isLazyFragment,
  type LazyFragment,
  lastAssistantMessage,
  type PrincipleData,
  policy,
  principle,
  type TermData,
  term,
  ValidationError,
} from './index';

test('builders return typed fragments', () => {
  expectTypeOf(term('a', 'b')).toEqualTypeOf<ContextFragment<TermData>>();
  expectTypeOf(hint('x')).toEqualTypeOf<ContextFragment<string>>();
  expectTypeOf(
    principle({ title: 't', description: 'd', policies: [policy({ rule: 'r' })] }),
  ).toEqualTypeOf<ContextFragment<PrincipleData>>();
  expectTypeOf(
    fragment('x', 'a', 1, true, null, [hint('h')], { k: 'v' }),
  ).toEqualTypeOf<ContextFragment>();
  // @ts-expect-error term needs two strings
  term('only one');
  // @ts-expect-error a function is not fragment data
  fragment('x', () => 1);
});

test('FragmentData is recursive', () => {
  expectTypeOf<{ a: [{ b: ContextFragment }] }>().toExtend<FragmentData>();
  expectTypeOf<Date>().not.toExtend<FragmentData>();
});

test('guards narrow', () => {
  const value: unknown = {};
  if (isFragment(value)) expectTypeOf(value).toEqualTypeOf<ContextFragment>();
  if (isLazyFragment(value)) expectTypeOf(value).toEqualTypeOf<LazyFragment>();
  expectTypeOf(lastAssistantMessage('x')).toEqualTypeOf<LazyFragment>();
});

test('contracts carry the specification version', () => {
  expectTypeOf<ContextStore['specificationVersion']>().toEqualTypeOf<'v1'>();
  expectTypeOf<ContextRenderer['specificationVersion']>().toEqualTypeOf<'v1'>();
  expectTypeOf<ReturnType<ContextRenderer['render']>>().toEqualTypeOf<string>();
});

test('isInstance narrows to the subclass', () => {
  const error: unknown = new Error();
  if (ValidationError.isInstance(error))
    expectTypeOf(error.issues).toEqualTypeOf<
      readonly { readonly path: string; readonly message: string }[]
    >();
});
