import { BuilderInput, compact } from './builder-input';
import type { ContextFragment, FragmentData } from './context-fragment';

// One descriptor per built-in fragment type is the single definition of that type: the builders
// in builders.ts check their input from it, @ctxgraph/serialization derives each type's JSON schema
// and conversions from it, and the playground derives its forms from it. Descriptors are plain
// data (plus `build`), so any runtime or tool can read them.

/**
 * How a field's value is shaped.
 *
 * - `text`: a non-blank string.
 * - `textList`: a list of non-blank strings (`minItems` says how many at least).
 * - `entries`: a map of non-blank key → non-blank string (a glossary's terms).
 * - `fragments`: a list whose items are fragments of the `fragmentTypes` named, or non-blank
 *   strings (a principle's policies).
 */
export type FragmentFieldKind = 'text' | 'textList' | 'entries' | 'fragments';

/** One field of a built-in fragment type. */
export interface FragmentFieldDescriptor {
  /** The key in the fragment's data and in its serialized form. */
  readonly name: string;
  /** How the value is shaped. */
  readonly kind: FragmentFieldKind;
  /** Whether the field must be given. */
  readonly required: boolean;
  /** A short human label, for forms. */
  readonly label: string;
  /** One sentence on what goes in the field, for forms and docs. */
  readonly help: string;
  /**
   * For `textList`: the fewest items allowed.
   * @default 1 when required, 0 otherwise
   */
  readonly minItems?: number;
  /** For `fragments`: the fragment names an item may have (strings are always allowed). */
  readonly fragmentTypes?: readonly string[];
  /**
   * For `text`: whether the value is usually several lines (a form shows a text area).
   * @default false
   */
  readonly multiline?: boolean;
  /** A sample value, shown as a form placeholder. */
  readonly example?: string;
}

/** The definition of one built-in fragment type. */
export interface FragmentTypeDescriptor<Data extends FragmentData = FragmentData> {
  /** The fragment's `name`, which is also the `type` of its serialized form. */
  readonly name: string;
  /** A short human label (`'Style guide'`). */
  readonly label: string;
  /** What the type is for, in one sentence. */
  readonly description: string;
  /** The builder call as documented (`'guardrail({ rule, reason?, action? })'`). */
  readonly signature: string;
  /** The fields, in the order builders check them and serialized forms list them. */
  readonly fields: readonly FragmentFieldDescriptor[];
  /**
   * When set, the fragment's data is this one field's value instead of an object of fields
   * (`hint`'s data is its `text`; `glossary`'s data is its `entries`).
   */
  readonly dataField?: string;
  /** Optional fields of which at least one must be given (`identity`: name or role). */
  readonly atLeastOneOf?: readonly string[];
  /**
   * Builds the fragment from an object of its fields, with the builder's checks.
   *
   * @throws {ValidationError} listing every field at fault.
   */
  build(fields: Record<string, unknown>): ContextFragment<Data>;
}

type DescriptorInput = Omit<FragmentTypeDescriptor, 'build'>;

function text(
  name: string,
  label: string,
  help: string,
  options: { required?: boolean; multiline?: boolean; example?: string } = {},
): FragmentFieldDescriptor {
  const field: FragmentFieldDescriptor = {
    name,
    kind: 'text',
    required: options.required ?? true,
    label,
    help,
    ...(options.multiline ? { multiline: true } : {}),
    ...(options.example === undefined ? {} : { example: options.example }),
  };
  return Object.freeze(field);
}

const optional = { required: false } as const;

function textList(
  name: string,
  label: string,
  help: string,
  required: boolean,
  minItems: number,
): FragmentFieldDescriptor {
  return Object.freeze({ name, kind: 'textList', required, label, help, minItems });
}

function policies(label: string, help: string): FragmentFieldDescriptor {
  return Object.freeze({
    name: 'policies',
    kind: 'fragments',
    required: false,
    label,
    help,
    fragmentTypes: Object.freeze(['policy']),
  });
}

/**
 * Checks `values` against a descriptor's fields with `check`, and returns the fragment (or the
 * placeholder data of a failed check; the caller's `check.done()` throws then).
 */
