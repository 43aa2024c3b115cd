import {
  type ContextFragment,
  hint,
  isFragment,
  policy,
  term,
  ValidationError,
  walkFragments,
} from '@ctxgraph/fragments-core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { serializationError } from './__fixtures__/serialization-error';
import {
  builtinFragmentTypes,
  createSerializer,
  defaultSerializer,
  defineFragmentType,
  FragmentSerializer,
  type FragmentTypeDefinition,
  fromFragment,
  type SerializedFragment,
  type SerializedGroup,
} from './index';

// A third-party fragment type: a metric with its SQL, built by the third party's own builder.
interface MetricData {
  name: string;
  sql: string;
  unit?: string;
  [key: string]: string | undefined;
}

function metric(name: string, sql: string, unit?: string): ContextFragment<MetricData> {
  if (name.trim() === '') {
    throw new ValidationError('metric(name, sql): name must not be blank', {
      issues: [{ path: 'name', message: 'must not be blank' }],
    });
  }
  return { name: 'metric', data: unit === undefined ? { name, sql } : { name, sql, unit } };
}

const metricType = defineFragmentType({
  type: 'metric',
  // Deliberately lenient about blank names, so the builder's own check is what refuses them.
  schema: z.strictObject({
    type: z.literal('metric'),
    name: z.string(),
    sql: z.string(),
    unit: z.string().optional(),
  }),
  fromFragment: (fragment) => ({ ...(fragment.data as MetricData) }),
  toFragment: ({ name, sql, unit }) => metric(name, sql, unit),
});

// A container type whose items may be any registered fragment (built-in or custom) or text.
const dashboardType = defineFragmentType({
  type: 'dashboard',
  schema: z.strictObject({
    type: z.literal('dashboard'),
    title: z.string(),
    items: z.array(z.unknown()),
  }),
  fromFragment: (fragment, context) => {
    const data = fragment.data as { title: string; items: ContextFragment[] };
    return { title: data.title, items: context.encode(data.items, 'items') };
  },
  toFragment: ({ title, items }, context) => ({
    name: 'dashboard',
    data: { title, items: context.decode(items, 'items') },
  }),
});

const serializer = createSerializer({ types: [metricType, dashboardType] });

