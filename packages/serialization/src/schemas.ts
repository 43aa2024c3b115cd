import {
  builtinFragmentDescriptors,
  type FragmentBudget,
  type FragmentFieldDescriptor,
  type FragmentTypeDescriptor,
} from '@ctxgraph/fragments-core';
import { z } from 'zod';
import { describeKind } from './describe-kind';

// One schema per supported fragment type, for the flat JSON form `{ type, ...fields }`, derived
// from the type's descriptor in fragments-core (its fields, their kinds, which are required).
// The schemas are strict (unknown fields are refused) and as demanding as the builders they feed
// (no blank strings, minimum list lengths), so JSON that passes a schema always hydrates.

const nonBlank = z
  .string({ error: 'expected string' })
  .refine((value) => value.trim() !== '', { error: 'expected a non-empty string' });

const textList = (minimum: number) =>
  z.array(nonBlank).min(minimum, { error: `expected at least ${minimum} item(s)` });

/**
 * `{ priority?, required? }`: the budget settings of a fragment (`withBudget()` in fragments-core),
 * stored as the optional `budget` field of its serialized form, built-in, custom or group alike.
 * Strict: a finite `priority`, a boolean `required`, nothing else.
 */
export const serializedBudgetSchema: z.ZodType<FragmentBudget> = z.strictObject(
  {
    priority: z
      .custom<number>((value) => typeof value === 'number' && Number.isFinite(value), {
        error: (issue) =>
          `expected a finite number, received ${typeof issue.input === 'number' ? String(issue.input) : describeKind(issue.input)}`,
      })
      .optional(),
    required: z.boolean({ error: 'expected boolean' }).optional(),
  },
  { error: 'expected an object with priority and/or required' },
);

/**
 * The optional `budget` field every serialized fragment may carry: the fragment's budget
 * settings for `resolve({ budget })`, left out when it has none.
 */
export interface SerializedBudgetField {
  /** Priority and required mark (`withBudget()`); absent when the fragment has none. */
  budget?: FragmentBudget;
}

/** `{ type: 'term', name, definition }`: a {@link term} fragment. */
interface SerializedTerm extends SerializedBudgetField {
  type: 'term';
  /** The term. */
  name: string;
  /** What it means. */
  definition: string;
}

/** `{ type: 'hint', text }`: a `hint()` fragment (its data is the text). */
interface SerializedHint extends SerializedBudgetField {
  type: 'hint';
  /** The advice. */
  text: string;
}

/** `{ type: 'guardrail', rule, reason?, action? }`: a `guardrail()` fragment. */
interface SerializedGuardrail extends SerializedBudgetField {
  type: 'guardrail';
  /** What must (not) happen. */
  rule: string;
  /** Why. */
  reason?: string;
  /** What to do instead. */
  action?: string;
}

/** `{ type: 'explain', concept, explanation, therefore? }`: an `explain()` fragment. */
interface SerializedExplain extends SerializedBudgetField {
  type: 'explain';
  /** The concept. */
  concept: string;
  /** The explanation. */
  explanation: string;
  /** What follows from it. */
  therefore?: string;
}

/** `{ type: 'example', question, answer, note? }`: an `example()` fragment. */
interface SerializedExample extends SerializedBudgetField {
  type: 'example';
  /** The question or input. */
  question: string;
  /** The expected answer. */
  answer: string;
  /** Why the answer is right. */
  note?: string;
}

/** `{ type: 'clarification', when, ask, reason? }`: a `clarification()` fragment. */
interface SerializedClarification extends SerializedBudgetField {
  type: 'clarification';
  /** When to ask. */
  when: string;
  /** What to ask. */
  ask: string;
  /** Why asking helps. */
  reason?: string;
}

/** `{ type: 'workflow', task, steps, triggers?, notes? }`: a `workflow()` fragment. */
interface SerializedWorkflow extends SerializedBudgetField {
  type: 'workflow';
  /** What the workflow accomplishes. */
  task: string;
  /** The steps in order (at least one). */
  steps: string[];
  /** What starts it. */
  triggers?: string[];
  /** Anything else. */
  notes?: string;
}

/** `{ type: 'quirk', issue, workaround }`: a `quirk()` fragment. */
interface SerializedQuirk extends SerializedBudgetField {
  type: 'quirk';
  /** The oddity. */
  issue: string;
  /** How to work around it. */
  workaround: string;
}

/** `{ type: 'styleGuide', prefer, never?, always? }`: a `styleGuide()` fragment. */
interface SerializedStyleGuide extends SerializedBudgetField {
  type: 'styleGuide';
  /** What to prefer. */
  prefer: string;
  /** What never to do. */
  never?: string;
  /** What always to do. */
  always?: string;
}

