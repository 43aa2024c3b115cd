import { z } from 'zod';

// One schema per supported fragment type, for the flat JSON form `{ type, ...fields }`.
// The schemas are strict (unknown fields are refused) and as demanding as the builders they feed
// (no blank strings, minimum list lengths), so JSON that passes a schema always hydrates.

const nonBlank = z
  .string({ error: 'expected string' })
  .refine((value) => value.trim() !== '', { error: 'expected a non-empty string' });

const textList = (minimum: number) =>
  z.array(nonBlank).min(minimum, { error: `expected at least ${minimum} item(s)` });

/** `{ type: 'term', name, definition }`: a {@link term} fragment. */
export interface SerializedTerm {
  type: 'term';
  /** The term. */
  name: string;
  /** What it means. */
  definition: string;
}

/** `{ type: 'hint', text }`: a `hint()` fragment (its data is the text). */
export interface SerializedHint {
  type: 'hint';
  /** The advice. */
  text: string;
}

/** `{ type: 'guardrail', rule, reason?, action? }`: a `guardrail()` fragment. */
export interface SerializedGuardrail {
  type: 'guardrail';
  /** What must (not) happen. */
  rule: string;
  /** Why. */
  reason?: string;
  /** What to do instead. */
  action?: string;
}

/** `{ type: 'explain', concept, explanation, therefore? }`: an `explain()` fragment. */
export interface SerializedExplain {
  type: 'explain';
  /** The concept. */
  concept: string;
  /** The explanation. */
  explanation: string;
  /** What follows from it. */
  therefore?: string;
}

/** `{ type: 'example', question, answer, note? }`: an `example()` fragment. */
export interface SerializedExample {
  type: 'example';
  /** The question or input. */
  question: string;
  /** The expected answer. */
  answer: string;
  /** Why the answer is right. */
  note?: string;
}

/** `{ type: 'clarification', when, ask, reason? }`: a `clarification()` fragment. */
export interface SerializedClarification {
  type: 'clarification';
  /** When to ask. */
  when: string;
  /** What to ask. */
  ask: string;
  /** Why asking helps. */
  reason?: string;
}