describe('createSerializer with custom types', () => {
  it('round-trips a custom fragment next to the built-in ones', () => {
    const original = metric('ARR', 'SELECT sum(amount) * 12 FROM subscriptions', 'USD');
    const stored = serializer.fromFragment(original);
    expect(stored).toEqual({
      type: 'metric',
      name: 'ARR',
      sql: 'SELECT sum(amount) * 12 FROM subscriptions',
      unit: 'USD',
    });
    expect(serializer.toFragment(JSON.parse(JSON.stringify(stored)))).toEqual(original);
    expect(serializer.fromFragment(term('MRR', 'monthly'))).toEqual({
      type: 'term',
      name: 'MRR',
      definition: 'monthly',
    });
    expect(serializer.types).toEqual([...defaultSerializer.types, 'metric', 'dashboard']);
  });

  it('round-trips nested built-in and custom fragments through the same registry', () => {
    const original: ContextFragment = {
      name: 'dashboard',
      data: {
        title: 'Revenue',
        items: [
          metric('ARR', 'SELECT 1'),
          policy({ rule: 'Refresh daily', policies: ['at 06:00'] }),
          hint('UTC'),
        ],
      },
    };
    const stored = serializer.fromFragment(original);
    expect(stored).toEqual({
      type: 'dashboard',
      title: 'Revenue',
      items: [
        { type: 'metric', name: 'ARR', sql: 'SELECT 1' },
        { type: 'policy', rule: 'Refresh daily', policies: ['at 06:00'] },
        { type: 'hint', text: 'UTC' },
      ],
    });
    const hydrated = serializer.toFragment(JSON.parse(JSON.stringify(stored)));
    expect(walkFragments([hydrated])).toEqual(walkFragments([original]));
  });

  it("surfaces a builder's own validation error with the field's full path", () => {
    const top = serializationError(() =>
      serializer.toFragment({ type: 'metric', name: ' ', sql: 'x' }),
    );
    expect(top.issues).toEqual([{ path: 'name', message: 'must not be blank' }]);
    expect(top.message).toBe(
      'toFragment: the "metric" fragment was refused: name: must not be blank.',
    );
    expect(ValidationError.isInstance(top.cause)).toBe(true);
    const nested = serializationError(() =>
      serializer.toFragment({
        type: 'dashboard',
        title: 't',
        items: ['x', { type: 'metric', name: '', sql: 'y' }],
      }),
    );
    expect(nested.issues).toEqual([{ path: 'items[1].name', message: 'must not be blank' }]);
  });

  it('reports nested schema problems of custom containers with full paths', () => {
    const error = serializationError(() =>
      serializer.toFragment({
        type: 'dashboard',
        title: 't',
        items: [{ type: 'policy', rule: 3 }],
      }),
    );
    expect(error.issues).toEqual([
      { path: 'items[0].rule', message: 'expected string, received number' },
    ]);
  });

  it('keeps the default serializer unchanged (no global registration)', () => {
    expect(() => fromFragment(metric('ARR', 'SELECT 1'))).toThrow(/unknown fragment name "metric"/);
    expect(() => defaultSerializer.toFragment({ type: 'metric', name: 'a', sql: 'b' })).toThrow(
      /unknown serialized fragment type "metric"/,
    );
  });

  it('extends an existing serializer into a new one', () => {
    const extended = defaultSerializer.extend(metricType);
    expect(extended).toBeInstanceOf(FragmentSerializer);
    expect(extended).not.toBe(defaultSerializer);
    expect(extended.toFragment({ type: 'metric', name: 'a', sql: 'b' })).toEqual(metric('a', 'b'));
    expect(defaultSerializer.schemaFor('metric')).toBeUndefined();
    expect(extended.schemaFor('metric')).toBe(metricType.schema);
  });

  it('maps a fragment name to a differently named type', () => {
    const versioned = createSerializer({
      builtins: false,
      types: [
        defineFragmentType({
          ...metricType,
          type: 'metric/v2',
          fragmentName: 'metric',
          schema: z.strictObject({
            type: z.literal('metric/v2'),
            name: z.string(),
            sql: z.string(),
          }),
          toFragment: ({ name, sql }) => metric(name, sql),
        }),
      ],
    });
    const stored = versioned.fromFragment(metric('ARR', 'SELECT 1'));
    expect(stored).toEqual({ type: 'metric/v2', name: 'ARR', sql: 'SELECT 1' });
    expect(versioned.types).toEqual(['metric/v2']);
    expect(() => versioned.fromFragment(hint('x'))).toThrow(/unknown fragment name "hint"/);
  });

  it('offers bound methods that work when destructured', () => {
    const { fromFragment: serialize, toFragment: hydrate, isSerializedFragment } = serializer;
    const stored = serialize(metric('ARR', 'SELECT 1'));
    expect(isSerializedFragment(stored)).toBe(true);
    expect(isSerializedFragment({ type: 'metric', name: 'ARR' })).toBe(false);
    expect(isSerializedFragment({ type: 'unknown' })).toBe(false);
    expect(isSerializedFragment('metric')).toBe(false);
    expect(isFragment(hydrate(stored))).toBe(true);
  });

  it('types the serialized union with the custom types', () => {
    expectTypeOf(serializer.fromFragment).returns.toEqualTypeOf<
      | SerializedFragment
      | SerializedGroup
      | { type: 'metric'; name: string; sql: string; unit?: string | undefined }
      | {
          type: 'dashboard';
          title: string;
          items: unknown[];
        }
    >();
    expectTypeOf(defaultSerializer.fromFragment).returns.toEqualTypeOf<
      SerializedFragment | SerializedGroup
    >();
  });
});

