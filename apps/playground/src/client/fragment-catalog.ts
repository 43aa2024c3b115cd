import type { JsonValue } from '@ctxgraph/fragments-core';
import type { FlatFragment } from './api';

/** How one field of a fragment is edited. */
export type FieldKind =
  | 'text' // one line
  | 'longtext' // several lines
  | 'list' // a list of strings
  | 'entries' // term → meaning pairs
  | 'policies' // nested policy fragments or strings
  | 'children'; // any nested fragments or strings (named groups)

/** One field of a fragment type. */
export interface FieldSpec {
  key: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  placeholder?: string;
}

/** A fragment type the page can compose. */
export interface FragmentSpec {
  type: string;
  label: string;
  /** The builder call it stands for. */
  builder: string;
  fields: FieldSpec[];
}

const field = (
  key: string,
  label: string,
  kind: FieldKind,
  required: boolean,
  placeholder?: string,
): FieldSpec => ({
  key,
  label,
  kind,
  required,
  placeholder,
});

/** Every builder of @ctxgraph/fragments-core, plus named groups, in the order the menu lists them. */
export const FRAGMENT_SPECS: FragmentSpec[] = [
  {
    type: 'role',
    label: 'Role',
    builder: 'role(text)',
    fields: [field('text', 'Text', 'longtext', true, 'You are a senior analytics engineer.')],
  },
  {
    type: 'hint',
    label: 'Hint',
    builder: 'hint(text)',
    fields: [field('text', 'Text', 'longtext', true, 'Always exclude test accounts.')],
  },
  {
    type: 'fragment',
    label: 'Group (nested)',
    builder: 'fragment(name, ...children)',
    fields: [
      field('name', 'Name', 'text', true, 'database'),
      field('children', 'Children', 'children', false),
    ],
  },
  {
    type: 'term',
    label: 'Term',
    builder: 'term(name, definition)',
    fields: [
      field('name', 'Term', 'text', true, 'MRR'),
      field('definition', 'Definition', 'longtext', true, 'monthly recurring revenue'),
    ],
  },
  {
    type: 'guardrail',
    label: 'Guardrail',
    builder: 'guardrail({ rule, reason?, action? })',
    fields: [
      field('rule', 'Rule', 'longtext', true, 'Never expose PII'),
      field('reason', 'Reason', 'text', false),
      field('action', 'Action', 'text', false),
    ],
  },
  {
    type: 'explain',
    label: 'Explain',
    builder: 'explain({ concept, explanation, therefore? })',
    fields: [
      field('concept', 'Concept', 'text', true),
      field('explanation', 'Explanation', 'longtext', true),
      field('therefore', 'Therefore', 'text', false),
    ],
  },
  {
    type: 'example',
    label: 'Example',
    builder: 'example({ question, answer, note? })',
    fields: [
      field('question', 'Question', 'longtext', true),
      field('answer', 'Answer', 'longtext', true),
      field('note', 'Note', 'text', false),
    ],
  },
  {
    type: 'clarification',
    label: 'Clarification',
    builder: 'clarification({ when, ask, reason? })',
    fields: [
      field('when', 'When', 'text', true),
      field('ask', 'Ask', 'text', true),
      field('reason', 'Reason', 'text', false),
    ],
  },
  {
    type: 'workflow',
    label: 'Workflow',
    builder: 'workflow({ task, steps, triggers?, notes? })',
    fields: [
      field('task', 'Task', 'text', true),
      field('steps', 'Steps', 'list', true),
      field('triggers', 'Triggers', 'list', false),
      field('notes', 'Notes', 'longtext', false),
    ],
  },
  {
    type: 'quirk',
    label: 'Quirk',
    builder: 'quirk({ issue, workaround })',
    fields: [
      field('issue', 'Issue', 'text', true),
      field('workaround', 'Workaround', 'text', true),
    ],
  },
  {
    type: 'styleGuide',
    label: 'Style guide',
    builder: 'styleGuide({ prefer, never?, always? })',
    fields: [
      field('prefer', 'Prefer', 'text', true),
      field('never', 'Never', 'text', false),
      field('always', 'Always', 'text', false),
    ],
  },
  {
    type: 'analogy',
    label: 'Analogy',
    builder: 'analogy({ concepts, relationship, insight? })',
    fields: [
      field('concepts', 'Concepts (two or more)', 'list', true),
      field('relationship', 'Relationship', 'text', true),
      field('insight', 'Insight', 'text', false),
    ],
  },
  {
    type: 'glossary',
    label: 'Glossary',
    builder: 'glossary({ term: meaning })',
    fields: [field('entries', 'Entries', 'entries', true)],
  },
  {
    type: 'principle',
    label: 'Principle',
    builder: 'principle({ title, description, policies? })',
    fields: [
      field('title', 'Title', 'text', true),
      field('description', 'Description', 'longtext', true),
      field('policies', 'Policies', 'policies', false),
    ],
  },
  {
    type: 'policy',
    label: 'Policy',
    builder: 'policy({ rule, policies? })',
    fields: [
      field('rule', 'Rule', 'text', true),
      field('policies', 'Sub-policies', 'policies', false),
    ],
  },
  {
    type: 'identity',
    label: 'Identity',
    builder: 'identity({ name?, role? })',
    fields: [field('name', 'Name', 'text', false), field('role', 'Role', 'text', false)],
  },
  {
    type: 'persona',
    label: 'Persona',
    builder: 'persona({ name, role?, tone? })',
    fields: [
      field('name', 'Name', 'text', true),
      field('role', 'Role', 'text', false),
      field('tone', 'Tone', 'text', false),
    ],
  },
  {
    type: 'alias',
    label: 'Alias',
    builder: 'alias(term, meaning)',
    fields: [field('term', 'Term', 'text', true), field('meaning', 'Meaning', 'text', true)],
  },
  {
    type: 'preference',
    label: 'Preference',
    builder: 'preference(aspect, value)',
    fields: [field('aspect', 'Aspect', 'text', true), field('value', 'Value', 'text', true)],
  },
  {
    type: 'correction',
    label: 'Correction',
    builder: 'correction({ subject, wrong, right })',
    fields: [
      field('subject', 'Subject', 'text', true),
      field('wrong', 'Wrong', 'text', true),
      field('right', 'Right', 'text', true),
    ],
  },
];

