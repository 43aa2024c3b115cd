import type { ContextFragment } from '@ctxgraph/fragments-core';

/**
 * A varied fragment list for golden-file tests of a renderer: a role, a run of hints, domain
 * fragments (term, guardrail, example with multi-line SQL, workflow with lists), a nested
 * database description (fragments in fragments in lists), numbers, booleans, empty values,
 * skipped `null`s, names that are not identifiers, a repeated name after other fragments, text
 * that looks like markup in every format, and several scripts. Returns a fresh copy each call.
 *
 * @example
 * ```ts
 * const output = new MyRenderer().render(rendererSampleFragments());
 * expect(output).toBe(readFileSync('src/__fixtures__/sample.golden.txt', 'utf8'));
 * ```
 */
export function rendererSampleFragments(): ContextFragment[] {
  return [
    {
      name: 'role',
      data: 'You are a careful analytics engineer. You write SQL for the finance team.',
    },
    { name: 'hint', data: 'Prefer CTEs over nested subqueries.' },
    { name: 'hint', data: 'Dates are stored in UTC; report in the customer’s time zone.' },
    { name: 'term', data: { name: 'MRR', definition: 'monthly recurring revenue' } },
    { name: 'term', data: { name: 'ARR', definition: 'annual recurring revenue, MRR × 12' } },
    {
      name: 'guardrail',
      data: {
        rule: 'Never expose personal data',
        reason: 'GDPR',
        action: 'Aggregate to ≥ 10 rows',
      },
    },
    {
      name: 'example',
      data: {
        question: 'Revenue by month?',
        answer:
          "SELECT date_trunc('month', paid_at) AS month,\n       sum(amount) AS total\nFROM invoices\nGROUP BY 1",
        note: null,
      },
    },
    {
      name: 'workflow',
      data: {
        task: 'Churn analysis',
        steps: ['Find cancelled subscriptions', 'Join plans', 'Group by cohort'],
        triggers: ['churn', 'cancellations'],
      },
    },
    {
      name: 'database',
      data: [
        { name: 'hint', data: 'PostgreSQL 16' },
        {
          name: 'tables',
          data: [
            { name: 'invoices', data: [{ name: 'hint', data: 'Columns: id, amount, paid_at' }] },
            {
              name: 'plans',
              data: { columns: ['id', 'name', 'price'], rows: 12, archived: false },
            },
          ],
        },
        { name: 'constraints', data: { name: 'audit', data: 'No DELETE without an audit row' } },
      ],
    },
    {
      name: 'limits',
      data: { maxRows: 1000, timeoutSeconds: 2.5, readOnly: true, owner: null, cache: undefined },
    },
    { name: 'empty', data: [] },
    { name: 'blank', data: '' },
    { name: 'skipped', data: null },
    {
      name: 'odd names',
      data: { '1st place': 'gold', 'xml:lang': 'en', 'a/b': 'slash', 'emoji 🙂': 'smile' },
    },
    { name: 'matrix', data: [[1, 2], [3, 4], [{ x: 5 }], []] },
    {
      name: 'markup',
      data: [
        '# not a heading',
        '- not a list item',
        '```\nnot a fence\n```',
        '> not a quote',
        '<b>not a tag</b> & not an entity ]]>',
        'key: not a key',
        '"quoted", with commas',
      ],
    },
    { name: 'unicode', data: { 日本語: 'こんにちは', greek: 'Ελληνικά', emoji: '👨‍👩‍👧 🇩🇪' } },
    { name: 'hint', data: 'A hint after other fragments keeps its place.' },
  ];
}