describe('createSerializer refuses bad registries', () => {
  it('refuses a duplicate type or fragment name, naming the index', () => {
    const duplicateType = serializationError(() =>
      createSerializer({ types: [metricType, metricType] }),
    );
    expect(duplicateType.issues).toEqual([
      { path: 'types[20].type', message: 'type "metric" is already registered' },
    ]);
    const clash = serializationError(() =>
      createSerializer({
        types: [{ ...metricType, type: 'my-hint', fragmentName: 'hint' } as FragmentTypeDefinition],
      }),
    );
    expect(clash.issues).toEqual([
      {
        path: 'types[19].fragmentName',
        message: 'fragments named "hint" are already handled by type "hint"',
      },
    ]);
  });

  it('refuses malformed definitions', () => {
    const bad = [
      null,
      {
        type: '',
        schema: metricType.schema,
        fromFragment: () => ({}),
        toFragment: () => hint('x'),
      },
      { type: 'a', schema: {}, fromFragment: () => ({}), toFragment: () => hint('x') },
      { type: 'b', schema: metricType.schema, toFragment: () => hint('x') },
      { type: 'c', schema: metricType.schema, fromFragment: () => ({}) },
      {
        type: 'd',
        fragmentName: ' ',
        schema: metricType.schema,
        fromFragment: () => ({}),
        toFragment: () => hint('x'),
      },
    ] as unknown as FragmentTypeDefinition[];
    const error = serializationError(() => createSerializer({ builtins: false, types: bad }));
    expect(error.issues).toEqual([
      { path: 'types[0]', message: 'expected a fragment type definition, received null' },
      { path: 'types[1]', message: 'type must be a non-empty string' },
      { path: 'types[2]', message: 'schema must be a zod schema' },
      { path: 'types[3]', message: 'fromFragment must be a function' },
      { path: 'types[4]', message: 'toFragment must be a function' },
      { path: 'types[5]', message: 'fragmentName must be a non-empty string when given' },
    ]);
  });

  it('refuses conversions that return the wrong kind of value or throw', () => {
    const broken = createSerializer({
      builtins: false,
      types: [
        defineFragmentType({
          type: 'broken',
          schema: z.strictObject({ type: z.literal('broken') }),
          fromFragment: () => 'nope' as unknown as Record<string, unknown>,
          toFragment: () => 'nope' as unknown as ContextFragment,
        }),
        defineFragmentType({
          type: 'throws',
          schema: z.strictObject({ type: z.literal('throws') }),
          fromFragment: () => {
            throw new TypeError('bug');
          },
          toFragment: () => {
            throw new TypeError('bug');
          },
        }),
      ],
    });
    expect(() => broken.fromFragment({ name: 'broken', data: 1 })).toThrow(
      /the "broken" type's fromFragment returned string, expected an object of fields/,
    );
    expect(() => broken.toFragment({ type: 'broken' })).toThrow(
      /the "broken" type's toFragment returned string, expected a fragment/,
    );
    const fromError = serializationError(() => broken.fromFragment({ name: 'throws', data: 1 }));
    expect(fromError.message).toContain(`the "throws" type's fromFragment threw: bug`);
    expect(fromError.cause).toBeInstanceOf(TypeError);
    expect(() => broken.toFragment({ type: 'throws' })).toThrow(
      /the "throws" type's toFragment threw: bug/,
    );
  });

  it('exposes the 19 built-in definitions for reuse', () => {
    expect(builtinFragmentTypes.map((definition) => definition.type)).toEqual(
      defaultSerializer.types,
    );
    const onlyTerms = createSerializer({
      builtins: false,
      types: builtinFragmentTypes.filter((entry) => entry.type === 'term'),
    });
    expect(onlyTerms.types).toEqual(['term']);
    expect(onlyTerms.fromFragment(term('a', 'b'))).toEqual({
      type: 'term',
      name: 'a',
      definition: 'b',
    });
  });
});
