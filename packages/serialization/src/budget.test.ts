import {
  type ContextFragment,
  type FragmentBudget,
  fragment,
  hint,
  identity,
  policy,
  principle,
  role,
  withBudget,
} from '@ctxgraph/fragments-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anyFragment } from './__fixtures__/arbitraries';
import { examples } from './__fixtures__/examples';
import { serializationError } from './__fixtures__/serialization-error';
import {
  createSerializer,
  decodeSerializedValue,
  defineFragmentType,
  encodeSerializedValue,
  fromFragment,
  MAX_SERIALIZED_DEPTH,
  serializedBudgetSchema,
  serializedFragmentSchema,
  serializedGroupSchema,
  toFragment,
} from './index';

/** Through JSON text, as a database row would go. */
function throughJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

const budgets: readonly FragmentBudget[] = [
  { priority: -1 },
  { required: true },
  { priority: 2.5, required: false },
  {},
];

// A custom type whose schema knows nothing of budgets: the serializer keeps `budget` apart.
const metricType = defineFragmentType({
  type: 'metric',
  schema: z.strictObject({ type: z.literal('metric'), name: z.string(), sql: z.string() }),
  fromFragment: (fragment) => ({ ...(fragment.data as { name: string; sql: string }) }),
  toFragment: ({ name, sql }) => ({ name: 'metric', data: { name, sql } }),
});
const serializer = createSerializer({ types: [metricType] });