/** `{ type: 'workflow', task, steps, triggers?, notes? }`: a `workflow()` fragment. */
export interface SerializedWorkflow {
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
export interface SerializedQuirk {
  type: 'quirk';
  /** The oddity. */
  issue: string;
  /** How to work around it. */
  workaround: string;
}

/** `{ type: 'styleGuide', prefer, never?, always? }`: a `styleGuide()` fragment. */
export interface SerializedStyleGuide {
  type: 'styleGuide';
  /** What to prefer. */
  prefer: string;
  /** What never to do. */
  never?: string;
  /** What always to do. */
  always?: string;
}

/** `{ type: 'analogy', concepts, relationship, insight? }`: an `analogy()` fragment. */
export interface SerializedAnalogy {
  type: 'analogy';
  /** The concepts compared (at least two). */
  concepts: string[];
  /** How they relate. */
  relationship: string;
  /** What the comparison teaches. */
  insight?: string;
}

/** `{ type: 'glossary', entries }`: a `glossary()` fragment (its data is the entries map). */
export interface SerializedGlossary {
  type: 'glossary';
  /** Term → meaning (at least one entry, no blank terms). */
  entries: Record<string, string>;
}

/** `{ type: 'role', text }`: a `role()` fragment (its data is the text, as for `hint`). */
export interface SerializedRole {
  type: 'role';
  /** Who the model is. */
  text: string;
}

/** An item of `policies`: a nested serialized policy, or plain text. */
export type SerializedPolicyItem = SerializedPolicy | string;

/** `{ type: 'principle', title, description, policies? }`: a `principle()` fragment. */
export interface SerializedPrinciple {
  type: 'principle';
  /** A short title. */
  title: string;
  /** What the principle means. */
  description: string;
  /** The policies that implement it, serialized. */
  policies?: SerializedPolicyItem[];
}

/** `{ type: 'policy', rule, policies? }`: a `policy()` fragment, nested as deep as needed. */
export interface SerializedPolicy {
  type: 'policy';
  /** The rule. */
  rule: string;
  /** Sub-policies, serialized. */
  policies?: SerializedPolicyItem[];
}

/** `{ type: 'identity', name?, role? }` (at least one of them): an `identity()` fragment. */
export interface SerializedIdentity {
  type: 'identity';
  /** The user's name. */
  name?: string;
  /** The user's role. */
  role?: string;
}

/** `{ type: 'persona', name, role?, tone? }`: a `persona()` fragment. */
export interface SerializedPersona {
  type: 'persona';
  /** The persona's name. */
  name: string;
  /** What it does. */
  role?: string;
  /** How it speaks. */
  tone?: string;
}

/** `{ type: 'alias', term, meaning }`: an `alias()` fragment. */
export interface SerializedAlias {
  type: 'alias';
  /** The word the user says. */
  term: string;
  /** What it refers to. */
  meaning: string;
}

/** `{ type: 'preference', aspect, value }`: a `preference()` fragment. */
export interface SerializedPreference {
  type: 'preference';
  /** What the preference is about. */
  aspect: string;
  /** The preferred value. */
  value: string;
}

/** `{ type: 'correction', subject, wrong, right }`: a `correction()` fragment. */
export interface SerializedCorrection {
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

// The recursion goes through this annotated item schema, so the object schemas below keep their
// inferred types (which the discriminated union needs) without a circular inference.
const policyItem: z.ZodType<SerializedPolicyItem> = z.union(
  [nonBlank, z.lazy(() => policyObject)],
  { error: 'expected a serialized policy object or a non-empty string' },
);
const policyList = z.array(policyItem, { error: 'expected an array' });

const termObject = z.strictObject({
  type: z.literal('term'),
  name: nonBlank,
  definition: nonBlank,
});
const hintObject = z.strictObject({ type: z.literal('hint'), text: nonBlank });
const guardrailObject = z.strictObject({
  type: z.literal('guardrail'),
  rule: nonBlank,
  reason: nonBlank.optional(),
  action: nonBlank.optional(),
});
const explainObject = z.strictObject({
  type: z.literal('explain'),
  concept: nonBlank,
  explanation: nonBlank,
  therefore: nonBlank.optional(),
});
const exampleObject = z.strictObject({
  type: z.literal('example'),
  question: nonBlank,
  answer: nonBlank,
  note: nonBlank.optional(),
});
const clarificationObject = z.strictObject({
  type: z.literal('clarification'),
  when: nonBlank,
  ask: nonBlank,
  reason: nonBlank.optional(),
});
const workflowObject = z.strictObject({
  type: z.literal('workflow'),
  task: nonBlank,
  steps: textList(1),
  triggers: textList(0).optional(),
  notes: nonBlank.optional(),
});
const quirkObject = z.strictObject({
  type: z.literal('quirk'),
  issue: nonBlank,
  workaround: nonBlank,
});
const styleGuideObject = z.strictObject({
  type: z.literal('styleGuide'),
  prefer: nonBlank,
  never: nonBlank.optional(),
  always: nonBlank.optional(),
});
const analogyObject = z.strictObject({
  type: z.literal('analogy'),
  concepts: textList(2),
  relationship: nonBlank,
  insight: nonBlank.optional(),
});
const glossaryEntries = z
  .record(
    z.string().refine((key) => key.trim() !== '', { error: 'a term must not be blank' }),
    nonBlank,
    { error: 'expected an object of term → meaning' },
  )
  .refine((entries) => Object.keys(entries).length > 0, { error: 'expected at least one entry' });
const glossaryObject = z.strictObject({
  type: z.literal('glossary'),
  // `__proto__` cannot be an own key of an ordinary object built by assignment (the glossary
  // builder would silently lose it, and so would zod's record), so it is refused up front.
  entries: z.preprocess((value, context) => {
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
      context.issues.push({
        code: 'custom',
        path: ['__proto__'],
        message: 'the term "__proto__" cannot be stored in a glossary',
        input: value,
      });
    }
    return value;
  }, glossaryEntries),
});
const roleObject = z.strictObject({ type: z.literal('role'), text: nonBlank });
const principleObject = z.strictObject({
  type: z.literal('principle'),
  title: nonBlank,
  description: nonBlank,
  policies: policyList.optional(),
});
const policyObject = z.strictObject({
  type: z.literal('policy'),
  rule: nonBlank,
  policies: policyList.optional(),
});
const identityObject = z
  .strictObject({
    type: z.literal('identity'),
    name: nonBlank.optional(),
    role: nonBlank.optional(),
  })
  .refine((value) => value.name !== undefined || value.role !== undefined, {
    error: 'expected at least one of name or role',
  });
const personaObject = z.strictObject({
  type: z.literal('persona'),
  name: nonBlank,
  role: nonBlank.optional(),
  tone: nonBlank.optional(),
});
const aliasObject = z.strictObject({ type: z.literal('alias'), term: nonBlank, meaning: nonBlank });
const preferenceObject = z.strictObject({
  type: z.literal('preference'),
  aspect: nonBlank,
  value: nonBlank,
});
const correctionObject = z.strictObject({
  type: z.literal('correction'),
  subject: nonBlank,
  wrong: nonBlank,
  right: nonBlank,
});

/** Schema of {@link SerializedTerm}. */
export const termSchema: z.ZodType<SerializedTerm> = termObject;
/** Schema of {@link SerializedHint}. */
export const hintSchema: z.ZodType<SerializedHint> = hintObject;
/** Schema of {@link SerializedGuardrail}. */
export const guardrailSchema: z.ZodType<SerializedGuardrail> = guardrailObject;
/** Schema of {@link SerializedExplain}. */
export const explainSchema: z.ZodType<SerializedExplain> = explainObject;
/** Schema of {@link SerializedExample}. */
export const exampleSchema: z.ZodType<SerializedExample> = exampleObject;
/** Schema of {@link SerializedClarification}. */
export const clarificationSchema: z.ZodType<SerializedClarification> = clarificationObject;
/** Schema of {@link SerializedWorkflow}. */
export const workflowSchema: z.ZodType<SerializedWorkflow> = workflowObject;
/** Schema of {@link SerializedQuirk}. */
export const quirkSchema: z.ZodType<SerializedQuirk> = quirkObject;
/** Schema of {@link SerializedStyleGuide}. */
export const styleGuideSchema: z.ZodType<SerializedStyleGuide> = styleGuideObject;
/** Schema of {@link SerializedAnalogy}. */
export const analogySchema: z.ZodType<SerializedAnalogy> = analogyObject;
/** Schema of {@link SerializedGlossary}. */
export const glossarySchema: z.ZodType<SerializedGlossary> = glossaryObject;
/** Schema of {@link SerializedRole}. */
export const roleSchema: z.ZodType<SerializedRole> = roleObject;
/** Schema of {@link SerializedPrinciple} (nested policies included). */
export const principleSchema: z.ZodType<SerializedPrinciple> = principleObject;
/** Schema of {@link SerializedPolicy} (recursive). */
export const policySchema: z.ZodType<SerializedPolicy> = policyObject;
/** Schema of {@link SerializedIdentity}. */
export const identitySchema: z.ZodType<SerializedIdentity> = identityObject;
/** Schema of {@link SerializedPersona}. */
export const personaSchema: z.ZodType<SerializedPersona> = personaObject;
/** Schema of {@link SerializedAlias}. */
export const aliasSchema: z.ZodType<SerializedAlias> = aliasObject;
/** Schema of {@link SerializedPreference}. */
export const preferenceSchema: z.ZodType<SerializedPreference> = preferenceObject;
/** Schema of {@link SerializedCorrection}. */
export const correctionSchema: z.ZodType<SerializedCorrection> = correctionObject;

/** Every built-in type's schema, keyed by its `type`. */
export const serializedFragmentSchemas: {
  readonly [Type in SerializedFragmentType]: z.ZodType<Extract<SerializedFragment, { type: Type }>>;
} = Object.freeze({
  term: termSchema,
  hint: hintSchema,
  guardrail: guardrailSchema,
  explain: explainSchema,
  example: exampleSchema,
  clarification: clarificationSchema,
  workflow: workflowSchema,
  quirk: quirkSchema,
  styleGuide: styleGuideSchema,
  analogy: analogySchema,
  glossary: glossarySchema,
  role: roleSchema,
  principle: principleSchema,
  policy: policySchema,
  identity: identitySchema,
  persona: personaSchema,
  alias: aliasSchema,
  preference: preferenceSchema,
  correction: correctionSchema,
});

/**
 * Any built-in serialized fragment, discriminated by `type`: validate a stored row with
 * `serializedFragmentSchema.safeParse(row)`. (`toFragment` checks the same rules and gives
 * readable paths; custom types registered on a serializer are not part of this schema.)
 */
export const serializedFragmentSchema: z.ZodType<SerializedFragment> = z.discriminatedUnion(
  'type',
  [
    termObject,
    hintObject,
    guardrailObject,
    explainObject,
    exampleObject,
    clarificationObject,
    workflowObject,
    quirkObject,
    styleGuideObject,
    analogyObject,
    glossaryObject,
    roleObject,
    principleObject,
    policyObject,
    identityObject,
    personaObject,
    aliasObject,
    preferenceObject,
    correctionObject,
  ],
);