/** The spec of a type, or undefined for a type the page does not know (edited as JSON). */
export function specFor(type: string): FragmentSpec | undefined {
  return FRAGMENT_SPECS.find((spec) => spec.type === type);
}

/** A new, empty fragment of a type. */
export function emptyFragment(type: string): FlatFragment {
  const spec = specFor(type);
  const value: FlatFragment = { type };
  for (const item of spec?.fields ?? []) {
    if (item.kind === 'list') value[item.key] = item.key === 'concepts' ? ['', ''] : [''];
    else if (item.kind === 'entries') value[item.key] = { '': '' };
    else if (item.kind === 'policies' || item.kind === 'children') value[item.key] = [];
    else value[item.key] = '';
  }
  return value;
}

/**
 * The fragment as the server should get it: blank optional text fields, empty optional lists and
 * blank list items dropped (the server still refuses what is required and missing).
 */
export function cleanFragment(value: FlatFragment): FlatFragment {
  const spec = specFor(value.type);
  if (spec === undefined) return value;
  const result: FlatFragment = { type: value.type };
  for (const item of spec.fields) {
    const entry = value[item.key];
    if (entry === undefined) continue;
    if (item.kind === 'list' && Array.isArray(entry)) {
      const list = entry.filter((text) => typeof text !== 'string' || text.trim() !== '');
      if (list.length > 0 || item.required) result[item.key] = list;
    } else if ((item.kind === 'policies' || item.kind === 'children') && Array.isArray(entry)) {
      const list = entry.map((child) =>
        typeof child === 'object' &&
        child !== null &&
        !Array.isArray(child) &&
        typeof child.type === 'string'
          ? (cleanFragment(child as FlatFragment) as JsonValue)
          : child,
      );
      if (list.length > 0 || item.kind === 'children') result[item.key] = list;
    } else if (
      item.kind === 'entries' &&
      typeof entry === 'object' &&
      entry !== null &&
      !Array.isArray(entry)
    ) {
      const entries: Record<string, JsonValue> = {};
      for (const [key, meaning] of Object.entries(entry)) {
        if (key.trim() !== '' || (typeof meaning === 'string' && meaning.trim() !== ''))
          entries[key] = meaning;
      }
      result[item.key] = entries;
    } else if (typeof entry === 'string') {
      if (entry.trim() !== '' || item.required) result[item.key] = entry;
    } else {
      result[item.key] = entry;
    }
  }
  return result;
}

/** A one-line description of a fragment for the list. */
export function summarize(value: JsonValue): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return JSON.stringify(value);
  const type = String(value.type);
  const text = (key: string) => (typeof value[key] === 'string' ? (value[key] as string) : '');
  switch (type) {
    case 'fragment': {
      const children = Array.isArray(value.children) ? value.children.length : 0;
      return `${text('name')} · ${children} ${children === 1 ? 'child' : 'children'}`;
    }
    case 'term':
      return `${text('name')}: ${text('definition')}`;
    case 'alias':
      return `${text('term')} → ${text('meaning')}`;
    case 'preference':
      return `${text('aspect')}: ${text('value')}`;
    case 'glossary':
      return Object.keys((value.entries as Record<string, JsonValue>) ?? {}).join(', ');
    case 'principle':
      return text('title');
    case 'correction':
      return `${text('subject')}: ${text('right')}`;
    default: {
      const spec = specFor(type);
      const first = spec?.fields.find((item) => typeof value[item.key] === 'string');
      return first ? text(first.key) : JSON.stringify(value);
    }
  }
}

/** A small context that shows most of what the builders do (the "Load example" button). */
export const EXAMPLE_CONTEXT: FlatFragment[] = [
  {
    type: 'role',
    text: 'You are a senior analytics engineer who answers with clear, correct SQL.',
  },
  { type: 'persona', name: 'Ada', role: 'data coach', tone: 'warm and precise' },
  { type: 'term', name: 'MRR', definition: 'monthly recurring revenue' },
  {
    type: 'guardrail',
    rule: 'Never expose personal data',
    reason: 'GDPR',
    action: 'Aggregate instead',
  },
  {
    type: 'fragment',
    name: 'database',
    children: [
      { type: 'hint', text: 'PostgreSQL 16, schema analytics' },
      {
        type: 'quirk',
        issue: 'Amounts are stored in cents',
        workaround: 'Divide by 100 for display',
      },
    ],
  },
  {
    type: 'principle',
    title: 'Execution order',
    description: 'Check prerequisites before running anything',
    policies: [
      {
        type: 'policy',
        rule: 'Validate the schema first',
        policies: [{ type: 'policy', rule: 'Check table names' }],
      },
    ],
  },
  { type: 'preference', aspect: 'date format', value: 'YYYY-MM-DD' },
];
