import type { ContextFragment } from '@ctxgraph/fragments-core';
import {
  builtinFragmentDescriptors,
  fragment,
  guardrail,
  hint,
  identity,
  policy,
  preference,
  principle,
  role,
  walkFragments,
  withBudget,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createSerializer,
  defineFragmentType,
  encodeSerializedValue,
  fromFragment,
  toFragment,
} from './index';

// The README's examples, run as written.

describe('README examples', () => {
  it('database round trip', () => {
    const originals = [
      identity({ name: 'Sarah', role: 'Finance manager' }),
      preference('date format', 'YYYY-MM-DD'),
      hint('Always exclude test accounts'),
      principle({
        title: 'Execution order',
        description: 'Preserve prerequisites',
        policies: [
          policy({
            rule: 'Validate schema first',
            policies: [policy({ rule: 'Check table names' })],
          }),
        ],
      }),
    ];
    const rows = originals.map((fragment) => JSON.stringify(fromFragment(fragment)));
    expect(rows[1]).toBe('{"type":"preference","aspect":"date format","value":"YYYY-MM-DD"}');
    const fragments = rows.map((row) => toFragment(JSON.parse(row)));
    expect(fragments).toEqual(originals);
    expect(walkFragments(fragments)).toEqual(walkFragments(originals));
    expect(JSON.parse(rows[3] ?? '')).toEqual({
      type: 'principle',
      title: 'Execution order',
      description: 'Preserve prerequisites',
      policies: [
        {
          type: 'policy',
          rule: 'Validate schema first',
          policies: [{ type: 'policy', rule: 'Check table names' }],
        },
      ],
    });
  });

  it('budget settings', () => {
    const stored = fromFragment(withBudget(hint('Long product catalogue'), { priority: -1 }));
    expect(stored).toEqual({
      type: 'hint',
      text: 'Long product catalogue',
      budget: { priority: -1 },
    });
    const hydrated = toFragment(stored);
    expect(hydrated.budget).toEqual({ priority: -1 });
    expect(fromFragment(role('You are a support agent.'))).toEqual({
      type: 'role',
      text: 'You are a support agent.',
    });
  });

  it('custom fragment type', () => {
    function metric(name: string, sql: string): ContextFragment<{ name: string; sql: string }> {
      return { name: 'metric', data: { name, sql } };
    }
    const metricType = defineFragmentType({
      type: 'metric',
      schema: z.strictObject({
        type: z.literal('metric'),
        name: z.string().min(1),
        sql: z.string().min(1),
      }),
      fromFragment: (fragment) => ({ ...(fragment.data as { name: string; sql: string }) }),
      toFragment: ({ name, sql }) => metric(name, sql),
    });
    const serializer = createSerializer({ types: [metricType] });
    const stored = serializer.fromFragment(
      metric('ARR', 'SELECT sum(amount) * 12 FROM subscriptions'),
    );
    expect(stored).toEqual({
      type: 'metric',
      name: 'ARR',
      sql: 'SELECT sum(amount) * 12 FROM subscriptions',
    });
    expect(serializer.toFragment(stored)).toEqual(
      metric('ARR', 'SELECT sum(amount) * 12 FROM subscriptions'),
    );
  });

  it('encoding nested values', () => {
    expect(
      encodeSerializedValue({
        policies: ['Prefer low-risk actions first', hint('Validate assumptions first')],
      }),
    ).toEqual({
      policies: [
        'Prefer low-risk actions first',
        { type: 'hint', text: 'Validate assumptions first' },
      ],
    });
  });

  it('named groups', () => {
    const group = fragment('database', hint('PostgreSQL 16'), 'Schema: analytics');
    const stored = fromFragment(group);
    expect(stored).toEqual({
      type: 'fragment',
      name: 'database',
      children: [{ type: 'hint', text: 'PostgreSQL 16' }, 'Schema: analytics'],
    });
    expect(toFragment(stored)).toEqual(group);
  });

  it('fragments-core: fragment types, one descriptor each', () => {
    const guardrailType = builtinFragmentDescriptors.find((type) => type.name === 'guardrail');
    if (!guardrailType) throw new Error('no guardrail descriptor');
    expect(guardrailType.fields.map((field) => field.name)).toEqual(['rule', 'reason', 'action']);
    expect(guardrailType.build({ rule: 'Never expose PII' })).toEqual(
      guardrail('Never expose PII'),
    );
  });
});
