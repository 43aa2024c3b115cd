import {
  alias,
  analogy,
  type ContextFragment,
  clarification,
  correction,
  example,
  explain,
  type FragmentData,
  glossary,
  guardrail,
  hint,
  identity,
  type PolicyData,
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
import fc from 'fast-check';

/** Strings that tend to break serializers and renderers: markup, quotes, escapes, unicode. */
const edgeStrings = [
  '<policy>',
  '</hint>&amp;',
  '"quoted"',
  "it's",
  '\\back\\slash',
  'line\nbreak',
  '\ttabbed',
  '  padded  ',
  '👩‍👩‍👧 family',
  'עברית RTL',
  'e\u0301 combining',
  '\u0000 nul',
  '\uD800 lone surrogate',
  '{"type":"hint","text":"x"}',
  'type',
  'constructor',
  'toString',
  'null',
  '0',
];

/** Text the builders accept: anything that is not blank. */
export const text: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.constantFrom(...edgeStrings), weight: 2 },
    // Surrounding whitespace must survive: builders keep it, so serialization must too.
    fc
      .tuple(fc.constantFrom(' ', '\n', '\t', '\u00a0'), fc.string({ minLength: 1, maxLength: 8 }))
      .map(([space, core]) => `${space}${core}${space}`),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
  )
  .filter((value) => value.trim() !== '');

/** Strings the builders refuse. */
export const blank: fc.Arbitrary<string> = fc.constantFrom(
  '',
  ' ',
  '\t\n',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\ufeff',
);

// `__proto__` cannot be a glossary term (see the glossary schema); it is tested on its own.
const glossaryTerm = text.filter((value) => value !== '__proto__');

const optional = { requiredKeys: [] as never[] };

const { policyFragment } = fc.letrec<{ policyFragment: ContextFragment }>((tie) => ({
  policyFragment: fc
    .record(
      {
        rule: text,
        policies: fc.array(
          fc.oneof({ depthSize: 'small', maxDepth: 4 }, text, tie('policyFragment')),
          {
            maxLength: 3,
          },
        ),
      },
      { requiredKeys: ['rule'] },
    )
    .map((input) => policy(input as PolicyData)),
}));

/** One arbitrary per built-in type, building fragments through the real builders. */
export const fragmentsByType: Record<string, fc.Arbitrary<ContextFragment>> = {
  term: fc.tuple(text, text).map(([name, definition]) => term(name, definition)),
  hint: text.map((value) => hint(value)),
  guardrail: fc.oneof(
    text.map((rule) => guardrail(rule)),
    fc
      .record({ rule: text, reason: text, action: text }, { requiredKeys: ['rule'] })
      .map((input) => guardrail(input)),
  ),
  explain: fc
    .record(
      { concept: text, explanation: text, therefore: text },
      { requiredKeys: ['concept', 'explanation'] },
    )
    .map((input) => explain(input)),
  example: fc
    .record({ question: text, answer: text, note: text }, { requiredKeys: ['question', 'answer'] })
    .map((input) => example(input)),
  clarification: fc
    .record({ when: text, ask: text, reason: text }, { requiredKeys: ['when', 'ask'] })
    .map((input) => clarification(input)),
  workflow: fc
    .record(
      {
        task: text,
        steps: fc.array(text, { minLength: 1, maxLength: 4 }),
        triggers: fc.array(text, { maxLength: 3 }),
        notes: text,
      },
      { requiredKeys: ['task', 'steps'] },
    )
    .map((input) => workflow(input)),
  quirk: fc.record({ issue: text, workaround: text }).map((input) => quirk(input)),
  styleGuide: fc
    .record({ prefer: text, never: text, always: text }, { requiredKeys: ['prefer'] })
    .map((input) => styleGuide(input)),
  analogy: fc
    .record(
      {
        concepts: fc.array(text, { minLength: 2, maxLength: 4 }),
        relationship: text,
        insight: text,
      },
      { requiredKeys: ['concepts', 'relationship'] },
    )
    .map((input) => analogy(input)),
  glossary: fc
    .dictionary(glossaryTerm, text, { minKeys: 1, maxKeys: 5 })
    .map((entries) => glossary(entries)),
  role: text.map((value) => role(value)),
  principle: fc
    .record(
      {
        title: text,
        description: text,
        policies: fc.array(fc.oneof(text, policyFragment), { maxLength: 3 }),
      },
      { requiredKeys: ['title', 'description'] },
    )
    .map((input) => principle(input as Parameters<typeof principle>[0])),
  policy: policyFragment,
  identity: fc
    .record({ name: text, role: text }, optional)
    .filter((input) => input.name !== undefined || input.role !== undefined)
    .map((input) => identity(input)),
  persona: fc
    .record({ name: text, role: text, tone: text }, { requiredKeys: ['name'] })
    .map((input) => persona(input)),
  alias: fc.tuple(text, text).map(([word, meaning]) => alias(word, meaning)),
  preference: fc.tuple(text, text).map(([aspect, value]) => preference(aspect, value)),
  correction: fc
    .record({ subject: text, wrong: text, right: text })
    .map((input) => correction(input)),
};

/** A fragment of any built-in type. */
export const anyFragment: fc.Arbitrary<ContextFragment> = fc.oneof(
  ...Object.values(fragmentsByType),
);

// Keys that would make a plain object look like a fragment (`data` next to `name`) or like a
// serialized fragment (`type`) are left out: those objects are not plain data by definition.
const plainKey = fc
  .string({ maxLength: 8 })
  .filter((key) => !['type', 'data', '__proto__'].includes(key));

const finiteNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Object.is(value, -0)),
);

const dataArbitraries = fc.letrec<{ fragmentData: FragmentData }>((tie) => ({
  fragmentData: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.string({ maxLength: 12 }),
    finiteNumber,
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    anyFragment,
    fc.array(tie('fragmentData'), { maxLength: 4 }),
    fc.dictionary(plainKey, tie('fragmentData'), { maxKeys: 4 }),
  ),
}));

/** Fragment data as custom codecs hold it: JSON values, `undefined`, and fragments, nested. */
export const fragmentData: fc.Arbitrary<FragmentData> = dataArbitraries.fragmentData;
