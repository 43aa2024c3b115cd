import {
  builtinFragmentDescriptors,
  type ContextFragment,
  fragment,
  hint,
  policy,
  principle,
  role,
  term,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { examples } from './__fixtures__/examples';
import { serializationError } from './__fixtures__/serialization-error';
import {
  builtinFragmentTypes,
  createSerializer,
  decodeSerializedValue,
  defineFragmentType,
  encodeSerializedValue,
  fromFragment,
  MAX_SERIALIZED_DEPTH,
  SerializationError,
  serializedFragmentSchemas,
  serializedGroupSchema,
  toFragment,
} from './index';

describe('built-in types derived from fragments-core descriptors', () => {
  it('registers exactly one serialized type per descriptor, in the same order', () => {
    expect(builtinFragmentTypes.map((type) => type.type)).toEqual(
      builtinFragmentDescriptors.map((descriptor) => descriptor.name),
    );
    expect(Object.keys(serializedFragmentSchemas)).toEqual(
      builtinFragmentDescriptors.map((descriptor) => descriptor.name),
    );
  });

  it('has an example for every descriptor', () => {
    const covered = new Set(examples.map((item) => item.flat.type));
    for (const descriptor of builtinFragmentDescriptors) expect(covered).toContain(descriptor.name);
  });

  it.each(examples.map((item) => [item.title, item] as const))(
    '%s round-trips through the derived schema and the descriptor builder',
    (_title, item) => {
      const descriptor = builtinFragmentDescriptors.find((entry) => entry.name === item.flat.type);
      if (descriptor === undefined) throw new Error(`no descriptor for ${item.flat.type}`);
      const schema = serializedFragmentSchemas[item.flat.type];
      expect(schema.parse(item.flat)).toEqual(item.flat);
      expect(fromFragment(item.fragment)).toEqual(item.flat);
      expect(toFragment(item.flat)).toEqual(item.fragment);
      // The serialized fields are the descriptor's fields, and nothing else.
      const names = descriptor.fields.map((field) => field.name);
      for (const key of Object.keys(item.flat)) {
        if (key !== 'type') expect(names).toContain(key);
      }
      // Required fields are required by the schema.
      for (const field of descriptor.fields.filter((entry) => entry.required)) {
        const { [field.name]: _dropped, ...rest } = item.flat as unknown as Record<string, unknown>;
        expect(schema.safeParse(rest).success).toBe(false);
      }
    },
  );

  it('builds through the descriptor with the builder checks', () => {
    const hintType = builtinFragmentDescriptors.find((entry) => entry.name === 'hint');
    expect(hintType?.build({ text: 'Be brief' })).toEqual(hint('Be brief'));
    expect(() => hintType?.build({ text: ' ' })).toThrow(/text: expected a non-empty string/);
  });
});

describe('named groups: fragment(name, ...children)', () => {
  const group = fragment(
    'database',
    hint('PostgreSQL'),
    fragment('constraints', hint('No DELETE'), 'plain text'),
    principle({ title: 'Order', description: 'First', policies: [policy({ rule: 'Validate' })] }),
  );
  const serialized = {
    type: 'fragment',
    name: 'database',
    children: [
      { type: 'hint', text: 'PostgreSQL' },
      {
        type: 'fragment',
        name: 'constraints',
        children: [{ type: 'hint', text: 'No DELETE' }, 'plain text'],
      },
      {
        type: 'principle',
        title: 'Order',
        description: 'First',
        policies: [{ type: 'policy', rule: 'Validate' }],
      },
    ],
  };

  it('serializes a group as { type: "fragment", name, children } and reads it back', () => {
    expect(fromFragment(group)).toEqual(serialized);
    expect(toFragment(serialized)).toEqual(group);
    expect(serializedGroupSchema.safeParse(serialized).success).toBe(true);
  });

  it('keeps an empty group and a group with one text child as lists', () => {
    const empty = fragment('empty');
    expect(fromFragment(empty)).toEqual({ type: 'fragment', name: 'empty', children: [] });
    expect(toFragment(fromFragment(empty))).toEqual(empty);
    const lone = { type: 'fragment', name: 'note', children: ['only child'] };
    expect(toFragment(lone)).toEqual({ name: 'note', data: ['only child'] });
    expect(fromFragment(toFragment(lone))).toEqual(lone);
  });

  it('goes through encodeSerializedValue and decodeSerializedValue too', () => {
    const encoded = encodeSerializedValue({ context: [role('Helpful'), group] });
    expect(encoded).toEqual({ context: [{ type: 'role', text: 'Helpful' }, serialized] });
    expect(decodeSerializedValue(encoded)).toEqual({ context: [role('Helpful'), group] });
    // An already-serialized group is checked when encoded.
    expect(() => encodeSerializedValue({ type: 'fragment', name: '', children: [] })).toThrow(
      SerializationError,
    );
  });

  it('holds custom types of the serializer it goes through', () => {
    const metricType = defineFragmentType({
      type: 'metric',
      schema: z.strictObject({ type: z.literal('metric'), sql: z.string() }),
      fromFragment: (item) => ({ sql: item.data }),
      toFragment: (value) => ({ name: 'metric', data: value.sql }),
    });
    const serializer = createSerializer({ types: [metricType] });
    const withMetric = fragment('metrics', { name: 'metric', data: 'SELECT 1' }, 'note');
    const flat = {
      type: 'fragment',
      name: 'metrics',
      children: [{ type: 'metric', sql: 'SELECT 1' }, 'note'],
    };
    expect(serializer.fromFragment(withMetric)).toEqual(flat);
    expect(serializer.toFragment(flat)).toEqual(withMetric);
    expect(() => fromFragment(withMetric)).toThrow(/children\[0\]: unknown fragment name "metric"/);
  });

  it('names the path of a bad group or child', () => {
    expect(
      serializationError(() => toFragment({ type: 'fragment', name: ' ', children: [] })).issues,
    ).toEqual([{ path: 'name', message: 'expected a non-empty string' }]);
    expect(
      serializationError(() => toFragment({ type: 'fragment', name: 'g', children: 'x' })).issues,
    ).toEqual([{ path: 'children', message: 'expected array, received string' }]);
    expect(
      serializationError(() => toFragment({ type: 'fragment', name: 'g', children: [7] })).issues[0]
        ?.path,
    ).toBe('children[0]');
    expect(
      serializationError(() =>
        toFragment({ type: 'fragment', name: 'g', children: [{ type: 'hint', text: '' }] }),
      ).issues,
    ).toEqual([{ path: 'children[0].text', message: 'expected a non-empty string' }]);
    expect(
      serializationError(() =>
        toFragment({ type: 'fragment', name: 'g', children: [], extra: true }),
      ).message,
    ).toContain('invalid serialized "fragment" group');
  });

  it('reserves the type "fragment" for groups', () => {
    const clash = defineFragmentType({
      type: 'fragment',
      schema: serializedFragmentSchemas.hint as never,
      fromFragment: () => ({}),
      toFragment: () => hint('x'),
    });
    expect(serializationError(() => createSerializer({ types: [clash] })).issues).toEqual([
      {
        path: 'types[19].type',
        message: 'type "fragment" is reserved for named groups made by fragment(name, ...children)',
      },
    ]);
  });

  /** `levels` groups nested in each other around a text leaf. */
  function nestedGroups(levels: number): { built: ContextFragment; flat: unknown } {
    let built: ContextFragment = fragment('level0', 'leaf', 'leaf');
    let flat: unknown = { type: 'fragment', name: 'level0', children: ['leaf', 'leaf'] };
    for (let level = 1; level < levels; level += 1) {
      built = fragment(`level${level}`, built);
      flat = { type: 'fragment', name: `level${level}`, children: [flat] };
    }
    return { built, flat };
  }

  // A group is two levels (its object and its children), as a nested policy is.
  const deepest = MAX_SERIALIZED_DEPTH / 2;
  const tooDeepPath = Array.from({ length: deepest }, () => 'children[0]').join('.');

  it(`nests ${deepest} groups deep and round-trips them`, () => {
    const { built, flat } = nestedGroups(deepest);
    expect(fromFragment(built)).toEqual(flat);
    expect(toFragment(flat)).toEqual(built);
  });

  it('refuses one group more in both directions, naming the path', () => {
    const { built, flat } = nestedGroups(deepest + 1);
    for (const attempt of [() => fromFragment(built), () => toFragment(flat)]) {
      const error = serializationError(attempt);
      expect(error.issues).toEqual([
        {
          path: tooDeepPath,
          message: expect.stringContaining(`nested deeper than ${MAX_SERIALIZED_DEPTH} levels`),
        },
      ]);
    }
  });

  it('still refuses a fragment with non-list data and no registered type', () => {
    expect(() => fromFragment({ name: 'note', data: 'text' })).toThrow(/unknown fragment name/);
    expect(() => fromFragment({ name: 'numbers', data: [1, 2] })).toThrow(/unknown fragment name/);
    expect(() => fromFragment(fragment('g', term('a', 'b'), { name: 'x', data: 1 }))).toThrow(
      /children\[1\]: unknown fragment name "x"/,
    );
  });
});
