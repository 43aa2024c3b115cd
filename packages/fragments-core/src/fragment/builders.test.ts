import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/errors';
import {
  alias,
  analogy,
  clarification,
  correction,
  example,
  explain,
  glossary,
  guardrail,
  hint,
  identity,
  persona,
  policy,
  preference,
  principle,
  quirk,
  role,
  styleGuide,
  term,
  workflow,
} from './builders';
import type { ContextFragment } from './context-fragment';
import { fragment } from './fragment';
import { isFragment } from './guards';

describe('domain builders: valid input', () => {
  it.each<[string, () => ContextFragment, ContextFragment]>([
    [
      'term',
      () => term('MRR', 'monthly recurring revenue'),
      { name: 'term', data: { name: 'MRR', definition: 'monthly recurring revenue' } },
    ],
    [
      'hint',
      () => hint('Always exclude test accounts'),
      { name: 'hint', data: 'Always exclude test accounts' },
    ],
    ['role', () => role('You are helpful.'), { name: 'role', data: 'You are helpful.' }],
    [
      'guardrail (object)',
      () => guardrail({ rule: 'No PII', reason: 'GDPR', action: 'Aggregate' }),
      { name: 'guardrail', data: { rule: 'No PII', reason: 'GDPR', action: 'Aggregate' } },
    ],
    [
      'guardrail (string)',
      () => guardrail('Never DELETE'),
      { name: 'guardrail', data: { rule: 'Never DELETE' } },
    ],
    [
      'explain',
      () => explain({ concept: 'churn', explanation: 'cancel', therefore: 'count it' }),
      { name: 'explain', data: { concept: 'churn', explanation: 'cancel', therefore: 'count it' } },
    ],
    [
      'example',
      () => example({ question: 'q?', answer: 'a' }),
      { name: 'example', data: { question: 'q?', answer: 'a' } },
    ],
    [
      'clarification',
      () => clarification({ when: 'no range', ask: 'Which period?' }),
      { name: 'clarification', data: { when: 'no range', ask: 'Which period?' } },
    ],
    [
      'workflow',
      () => workflow({ task: 'Churn', steps: ['a', 'b'], triggers: ['why'] }),
      { name: 'workflow', data: { task: 'Churn', steps: ['a', 'b'], triggers: ['why'] } },
    ],
    [
      'quirk',
      () => quirk({ issue: 'cents', workaround: '/100' }),
      { name: 'quirk', data: { issue: 'cents', workaround: '/100' } },
    ],
    [
      'styleGuide',
      () => styleGuide({ prefer: 'CTEs', never: 'SELECT *' }),
      { name: 'styleGuide', data: { prefer: 'CTEs', never: 'SELECT *' } },
    ],
    [
      'analogy',
      () => analogy({ concepts: ['a', 'b'], relationship: 'like' }),
      { name: 'analogy', data: { concepts: ['a', 'b'], relationship: 'like' } },
    ],
    [
      'glossary',
      () => glossary({ ARR: 'annual', NRR: 'net' }),
      { name: 'glossary', data: { ARR: 'annual', NRR: 'net' } },
    ],
    ['policy', () => policy({ rule: 'Validate' }), { name: 'policy', data: { rule: 'Validate' } }],
    [
      'identity',
      () => identity({ name: 'Sarah', role: 'Finance manager' }),
      { name: 'identity', data: { name: 'Sarah', role: 'Finance manager' } },
    ],
    [
      'identity (role only)',
      () => identity({ role: 'CFO' }),
      { name: 'identity', data: { role: 'CFO' } },
    ],
    [
      'persona',
      () => persona({ name: 'Ada', tone: 'warm' }),
      { name: 'persona', data: { name: 'Ada', tone: 'warm' } },
    ],
    [
      'alias',
      () => alias('the big table', 'analytics.events'),
      { name: 'alias', data: { term: 'the big table', meaning: 'analytics.events' } },
    ],
    [
      'preference',
      () => preference('date format', 'YYYY-MM-DD'),
      { name: 'preference', data: { aspect: 'date format', value: 'YYYY-MM-DD' } },
    ],
    [
      'correction',
      () => correction({ subject: 'fiscal year', wrong: 'Jan', right: 'Apr' }),
      { name: 'correction', data: { subject: 'fiscal year', wrong: 'Jan', right: 'Apr' } },
    ],
  ])('%s', (_name, build, expected) => {
    const built = build();
    expect(built).toEqual(expected);
    expect(isFragment(built)).toBe(true);
    // Optional fields left out leave no undefined keys behind.
    expect(Object.values(built.data as object).includes(undefined)).toBe(false);
  });

  it('principle nests policies, which nest policies', () => {
    const built = principle({
      title: 'Execution order',
      description: 'Preserve prerequisites',
      policies: [
        policy({
          rule: 'Validate schema first',
          policies: [policy({ rule: 'Check table names' }), 'plain text policy'],
        }),
      ],
    });
    expect(built).toEqual({
      name: 'principle',
      data: {
        title: 'Execution order',
        description: 'Preserve prerequisites',
        policies: [
          {
            name: 'policy',
            data: {
              rule: 'Validate schema first',
              policies: [
                { name: 'policy', data: { rule: 'Check table names' } },
                'plain text policy',
              ],
            },
          },
        ],
      },
    });
  });

  it('keeps a glossary term named __proto__ (as JSON.parse can produce)', () => {
    const entries = JSON.parse('{"__proto__":"the prototype","ARR":"annual"}') as Record<
      string,
      string
    >;
    const built = glossary(entries);
    expect(Object.keys(built.data)).toEqual(['__proto__', 'ARR']);
    expect(Object.getPrototypeOf(built.data)).toBe(Object.prototype);
    expect(JSON.stringify(built.data)).toBe('{"__proto__":"the prototype","ARR":"annual"}');
  });

  it('keeps unicode as given', () => {
    expect(term('Umsatz 📈', 'Einnahmen — مجموع')).toEqual({
      name: 'term',
      data: { name: 'Umsatz 📈', definition: 'Einnahmen — مجموع' },
    });
  });
});

