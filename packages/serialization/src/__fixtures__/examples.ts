import {
  alias,
  analogy,
  type ContextFragment,
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
} from '@ctxgraph/fragments-core';
import type { SerializedFragment } from '../schemas';

/** One built-in fragment and the flat JSON it must serialize to. */
export interface SerializationExample {
  readonly title: string;
  readonly fragment: ContextFragment;
  readonly flat: SerializedFragment;
}

/** At least one example per built-in type, with and without optional fields. */
export const examples: readonly SerializationExample[] = [
  {
    title: 'term',
    fragment: term('MRR', 'monthly recurring revenue'),
    flat: { type: 'term', name: 'MRR', definition: 'monthly recurring revenue' },
  },
  {
    title: 'hint',
    fragment: hint('Always exclude test accounts'),
    flat: { type: 'hint', text: 'Always exclude test accounts' },
  },
  {
    title: 'guardrail (all fields)',
    fragment: guardrail({ rule: 'Never expose PII', reason: 'GDPR', action: 'Aggregate instead' }),
    flat: {
      type: 'guardrail',
      rule: 'Never expose PII',
      reason: 'GDPR',
      action: 'Aggregate instead',
    },
  },
  {
    title: 'guardrail (string shorthand)',
    fragment: guardrail('Never run DELETE'),
    flat: { type: 'guardrail', rule: 'Never run DELETE' },
  },
  {
    title: 'explain',
    fragment: explain({
      concept: 'churn',
      explanation: 'A customer who cancels',
      therefore: 'Count cancellations',
    }),
    flat: {
      type: 'explain',
      concept: 'churn',
      explanation: 'A customer who cancels',
      therefore: 'Count cancellations',
    },
  },
  {
    title: 'example',
    fragment: example({
      question: 'Revenue last month?',
      answer: 'SELECT sum(amount) FROM invoices',
    }),
    flat: {
      type: 'example',
      question: 'Revenue last month?',
      answer: 'SELECT sum(amount) FROM invoices',
    },
  },
  {
    title: 'clarification',
    fragment: clarification({
      when: 'The date range is missing',
      ask: 'Which period?',
      reason: 'Avoid guessing',
    }),
    flat: {
      type: 'clarification',
      when: 'The date range is missing',
      ask: 'Which period?',
      reason: 'Avoid guessing',
    },
  },
  {
    title: 'workflow',
    fragment: workflow({
      task: 'Churn analysis',
      steps: ['Find cancellations', 'Group by cohort'],
      triggers: ['why are we losing customers'],
      notes: 'Use the cohorts table',
    }),
    flat: {
      type: 'workflow',
      task: 'Churn analysis',
      steps: ['Find cancellations', 'Group by cohort'],
      triggers: ['why are we losing customers'],
      notes: 'Use the cohorts table',
    },
  },
  {
    title: 'workflow (empty triggers)',
    fragment: workflow({ task: 'Ping', steps: ['Send'], triggers: [] }),
    flat: { type: 'workflow', task: 'Ping', steps: ['Send'], triggers: [] },
  },
  {
    title: 'quirk',
    fragment: quirk({ issue: 'Amounts are in cents', workaround: 'Divide by 100' }),
    flat: { type: 'quirk', issue: 'Amounts are in cents', workaround: 'Divide by 100' },
  },
  {
    title: 'styleGuide',
    fragment: styleGuide({ prefer: 'CTEs', never: 'SELECT *', always: 'Qualify columns' }),
    flat: { type: 'styleGuide', prefer: 'CTEs', never: 'SELECT *', always: 'Qualify columns' },
  },
  {
    title: 'analogy',
    fragment: analogy({
      concepts: ['logo churn', 'revenue churn'],
      relationship: 'customers vs money',
      insight: 'They diverge',
    }),
    flat: {
      type: 'analogy',
      concepts: ['logo churn', 'revenue churn'],
      relationship: 'customers vs money',
      insight: 'They diverge',
    },
  },
  {
    title: 'glossary',
    fragment: glossary({ ARR: 'annual recurring revenue', 'net revenue retention': 'NRR' }),
    flat: {
      type: 'glossary',
      entries: { ARR: 'annual recurring revenue', 'net revenue retention': 'NRR' },
    },
  },
  {
    title: 'role',
    fragment: role('You are a senior analytics engineer.'),
    flat: { type: 'role', text: 'You are a senior analytics engineer.' },
  },
  {
    title: 'principle with nested policies',
    fragment: principle({
      title: 'Execution order',
      description: 'Preserve prerequisites',
      policies: [
        policy({
          rule: 'Validate schema first',
          policies: [policy({ rule: 'Check table names' })],
        }),
        'Prefer reads before writes',
      ],
    }),
    flat: {
      type: 'principle',
      title: 'Execution order',
      description: 'Preserve prerequisites',
      policies: [
        {
          type: 'policy',
          rule: 'Validate schema first',
          policies: [{ type: 'policy', rule: 'Check table names' }],
        },
        'Prefer reads before writes',
      ],
    },
  },
  {
    title: 'principle without policies',
    fragment: principle({ title: 'Safety', description: 'Do no harm' }),
    flat: { type: 'principle', title: 'Safety', description: 'Do no harm' },
  },
  {
    title: 'policy with an empty policies list',
    fragment: policy({ rule: 'Log every write', policies: [] }),
    flat: { type: 'policy', rule: 'Log every write', policies: [] },
  },
  {
    title: 'identity',
    fragment: identity({ name: 'Sarah', role: 'Finance manager' }),
    flat: { type: 'identity', name: 'Sarah', role: 'Finance manager' },
  },
  {
    title: 'identity (role only)',
    fragment: identity({ role: 'Auditor' }),
    flat: { type: 'identity', role: 'Auditor' },
  },
  {
    title: 'persona',
    fragment: persona({ name: 'Ada', role: 'data coach', tone: 'warm' }),
    flat: { type: 'persona', name: 'Ada', role: 'data coach', tone: 'warm' },
  },
  {
    title: 'alias',
    fragment: alias('the big table', 'analytics.events'),
    flat: { type: 'alias', term: 'the big table', meaning: 'analytics.events' },
  },
  {
    title: 'preference',
    fragment: preference('date format', 'YYYY-MM-DD'),
    flat: { type: 'preference', aspect: 'date format', value: 'YYYY-MM-DD' },
  },
  {
    title: 'correction',
    fragment: correction({
      subject: 'fiscal year',
      wrong: 'starts in January',
      right: 'starts in April',
    }),
    flat: {
      type: 'correction',
      subject: 'fiscal year',
      wrong: 'starts in January',
      right: 'starts in April',
    },
  },
];