describe('budget settings in the serialized form', () => {
  it('every built-in type carries them as its last field and reads them back', () => {
    for (const { title, fragment: original, flat } of examples) {
      for (const budget of budgets) {
        const marked = withBudget(original, budget);
        const stored = fromFragment(marked);
        expect(stored, title).toEqual({ ...flat, budget });
        expect(Object.keys(stored).at(-1), title).toBe('budget');
        expect(serializedFragmentSchema.safeParse(throughJson(stored)).success, title).toBe(true);
        const hydrated = toFragment(throughJson(stored));
        expect(hydrated, title).toEqual(marked);
        expect(JSON.stringify(fromFragment(hydrated)), title).toBe(JSON.stringify(stored));
      }
    }
  });

  it('a fragment without settings serializes as before, and old JSON hydrates without them', () => {
    for (const { title, fragment: original, flat } of examples) {
      expect(JSON.stringify(fromFragment(original)), title).toBe(JSON.stringify(flat));
      const hydrated = toFragment(throughJson(flat));
      expect(Object.hasOwn(hydrated, 'budget'), title).toBe(false);
    }
  });

  it('round-trips any built-in fragment with any valid settings (property-based)', () => {
    const budget = fc.record(
      {
        priority: fc.double({ noNaN: true, noDefaultInfinity: true }),
        required: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(anyFragment, budget, (original, settings) => {
        const marked = withBudget(original, settings);
        const stored = JSON.stringify(fromFragment(marked));
        const hydrated = toFragment(JSON.parse(stored));
        expect(hydrated.budget).toEqual(throughJson(settings));
        expect(JSON.stringify(fromFragment(hydrated))).toBe(stored);
      }),
      { numRuns: 150 },
    );
  });

  it('named groups and the fragments nested in them keep their settings', () => {
    const original = withBudget(
      fragment(
        'database',
        withBudget(hint('PostgreSQL 16'), { priority: 3 }),
        'Schema: analytics',
        principle({
          title: 'Reads first',
          description: 'Look before writing',
          policies: [withBudget(policy({ rule: 'Explain the plan' }), { required: true })],
        }),
      ),
      { priority: -2 },
    );
    const stored = fromFragment(original);
    expect(stored).toEqual({
      type: 'fragment',
      name: 'database',
      children: [
        { type: 'hint', text: 'PostgreSQL 16', budget: { priority: 3 } },
        'Schema: analytics',
        {
          type: 'principle',
          title: 'Reads first',
          description: 'Look before writing',
          policies: [{ type: 'policy', rule: 'Explain the plan', budget: { required: true } }],
        },
      ],
      budget: { priority: -2 },
    });
    expect(serializedGroupSchema.safeParse(throughJson(stored)).success).toBe(true);
    expect(toFragment(throughJson(stored))).toEqual(original);
  });

  it('custom types carry them although their schema does not know the field', () => {
    const original = withBudget(
      { name: 'metric', data: { name: 'ARR', sql: 'SELECT 1' } },
      { priority: 1, required: true },
    );
    const stored = serializer.fromFragment(original);
    expect(stored).toEqual({
      type: 'metric',
      name: 'ARR',
      sql: 'SELECT 1',
      budget: { priority: 1, required: true },
    });
    expect(serializer.isSerializedFragment(stored)).toBe(true);
    expect(serializer.isSerializedFragment({ ...stored, budget: { priority: 'high' } })).toBe(
      false,
    );
    expect(serializer.toFragment(throughJson(stored))).toEqual(original);
    // The type's own conversion never receives the field.
    expect(metricType.schema.safeParse(stored).success).toBe(false);
  });

  it('a fragment with a codec is stored as its encoding plus its own settings', () => {
    const original = withBudget(
      {
        name: 'note',
        data: 'ignored',
        codec: {
          encode: () => ({ type: 'hint', budget: { priority: 9 }, text: 'From the codec' }),
          decode: () => 'From the codec',
        },
      },
      { required: true },
    );
    const stored = fromFragment(original);
    expect(stored).toEqual({ type: 'hint', text: 'From the codec', budget: { required: true } });
    expect(Object.keys(stored)).toEqual(['type', 'text', 'budget']);
    expect(toFragment(stored)).toEqual(withBudget(hint('From the codec'), { required: true }));
  });

  it('encodeSerializedValue and decodeSerializedValue carry them in nested data', () => {
    const value = { rules: [withBudget(hint('Be brief'), { priority: -1 }), 'plain text'] };
    const encoded = encodeSerializedValue(value);
    expect(encoded).toEqual({
      rules: [{ type: 'hint', text: 'Be brief', budget: { priority: -1 } }, 'plain text'],
    });
    // Already-serialized input is checked and kept as it is.
    expect(encodeSerializedValue(encoded)).toEqual(encoded);
    expect(decodeSerializedValue(throughJson(encoded))).toEqual(value);
  });

  it('exports the schema of the settings', () => {
    expect(serializedBudgetSchema.safeParse({ priority: 0, required: true }).success).toBe(true);
    expect(serializedBudgetSchema.safeParse({ weight: 1 }).success).toBe(false);
  });
});

describe('bad budget settings are refused with their path', () => {
  const cases: ReadonlyArray<{
    budget: unknown;
    issues: Array<{ path: string; message: string }>;
  }> = [
    {
      budget: { priority: 'high' },
      issues: [{ path: 'budget.priority', message: 'expected a finite number, received string' }],
    },
    {
      budget: { required: 'yes' },
      issues: [{ path: 'budget.required', message: 'expected boolean, received string' }],
    },
    {
      budget: { priority: 1, weight: 2 },
      issues: [{ path: 'budget.weight', message: 'unknown field (not part of this format)' }],
    },
    {
      budget: null,
      issues: [{ path: 'budget', message: 'expected object, received null' }],
    },
    {
      budget: [1],
      issues: [{ path: 'budget', message: 'expected object, received array' }],
    },
  ];

  it('by toFragment, for built-in, group and custom types', () => {
    for (const { budget, issues } of cases) {
      const label = JSON.stringify(budget);
      const hintError = serializationError(() => toFragment({ type: 'hint', text: 'x', budget }));
      expect(hintError.issues, label).toEqual(issues);
      expect(hintError.message, label).toContain('toFragment: invalid serialized "hint" fragment');
      const groupError = serializationError(() =>
        toFragment({ type: 'fragment', name: 'g', children: ['x'], budget }),
      );
      expect(groupError.issues, label).toEqual(issues);
      const metricError = serializationError(() =>
        serializer.toFragment({ type: 'metric', name: 'a', sql: 'b', budget }),
      );
      expect(metricError.issues, label).toEqual(issues);
    }
  });

  it('lists them with the fields’ own problems, nested paths included', () => {
    const error = serializationError(() =>
      toFragment({
        type: 'principle',
        title: 'T',
        description: 7,
        policies: [{ type: 'policy', rule: 'r', budget: { required: 1 } }],
        budget: { priority: 'low' },
      }),
    );
    expect(error.issues).toEqual([
      { path: 'description', message: 'expected string, received number' },
      { path: 'policies[0].budget.required', message: 'expected boolean, received number' },
      { path: 'budget.priority', message: 'expected a finite number, received string' },
    ]);
  });

  it('by fromFragment and encodeSerializedValue, for settings set by hand', () => {
    for (const priority of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const marked = { ...hint('x'), budget: { priority } };
      const error = serializationError(() => fromFragment(marked));
      expect(error.issues).toEqual([
        { path: 'budget.priority', message: `expected a finite number, received ${priority}` },
      ]);
      expect(error.message).toContain('fromFragment: invalid budget settings');
      const nested = serializationError(() => encodeSerializedValue({ items: [marked] }));
      expect(nested.issues[0]?.path).toBe('items[0].budget.priority');
    }
    const unknownKey = { ...role('r'), budget: { priority: 1, pinned: true } as FragmentBudget };
    expect(serializationError(() => fromFragment(unknownKey)).issues).toEqual([
      { path: 'budget.pinned', message: 'unknown field (not part of this format)' },
    ]);
    const group = { ...fragment('g', hint('x')), budget: 'high' as unknown as FragmentBudget };
    expect(serializationError(() => fromFragment(group)).issues).toEqual([
      { path: 'budget', message: 'expected object, received string' },
    ]);
    expect(
      serializationError(() =>
        encodeSerializedValue({ type: 'hint', text: 'x', budget: { required: 'no' } }),
      ).issues,
    ).toEqual([{ path: 'budget.required', message: 'expected boolean, received string' }]);
  });

  it('refuses a data field named budget, which would be read back as settings', () => {
    const handMade: ContextFragment = {
      name: 'identity',
      data: { name: 'Sarah', budget: { priority: 1 } },
    };
    expect(serializationError(() => fromFragment(handMade)).issues).toEqual([
      {
        path: 'data.budget',
        message: 'the field name "budget" is reserved by the serialized form',
      },
    ]);
    const clashing = createSerializer({
      types: [
        defineFragmentType({
          type: 'limit',
          schema: z.strictObject({ type: z.literal('limit'), budget: z.number() }),
          fromFragment: (fragment) => ({ budget: fragment.data }),
          toFragment: ({ budget }) => ({ name: 'limit', data: budget }),
        }),
      ],
    });
    const error = serializationError(() => clashing.fromFragment({ name: 'limit', data: 5 }));
    expect(error.issues[0]?.path).toBe('budget');
    expect(error.message).toContain('keeps that name for the fragment');
    // The builders are untouched: identity() itself is still fine.
    expect(fromFragment(identity({ name: 'Sarah' }))).toEqual({ type: 'identity', name: 'Sarah' });
  });

  it('counts the settings as a level of the serialized form', () => {
    // A hint inside lists nested to the limit: the hint is the last level allowed.
    let bare: unknown = hint('deep');
    let marked: unknown = withBudget(hint('deep'), { priority: 1 });
    for (let level = 1; level < MAX_SERIALIZED_DEPTH; level += 1) {
      bare = [bare];
      marked = [marked];
    }
    expect(() => encodeSerializedValue(bare as never)).not.toThrow();
    const error = serializationError(() => encodeSerializedValue(marked as never));
    expect(error.issues[0]?.path).toMatch(/\[0\]\.budget$/);
    expect(error.issues[0]?.message).toContain(`nested deeper than ${MAX_SERIALIZED_DEPTH} levels`);
  });
});
