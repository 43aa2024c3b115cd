import {
  builtinFragmentDescriptors,
  type FragmentFieldDescriptor,
  type FragmentTypeDescriptor,
  type JsonValue,
} from '@ctxgraph/fragments-core';
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
  placeholder?: string | undefined;
  /** One sentence on what goes in the field. */
  help?: string;
  /** For lists: the fewest items the builder accepts. */
  minItems?: number;
}

/** A fragment type the page can compose. */
export interface FragmentSpec {
  type: string;
  label: string;
  /** The builder call it stands for. */
  builder: string;
  fields: FieldSpec[];
}

/** The form kind of a descriptor field. */
function formKind(field: FragmentFieldDescriptor): FieldKind {
  switch (field.kind) {
    case 'text':
      return field.multiline ? 'longtext' : 'text';
    case 'textList':
      return 'list';
    case 'entries':
      return 'entries';
    case 'fragments':
      return 'policies';
  }
}

/** The form of a built-in type, derived from its descriptor in @ctxgraph/fragments-core. */
function specFromDescriptor(descriptor: FragmentTypeDescriptor): FragmentSpec {
  return {
    type: descriptor.name,
    label: descriptor.label,
    builder: descriptor.signature,
    fields: descriptor.fields.map((field) => ({
      key: field.name,
      label: field.label,
      kind: formKind(field),
      required: field.required,
      placeholder: field.example,
      help: field.help,
      ...(field.minItems === undefined ? {} : { minItems: field.minItems }),
    })),
  };
}

/** Named groups: serialized by @ctxgraph/serialization as `{ type: 'fragment', name, children }`. */
const GROUP_SPEC: FragmentSpec = {
  type: 'fragment',
  label: 'Group (nested)',
  builder: 'fragment(name, ...children)',
  fields: [
    {
      key: 'name',
      label: 'Name',
      kind: 'text',
      required: true,
      placeholder: 'database',
      help: 'The group’s name.',
    },
    {
      key: 'children',
      label: 'Children',
      kind: 'children',
      required: false,
      help: 'Fragments or text inside the group.',
    },
  ],
};

/** The types the menu lists first (the usual start of a system prompt), before groups. */
const FIRST = ['role', 'hint'];

/**
 * Every built-in fragment type of @ctxgraph/fragments-core (one form each, derived from its
 * descriptor), plus named groups, in the order the menu lists them.
 */
export const FRAGMENT_SPECS: FragmentSpec[] = [
  ...FIRST.flatMap((name) =>
    builtinFragmentDescriptors.filter((descriptor) => descriptor.name === name),
  ).map(specFromDescriptor),
  GROUP_SPEC,
  ...builtinFragmentDescriptors
    .filter((descriptor) => !FIRST.includes(descriptor.name))
    .map(specFromDescriptor),
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
    if (item.kind === 'list')
      value[item.key] = Array.from({ length: Math.max(1, item.minItems ?? 0) }, () => '');
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
  // The fragment's budget settings (withBudget: priority, required) ride along unchanged.
  const budget = value.budget;
  if (typeof budget === 'object' && budget !== null && !Array.isArray(budget)) {
    const kept = Object.fromEntries(
      Object.entries(budget).filter(([, setting]) => setting !== null && setting !== ''),
    );
    if (Object.keys(kept).length > 0) result.budget = kept;
  }
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

/** True for a serialized fragment object (`{ type, … }`), not text or a list. */
export function isFlatFragment(value: JsonValue): value is FlatFragment {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof value.type === 'string'
  );
}

/** True when a required field of a form is still blank (or a list has too few filled items). */
export function fieldMissing(item: FieldSpec, entry: JsonValue | undefined): boolean {
  if (!item.required && item.minItems === undefined) return false;
  if (item.kind === 'text' || item.kind === 'longtext')
    return typeof entry !== 'string' || entry.trim() === '';
  if (item.kind === 'list') {
    const filled = Array.isArray(entry)
      ? entry.filter((text) => typeof text === 'string' && text.trim() !== '').length
      : 0;
    return filled < Math.max(item.required ? 1 : 0, item.minItems ?? 0);
  }
  if (item.kind === 'entries') {
    const keys =
      typeof entry === 'object' && entry !== null && !Array.isArray(entry)
        ? Object.keys(entry).filter((key) => key.trim() !== '')
        : [];
    return item.required && keys.length === 0;
  }
  return false;
}

/**
 * What a form draft still lacks before the server can read it, in words for the form
 * (`Term › Definition is required`), nested fragments included. Empty when it is complete.
 */
export function draftProblems(value: FlatFragment, where = ''): string[] {
  const spec = specFor(value.type);
  if (spec === undefined) return [];
  const label = where === '' ? spec.label : `${where} › ${spec.label}`;
  const problems: string[] = [];
  for (const item of spec.fields) {
    const entry = value[item.key];
    if (fieldMissing(item, entry)) {
      problems.push(
        item.kind === 'list' && (item.minItems ?? 0) > 1
          ? `${label} › ${item.label} needs at least ${item.minItems} items`
          : `${label} › ${item.label} is required`,
      );
    }
    if ((item.kind === 'policies' || item.kind === 'children') && Array.isArray(entry)) {
      entry.forEach((child, index) => {
        if (isFlatFragment(child)) problems.push(...draftProblems(child, `${label} ${index + 1}`));
        else if (typeof child === 'string' && child.trim() === '')
          problems.push(`${label} › text ${index + 1} is empty`);
      });
    }
  }
  return problems;
}