function checkFields<Data extends FragmentData>(
  descriptor: DescriptorInput,
  values: Record<string, unknown>,
  check: BuilderInput,
): ContextFragment<Data> {
  const data: Record<string, unknown> = {};
  for (const field of descriptor.fields) {
    const value = values[field.name];
    data[field.name] = checkField(field, value, check);
  }
  const oneOf = descriptor.atLeastOneOf;
  if (oneOf?.every((name) => values[name] === undefined)) {
    check.problem('input', `expected at least one of ${oneOf.join(' or ')}`);
  }
  const result = descriptor.dataField === undefined ? compact(data) : data[descriptor.dataField];
  return { name: descriptor.name, data: result as Data };
}

function checkField(field: FragmentFieldDescriptor, value: unknown, check: BuilderInput): unknown {
  switch (field.kind) {
    case 'text':
      return field.required ? check.text(field.name, value) : check.optionalText(field.name, value);
    case 'textList':
      if (!field.required && value === undefined) return undefined;
      return check.textList(field.name, value, field.minItems ?? (field.required ? 1 : 0));
    case 'fragments':
      return check.fragmentList(field.name, value, field.fragmentTypes ?? []);
    case 'entries':
      return checkEntries(field.name, value, check);
  }
}

function checkEntries(path: string, value: unknown, check: BuilderInput): Record<string, string> {
  const entries = check.object(path, value);
  const data: Record<string, string> = {};
  const keys = Object.keys(entries);
  if (keys.length === 0) check.problem(path, 'expected at least one entry');
  for (const key of keys) {
    if (key.trim() === '') check.problem(path, 'a term must not be blank');
    // defineProperty, not assignment: a term named "__proto__" must be kept as a term.
    Object.defineProperty(data, key, {
      value: check.text(`${path}[${JSON.stringify(key)}]`, entries[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return data;
}

/**
 * Builds a fragment of a descriptor's type from an object of its fields, naming `builder` in the
 * error (`'guardrail(input)'`). When `objectPath` is given, `values` must be a plain object and
 * a non-object is reported at that path.
 */
export function buildFromDescriptor<Data extends FragmentData>(
  descriptor: DescriptorInput,
  builder: string,
  values: unknown,
  objectPath?: string,
): ContextFragment<Data> {
  const check = new BuilderInput(builder);
  const fields =
    objectPath === undefined
      ? (values as Record<string, unknown>)
      : check.object(objectPath, values);
  const fragment = checkFields<Data>(descriptor, fields, check);
  check.done();
  return fragment;
}

function define<Data extends FragmentData>(input: DescriptorInput): FragmentTypeDescriptor<Data> {
  const descriptor: FragmentTypeDescriptor<Data> = {
    ...input,
    fields: Object.freeze([...input.fields]),
    build: (fields) => buildFromDescriptor<Data>(input, `${input.name}(input)`, fields, 'input'),
  };
  return Object.freeze(descriptor);
}

/** The `term` type: a term and what it means in this domain. */
export const termType: FragmentTypeDescriptor = define({
  name: 'term',
  label: 'Term',
  description: 'A term and what it means in this domain.',
  signature: 'term(name, definition)',
  fields: [
    text('name', 'Term', 'The term.', { example: 'MRR' }),
    text('definition', 'Definition', 'What it means here.', {
      multiline: true,
      example: 'monthly recurring revenue',
    }),
  ],
});

/** The `hint` type: a short piece of advice for the model. */
export const hintType: FragmentTypeDescriptor = define({
  name: 'hint',
  label: 'Hint',
  description: 'A short piece of advice for the model.',
  signature: 'hint(text)',
  dataField: 'text',
  fields: [
    text('text', 'Text', 'The advice.', {
      multiline: true,
      example: 'Always exclude test accounts.',
    }),
  ],
});

/** The `guardrail` type: a hard rule the model must follow. */
export const guardrailType: FragmentTypeDescriptor = define({
  name: 'guardrail',
  label: 'Guardrail',
  description: 'A hard rule the model must follow.',
  signature: 'guardrail({ rule, reason?, action? })',
  fields: [
    text('rule', 'Rule', 'What must (not) happen.', {
      multiline: true,
      example: 'Never expose PII',
    }),
    text('reason', 'Reason', 'Why.', optional),
    text('action', 'Action', 'What to do instead.', optional),
  ],
});

/** The `explain` type: a concept the model needs to understand. */
export const explainType: FragmentTypeDescriptor = define({
  name: 'explain',
  label: 'Explain',
  description: 'Explains a concept the model needs to understand.',
  signature: 'explain({ concept, explanation, therefore? })',
  fields: [
    text('concept', 'Concept', 'The concept being explained.'),
    text('explanation', 'Explanation', 'The explanation.', { multiline: true }),
    text('therefore', 'Therefore', "What follows from it for the model's work.", optional),
  ],
});

/** The `example` type: a question and the answer you want. */
export const exampleType: FragmentTypeDescriptor = define({
  name: 'example',
  label: 'Example',
  description: 'A worked example: a question and the answer you want.',
  signature: 'example({ question, answer, note? })',
  fields: [
    text('question', 'Question', 'The question or input.', { multiline: true }),
    text('answer', 'Answer', 'The expected answer or output.', { multiline: true }),
    text('note', 'Note', 'Why this answer is right.', optional),
  ],
});

/** The `clarification` type: when to ask the user instead of guessing. */
export const clarificationType: FragmentTypeDescriptor = define({
  name: 'clarification',
  label: 'Clarification',
  description: 'When the model should ask the user a question instead of guessing.',
  signature: 'clarification({ when, ask, reason? })',
  fields: [
    text('when', 'When', 'The situation in which to ask.'),
    text('ask', 'Ask', 'What to ask.'),
    text('reason', 'Reason', 'Why asking helps.', optional),
  ],
});

/** The `workflow` type: an ordered procedure for a recurring task. */
export const workflowType: FragmentTypeDescriptor = define({
  name: 'workflow',
  label: 'Workflow',
  description: 'An ordered procedure for a recurring task.',
  signature: 'workflow({ task, steps, triggers?, notes? })',
  fields: [
    text('task', 'Task', 'What the workflow accomplishes.'),
    textList('steps', 'Steps', 'The steps, in order (at least one).', true, 1),
    textList('triggers', 'Triggers', 'Phrases or situations that start it.', false, 0),
    text('notes', 'Notes', 'Anything else worth knowing.', { required: false, multiline: true }),
  ],
});

/** The `quirk` type: a known oddity of the data or system, with its workaround. */
export const quirkType: FragmentTypeDescriptor = define({
  name: 'quirk',
  label: 'Quirk',
  description: 'A known oddity of the data or system, with its workaround.',
  signature: 'quirk({ issue, workaround })',
  fields: [
    text('issue', 'Issue', 'The surprising behaviour of the data or system.'),
    text('workaround', 'Workaround', 'How to work around it.'),
  ],
});

/** The `styleGuide` type: how the model should write. */
export const styleGuideType: FragmentTypeDescriptor = define({
  name: 'styleGuide',
  label: 'Style guide',
  description: 'How the model should write (code, prose, SQL).',
  signature: 'styleGuide({ prefer, never?, always? })',
  fields: [
    text('prefer', 'Prefer', 'What to prefer.'),
    text('never', 'Never', 'What never to do.', optional),
    text('always', 'Always', 'What always to do.', optional),
  ],
});

/** The `analogy` type: relates concepts to each other. */
export const analogyType: FragmentTypeDescriptor = define({
  name: 'analogy',
  label: 'Analogy',
  description: 'Relates concepts to each other so the model reasons about them correctly.',
  signature: 'analogy({ concepts, relationship, insight? })',
  fields: [
    textList('concepts', 'Concepts (two or more)', 'The concepts being compared.', true, 2),
    text('relationship', 'Relationship', 'How they relate.'),
    text('insight', 'Insight', 'What the comparison teaches.', optional),
  ],
});

/** The `glossary` type: many terms at once, as a map from term to meaning. */
export const glossaryType: FragmentTypeDescriptor = define({
  name: 'glossary',
  label: 'Glossary',
  description: 'Many terms at once, as a map from term to meaning.',
  signature: 'glossary({ term: meaning })',
  dataField: 'entries',
  fields: [
    Object.freeze({
      name: 'entries',
      kind: 'entries',
      required: true,
      label: 'Entries',
      help: 'Term → meaning (at least one entry).',
    }),
  ],
});

/** The `role` type: who the model is and what it does. */
export const roleType: FragmentTypeDescriptor = define({
  name: 'role',
  label: 'Role',
  description: 'Who the model is and what it does; usually the first fragment of a system prompt.',
  signature: 'role(text)',
  dataField: 'text',
  fields: [
    text('text', 'Text', 'Who the model is.', {
      multiline: true,
      example: 'You are a senior analytics engineer.',
    }),
  ],
});

/** The `principle` type: a guiding principle with the policies that implement it. */
export const principleType: FragmentTypeDescriptor = define({
  name: 'principle',
  label: 'Principle',
  description: 'A guiding principle with the policies that implement it.',
  signature: 'principle({ title, description, policies? })',
  fields: [
    text('title', 'Title', 'A short title.'),
    text('description', 'Description', 'What the principle means.', { multiline: true }),
    policies('Policies', 'Policies that put it into practice: policies or plain text.'),
  ],
});

/** The `policy` type: a rule, optionally refined by nested policies. */
export const policyType: FragmentTypeDescriptor = define({
  name: 'policy',
  label: 'Policy',
  description: 'A rule, optionally refined by nested policies.',
  signature: 'policy({ rule, policies? })',
  fields: [
    text('rule', 'Rule', 'The rule.'),
    policies('Sub-policies', 'Sub-policies that refine it: policies or plain text.'),
  ],
});

/** The `identity` type: who the user is (at least one field). */
export const identityType: FragmentTypeDescriptor = define({
  name: 'identity',
  label: 'Identity',
  description: 'Who the user is.',
  signature: 'identity({ name?, role? })',
  atLeastOneOf: Object.freeze(['name', 'role']),
  fields: [
    text('name', 'Name', "The user's name.", optional),
    text('role', 'Role', "The user's role.", optional),
  ],
});

/** The `persona` type: a character for the model to play. */
export const personaType: FragmentTypeDescriptor = define({
  name: 'persona',
  label: 'Persona',
  description: 'A character for the model to play.',
  signature: 'persona({ name, role?, tone? })',
  fields: [
    text('name', 'Name', "The persona's name."),
    text('role', 'Role', 'What the persona does.', optional),
    text('tone', 'Tone', 'How it speaks.', optional),
  ],
});

/** The `alias` type: another word the user uses for something. */
export const aliasType: FragmentTypeDescriptor = define({
  name: 'alias',
  label: 'Alias',
  description: 'Another word the user uses for something.',
  signature: 'alias(term, meaning)',
  fields: [
    text('term', 'Term', 'The word the user says.'),
    text('meaning', 'Meaning', 'What it refers to.'),
  ],
});

/** The `preference` type: a preference of the user. */
export const preferenceType: FragmentTypeDescriptor = define({
  name: 'preference',
  label: 'Preference',
  description: 'A preference of the user.',
  signature: 'preference(aspect, value)',
  fields: [
    text('aspect', 'Aspect', 'What the preference is about.'),
    text('value', 'Value', 'The preferred value.'),
  ],
});

/** The `correction` type: something the model got wrong before, and what is right. */
export const correctionType: FragmentTypeDescriptor = define({
  name: 'correction',
  label: 'Correction',
  description: 'Something the model got wrong before, and what is right.',
  signature: 'correction({ subject, wrong, right })',
  fields: [
    text('subject', 'Subject', 'What the correction is about.'),
    text('wrong', 'Wrong', 'The wrong belief or output.'),
    text('right', 'Right', 'What is right.'),
  ],
});

/**
 * Every built-in fragment type, in the order the spec lists them. Serialization, forms and docs
 * derive from this list, so adding a type here (with its builder) is all it takes.
 *
 * @example
 * ```ts
 * for (const type of builtinFragmentDescriptors) console.log(type.signature);
 * builtinFragmentDescriptors.find((type) => type.name === 'hint')?.build({ text: 'Be brief' });
 * ```
 */
export const builtinFragmentDescriptors: readonly FragmentTypeDescriptor[] = Object.freeze([
  termType,
  hintType,
  guardrailType,
  explainType,
  exampleType,
  clarificationType,
  workflowType,
  quirkType,
  styleGuideType,
  analogyType,
  glossaryType,
  roleType,
  principleType,
  policyType,
  identityType,
  personaType,
  aliasType,
  preferenceType,
  correctionType,
]);