/** `{ type: 'analogy', concepts, relationship, insight? }`: an `analogy()` fragment. */
interface SerializedAnalogy extends SerializedBudgetField {
  type: 'analogy';
  /** The concepts compared (at least two). */
  concepts: string[];
  /** How they relate. */
  relationship: string;
  /** What the comparison teaches. */
  insight?: string;
}

/** `{ type: 'glossary', entries }`: a `glossary()` fragment (its data is the entries map). */
interface SerializedGlossary extends SerializedBudgetField {
  type: 'glossary';
  /** Term → meaning (at least one entry, no blank terms). */
  entries: Record<string, string>;
}

/** `{ type: 'role', text }`: a `role()` fragment (its data is the text, as for `hint`). */
interface SerializedRole extends SerializedBudgetField {
  type: 'role';
  /** Who the model is. */
  text: string;
}

/** An item of `policies`: a nested serialized policy, or plain text. */
type SerializedPolicyItem = SerializedPolicy | string;

/** `{ type: 'principle', title, description, policies? }`: a `principle()` fragment. */
interface SerializedPrinciple extends SerializedBudgetField {
  type: 'principle';
  /** A short title. */
  title: string;
  /** What the principle means. */
  description: string;
  /** The policies that implement it, serialized. */
  policies?: SerializedPolicyItem[];
}

/** `{ type: 'policy', rule, policies? }`: a `policy()` fragment, nested as deep as needed. */
interface SerializedPolicy extends SerializedBudgetField {
  type: 'policy';
  /** The rule. */
  rule: string;
  /** Sub-policies, serialized. */
  policies?: SerializedPolicyItem[];
}

/** `{ type: 'identity', name?, role? }` (at least one of them): an `identity()` fragment. */
interface SerializedIdentity extends SerializedBudgetField {
  type: 'identity';
  /** The user's name. */
  name?: string;
  /** The user's role. */
  role?: string;
}

/** `{ type: 'persona', name, role?, tone? }`: a `persona()` fragment. */
interface SerializedPersona extends SerializedBudgetField {
  type: 'persona';
  /** The persona's name. */
  name: string;
  /** What it does. */
  role?: string;
  /** How it speaks. */
  tone?: string;
}

/** `{ type: 'alias', term, meaning }`: an `alias()` fragment. */
interface SerializedAlias extends SerializedBudgetField {
  type: 'alias';
  /** The word the user says. */
  term: string;
  /** What it refers to. */
  meaning: string;
}

/** `{ type: 'preference', aspect, value }`: a `preference()` fragment. */
interface SerializedPreference extends SerializedBudgetField {
  type: 'preference';
  /** What the preference is about. */
  aspect: string;
  /** The preferred value. */
  value: string;
}

/** `{ type: 'correction', subject, wrong, right }`: a `correction()` fragment. */
interface SerializedCorrection extends SerializedBudgetField {
  type: 'correction';
  /** What it is about. */
  subject: string;
  /** The wrong belief. */
  wrong: string;
  /** What is right. */
  right: string;
}

/** The flat JSON form of any of the 19 built-in fragment types, discriminated by `type`. */
export type SerializedFragment =
  | SerializedTerm
  | SerializedHint
  | SerializedGuardrail
  | SerializedExplain
  | SerializedExample
  | SerializedClarification
  | SerializedWorkflow
  | SerializedQuirk
  | SerializedStyleGuide
  | SerializedAnalogy
  | SerializedGlossary
  | SerializedRole
  | SerializedPrinciple
  | SerializedPolicy
  | SerializedIdentity
  | SerializedPersona
  | SerializedAlias
  | SerializedPreference
  | SerializedCorrection;

/** The `type` of a built-in serialized fragment: `'term'`, `'hint'`, … */
export type SerializedFragmentType = SerializedFragment['type'];

/**
 * The flat form of one built-in type, picked from the {@link SerializedFragment} union by its
 * `type`: `SerializedFragmentOf<'hint'>` is `{ type: 'hint', text, budget? }`.
 */
export type SerializedFragmentOf<Type extends SerializedFragmentType> = Extract<
  SerializedFragment,
  { type: Type }
>;

// Object schemas by type, filled as the descriptors are derived; `fragments` fields reach them
// lazily, so a type may nest itself (policy) or one derived after it.
const objectSchemas = new Map<string, z.ZodType>();

function fragmentItemSchema(types: readonly string[]): z.ZodType {
  const objects = types.map((type) =>
    z.lazy(() => {
      const schema = objectSchemas.get(type);
      if (schema === undefined) throw new Error(`no serialized schema for fragment type "${type}"`);
      return schema;
    }),
  );
  return z.union([nonBlank, ...objects], {
    error: `expected a serialized ${types.join(' or ')} object or a non-empty string`,
  });
}

const glossaryEntries = z
  .record(
    z.string().refine((key) => key.trim() !== '', { error: 'a term must not be blank' }),
    nonBlank,
    { error: 'expected an object of term → meaning' },
  )
  .refine((entries) => Object.keys(entries).length > 0, { error: 'expected at least one entry' });