describe('domain builders: invalid input', () => {
  it.each<[string, () => unknown, string]>([
    [
      'term with an empty name',
      () => term('', 'x'),
      'term(name, definition): name: expected a non-empty string, received an empty string',
    ],
    [
      'term with a number definition',
      () => term('MRR', 5 as unknown as string),
      'definition: expected a non-empty string, received number',
    ],
    ['hint with whitespace', () => hint('   '), 'hint(text): text: expected a non-empty string'],
    [
      'role with undefined',
      () => role(undefined as unknown as string),
      'role(text): text: expected a non-empty string, received undefined',
    ],
    ['guardrail without rule', () => guardrail({} as never), 'guardrail(input): rule'],
    [
      'guardrail with a number reason',
      () => guardrail({ rule: 'x', reason: 3 as unknown as string }),
      'reason: expected a non-empty string, received number',
    ],
    [
      'explain given an array',
      () => explain([] as never),
      'explain(input): input: expected an object, received array',
    ],
    ['example missing answer', () => example({ question: 'q' } as never), 'example(input): answer'],
    [
      'clarification null',
      () => clarification(null as never),
      'clarification(input): input: expected an object, received null',
    ],
    [
      'workflow with no steps',
      () => workflow({ task: 't', steps: [] }),
      'steps: expected at least 1 item(s), received 0',
    ],
    [
      'workflow with a bad step',
      () => workflow({ task: 't', steps: ['ok', ''] }),
      'steps[1]: expected a non-empty string',
    ],
    ['quirk missing workaround', () => quirk({ issue: 'x' } as never), 'quirk(input): workaround'],
    [
      'styleGuide missing prefer',
      () => styleGuide({ never: 'x' } as never),
      'styleGuide(input): prefer',
    ],
    [
      'analogy with one concept',
      () => analogy({ concepts: ['a'], relationship: 'r' }),
      'concepts: expected at least 2 item(s), received 1',
    ],
    [
      'glossary empty',
      () => glossary({}),
      'glossary(entries): entries: expected at least one entry',
    ],
    [
      'glossary with a number meaning',
      () => glossary({ A: 1 as unknown as string }),
      'entries["A"]: expected a non-empty string, received number',
    ],
    [
      'policy with a bad nested item',
      () => policy({ rule: 'r', policies: [hint('x') as never] }),
      'policies[0]: expected a policy fragment or a non-empty string, received a "hint" fragment',
    ],
    [
      'principle with policies not an array',
      () => principle({ title: 't', description: 'd', policies: 'x' as never }),
      'policies: expected an array, received string',
    ],
    [
      'identity with nothing',
      () => identity({}),
      'identity(input): input: expected at least one of name or role',
    ],
    ['persona missing name', () => persona({ role: 'r' } as never), 'persona(input): name'],
    ['alias with an empty meaning', () => alias('a', ''), 'alias(term, meaning): meaning'],
    [
      'preference with a null value',
      () => preference('a', null as unknown as string),
      'preference(aspect, value): value: expected a non-empty string, received null',
    ],
    [
      'correction missing right',
      () => correction({ subject: 's', wrong: 'w' } as never),
      'correction(input): right',
    ],
    [
      'fragment with an empty name',
      () => fragment(''),
      'fragment(name, ...children): name must be a non-empty string, received an empty string',
    ],
    ['fragment with a number name', () => fragment(7 as unknown as string), 'received number'],
  ])('%s', (_label, build, message) => {
    let caught: unknown;
    try {
      build();
    } catch (error) {
      caught = error;
    }
    expect(ValidationError.isInstance(caught)).toBe(true);
    expect((caught as Error).message).toContain(message);
    expect((caught as ValidationError).issues.length).toBeGreaterThan(0);
  });

  it('reports every problem of one call at once', () => {
    try {
      example({ question: '', answer: 4 } as never);
      expect.unreachable();
    } catch (error) {
      expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([
        'question',
        'answer',
      ]);
    }
  });
});

describe('fragment()', () => {
  it('nests fragments as a list of children', () => {
    const built = fragment(
      'database',
      hint('PostgreSQL 15'),
      fragment('constraints', hint('No DELETE without audit')),
    );
    expect(built).toEqual({
      name: 'database',
      data: [
        { name: 'hint', data: 'PostgreSQL 15' },
        { name: 'constraints', data: [{ name: 'hint', data: 'No DELETE without audit' }] },
      ],
    });
  });

  it('holds a single plain value directly', () => {
    expect(fragment('note', 'text')).toEqual({ name: 'note', data: 'text' });
    expect(fragment('limits', { rows: 1000 })).toEqual({ name: 'limits', data: { rows: 1000 } });
    expect(fragment('empty')).toEqual({ name: 'empty', data: [] });
    expect(fragment('one', hint('x'))).toEqual({
      name: 'one',
      data: [{ name: 'hint', data: 'x' }],
    });
  });

  it('builds deep nesting without recursion limits', () => {
    let built = fragment('leaf', 'bottom');
    for (let level = 0; level < 5_000; level += 1)
      built = fragment(`level${level}`, built, hint('x'));
    expect(built.name).toBe('level4999');
  });
});