// `__proto__` cannot be an own key of an ordinary object built by assignment (the glossary builder
// would silently lose it, and so would zod's record), so it is refused up front.
const entriesSchema = z.preprocess((value, context) => {
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
    context.issues.push({
      code: 'custom',
      path: ['__proto__'],
      message: 'the term "__proto__" cannot be stored in a glossary',
      input: value,
    });
  }
  return value;
}, glossaryEntries);

function fieldSchema(field: FragmentFieldDescriptor): z.ZodType {
  const schema = valueSchema(field);
  return field.required ? schema : schema.optional();
}

function valueSchema(field: FragmentFieldDescriptor): z.ZodType {
  switch (field.kind) {
    case 'text':
      return nonBlank;
    case 'textList':
      return textList(field.minItems ?? (field.required ? 1 : 0));
    case 'entries':
      return entriesSchema;
    case 'fragments':
      return z.array(fragmentItemSchema(field.fragmentTypes ?? []), { error: 'expected an array' });
  }
}

/** The strict object schema of a descriptor's flat form `{ type, ...fields }`. */
function objectSchema(descriptor: FragmentTypeDescriptor): z.ZodObject {
  const shape: Record<string, z.ZodType> = { type: z.literal(descriptor.name) };
  for (const field of descriptor.fields) {
    if (field.name === 'budget') {
      // A programming error in a descriptor, caught when this module loads.
      throw new Error(
        `fragment type "${descriptor.name}" has a field named "budget", which the serialized form reserves for budget settings`,
      );
    }
    shape[field.name] = fieldSchema(field);
  }
  shape.budget = serializedBudgetSchema.optional();
  const object = z.strictObject(shape);
  const oneOf = descriptor.atLeastOneOf;
  if (oneOf === undefined) return object;
  return object.refine((value) => oneOf.some((name) => value[name] !== undefined), {
    error: `expected at least one of ${oneOf.join(' or ')}`,
  });
}

for (const descriptor of builtinFragmentDescriptors) {
  objectSchemas.set(descriptor.name, objectSchema(descriptor));
}

/**
 * Every built-in type's schema, keyed by its `type` (derived from fragments-core's descriptors):
 * the one way to reach a single type's schema.
 *
 * @example
 * serializedFragmentSchemas.hint.parse({ type: 'hint', text: 'Be brief' });
 */
export const serializedFragmentSchemas: {
  readonly [Type in SerializedFragmentType]: z.ZodType<SerializedFragmentOf<Type>>;
} = Object.freeze(Object.fromEntries(objectSchemas)) as {
  readonly [Type in SerializedFragmentType]: z.ZodType<SerializedFragmentOf<Type>>;
};

/**
 * Any built-in serialized fragment, discriminated by `type`: validate a stored row with
 * `serializedFragmentSchema.safeParse(row)`. (`toFragment` checks the same rules and gives
 * readable paths; custom types registered on a serializer and groups are not part of this schema.)
 */
export const serializedFragmentSchema: z.ZodType<SerializedFragment> = z.discriminatedUnion(
  'type',
  [...objectSchemas.values()] as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<SerializedFragment>;

/** A child of a serialized group: text, a serialized fragment of a registered type, or a group. */
export type SerializedGroupChild = string | SerializedFragment | SerializedGroup;

/**
 * `{ type: 'fragment', name, children }`: a named group made by `fragment(name, ...children)`
 * whose data is a list of fragments and text. Children of custom types registered on a serializer
 * are allowed too.
 */
export interface SerializedGroup extends SerializedBudgetField {
  type: 'fragment';
  /** The group's name (the fragment's `name`). */
  name: string;
  /** Its children, in order: text stays text, fragments are serialized (groups nest). */
  children: SerializedGroupChild[];
}

/**
 * The group's own fields; each child is checked by the serializer against its own type, so that
 * groups can hold custom types too.
 */
export const serializedGroupShellSchema: z.ZodType<{
  type: 'fragment';
  name: string;
  children: unknown[];
  budget?: FragmentBudget;
}> = z.strictObject({
  type: z.literal('fragment'),
  name: nonBlank,
  children: z.array(z.unknown(), { error: 'expected an array' }),
  budget: serializedBudgetSchema.optional(),
});

/**
 * Schema of {@link SerializedGroup} with built-in children only (recursive). The serializer
 * accepts children of its registered custom types as well.
 */
export const serializedGroupSchema: z.ZodType<SerializedGroup> = z.strictObject({
  type: z.literal('fragment'),
  name: nonBlank,
  children: z.array(
    z.union([z.string(), serializedFragmentSchema, z.lazy(() => serializedGroupSchema)]),
    { error: 'expected an array' },
  ),
  budget: serializedBudgetSchema.optional(),
});
