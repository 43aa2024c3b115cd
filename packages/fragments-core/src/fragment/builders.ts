import { BuilderInput, compact } from './builder-input';
import type { ContextFragment } from './context-fragment';

// Every domain builder returns a fragment named after its type whose data is either a string or a
// flat object of strings (plus nested policy fragments for principle/policy). That keeps each one
// renderable by any renderer and serializable to flat JSON by @ctxgraph/serialization.

/** Data of a {@link term} fragment. */
export interface TermData {
  /** The term. */
  name: string;
  /** What it means here. */
  definition: string;
  [key: string]: string;
}

/**
 * A term and what it means in this domain.
 *
 * @example
 * ```ts
 * term('MRR', 'monthly recurring revenue');
 * ```
 */
export function term(name: string, definition: string): ContextFragment<TermData> {
  const input = new BuilderInput('term(name, definition)');
  const data = { name: input.text('name', name), definition: input.text('definition', definition) };
  input.done();
  return { name: 'term', data };
}

/**
 * A short piece of advice for the model.
 *
 * @example
 * ```ts
 * hint('Always exclude test accounts');
 * ```
 */
export function hint(text: string): ContextFragment<string> {
  const input = new BuilderInput('hint(text)');
  const data = input.text('text', text);
  input.done();
  return { name: 'hint', data };
}

/**
 * Who the model is and what it does; usually the first fragment of a system prompt.
 *
 * @example
 * ```ts
 * role('You are a senior analytics engineer.');
 * ```
 */
export function role(text: string): ContextFragment<string> {
  const input = new BuilderInput('role(text)');
  const data = input.text('text', text);
  input.done();
  return { name: 'role', data };
}

/** Input and data of a {@link guardrail} fragment. */
export interface GuardrailData {
  /** What must (not) happen. */
  rule: string;
  /** Why. */
  reason?: string;
  /** What to do instead. */
  action?: string;
  [key: string]: string | undefined;
}

/**
 * A hard rule the model must follow. Pass a string for just the rule.
 *
 * @example
 * ```ts
 * guardrail({ rule: 'Never expose PII', reason: 'GDPR', action: 'Aggregate instead' });
 * guardrail('Never run DELETE');
 * ```
 */
export function guardrail(input: GuardrailData | string): ContextFragment<GuardrailData> {
  const check = new BuilderInput('guardrail(input)');
  const value = typeof input === 'string' ? { rule: input } : check.object('input', input);
  const data = compact({
    rule: check.text('rule', value.rule),
    reason: check.optionalText('reason', value.reason),
    action: check.optionalText('action', value.action),
  });
  check.done();
  return { name: 'guardrail', data };
}

/** Input and data of an {@link explain} fragment. */
export interface ExplainData {
  /** The concept being explained. */
  concept: string;
  /** The explanation. */
  explanation: string;
  /** What follows from it for the model's work. */
  therefore?: string;
  [key: string]: string | undefined;
}

/**
 * Explains a concept the model needs to understand.
 *
 * @example
 * ```ts
 * explain({ concept: 'churn', explanation: 'A customer who cancels', therefore: 'Count cancellations, not downgrades' });
 * ```
 */
export function explain(input: ExplainData): ContextFragment<ExplainData> {
  const check = new BuilderInput('explain(input)');
  const value = check.object('input', input);
  const data = compact({
    concept: check.text('concept', value.concept),
    explanation: check.text('explanation', value.explanation),
    therefore: check.optionalText('therefore', value.therefore),
  });
  check.done();
  return { name: 'explain', data };
}

/** Input and data of an {@link example} fragment. */
export interface ExampleData {
  /** The question or input. */
  question: string;
  /** The expected answer or output. */
  answer: string;
  /** Why this answer is right. */
  note?: string;
  [key: string]: string | undefined;
}

/**
 * A worked example: a question and the answer you want.
 *
 * @example
 * ```ts
 * example({ question: 'Revenue last month?', answer: 'SELECT sum(amount) FROM invoices WHERE …' });
 * ```
 */
export function example(input: ExampleData): ContextFragment<ExampleData> {
  const check = new BuilderInput('example(input)');
  const value = check.object('input', input);
  const data = compact({
    question: check.text('question', value.question),
    answer: check.text('answer', value.answer),
    note: check.optionalText('note', value.note),
  });
  check.done();
  return { name: 'example', data };
}

/** Input and data of a {@link clarification} fragment. */
export interface ClarificationData {
  /** The situation in which to ask. */
  when: string;
  /** What to ask. */
  ask: string;
  /** Why asking helps. */
  reason?: string;
  [key: string]: string | undefined;
}

/**
 * When the model should ask the user a question instead of guessing.
 *
 * @example
 * ```ts
 * clarification({ when: 'The date range is missing', ask: 'Which period do you mean?' });
 * ```
 */
export function clarification(input: ClarificationData): ContextFragment<ClarificationData> {
  const check = new BuilderInput('clarification(input)');
  const value = check.object('input', input);
  const data = compact({
    when: check.text('when', value.when),
    ask: check.text('ask', value.ask),
    reason: check.optionalText('reason', value.reason),
  });
  check.done();
  return { name: 'clarification', data };
}

/** Input and data of a {@link workflow} fragment. */
export interface WorkflowData {
  /** What the workflow accomplishes. */
  task: string;
  /** The steps, in order (at least one). */
  steps: string[];
  /** Phrases or situations that start it. */
  triggers?: string[];
  /** Anything else worth knowing. */
  notes?: string;
  [key: string]: string | string[] | undefined;
}

/**
 * An ordered procedure for a recurring task.
 *
 * @example
 * ```ts
 * workflow({ task: 'Churn analysis', steps: ['Find cancellations', 'Group by cohort'], triggers: ['why are we losing customers'] });
 * ```
 */
export function workflow(input: WorkflowData): ContextFragment<WorkflowData> {
  const check = new BuilderInput('workflow(input)');
  const value = check.object('input', input);
  const data = compact({
    task: check.text('task', value.task),
    steps: check.textList('steps', value.steps, 1),
    triggers: check.optionalTextList('triggers', value.triggers),
    notes: check.optionalText('notes', value.notes),
  });
  check.done();
  return { name: 'workflow', data };
}

/** Input and data of a {@link quirk} fragment. */
export interface QuirkData {
  /** The surprising behaviour of the data or system. */
  issue: string;
  /** How to work around it. */
  workaround: string;
  [key: string]: string;
}

/**
 * A known oddity of the data or system, with its workaround.
 *
 * @example
 * ```ts
 * quirk({ issue: 'Amounts are stored in cents', workaround: 'Divide by 100 for display' });
 * ```
 */
export function quirk(input: QuirkData): ContextFragment<QuirkData> {
  const check = new BuilderInput('quirk(input)');
  const value = check.object('input', input);
  const data = {
    issue: check.text('issue', value.issue),
    workaround: check.text('workaround', value.workaround),
  };
  check.done();
  return { name: 'quirk', data };
}

/** Input and data of a {@link styleGuide} fragment. */
export interface StyleGuideData {
  /** What to prefer. */
  prefer: string;
  /** What never to do. */
  never?: string;
  /** What always to do. */
  always?: string;
  [key: string]: string | undefined;
}

/**
 * How the model should write (code, prose, SQL).
 *
 * @example
 * ```ts
 * styleGuide({ prefer: 'CTEs over subqueries', never: 'SELECT *', always: 'Qualify column names' });
 * ```
 */
export function styleGuide(input: StyleGuideData): ContextFragment<StyleGuideData> {
  const check = new BuilderInput('styleGuide(input)');
  const value = check.object('input', input);
  const data = compact({
    prefer: check.text('prefer', value.prefer),
    never: check.optionalText('never', value.never),
    always: check.optionalText('always', value.always),
  });
  check.done();
  return { name: 'styleGuide', data };
}

/** Input and data of an {@link analogy} fragment. */
export interface AnalogyData {
  /** The concepts being compared (at least two). */
  concepts: string[];
  /** How they relate. */
  relationship: string;
  /** What the comparison teaches. */
  insight?: string;
  [key: string]: string | string[] | undefined;
}

/**
 * Relates concepts to each other so the model reasons about them correctly.
 *
 * @example
 * ```ts
 * analogy({ concepts: ['logo churn', 'revenue churn'], relationship: 'count of customers vs money lost' });
 * ```
 */
export function analogy(input: AnalogyData): ContextFragment<AnalogyData> {
  const check = new BuilderInput('analogy(input)');
  const value = check.object('input', input);
  const data = compact({
    concepts: check.textList('concepts', value.concepts, 2),
    relationship: check.text('relationship', value.relationship),
    insight: check.optionalText('insight', value.insight),
  });
  check.done();
  return { name: 'analogy', data };
}

/** Data of a {@link glossary} fragment: term → meaning. */
export type GlossaryData = Record<string, string>;

/**
 * Many terms at once, as a map from term to meaning (at least one entry).
 *
 * @example
 * ```ts
 * glossary({ ARR: 'annual recurring revenue', NRR: 'net revenue retention' });
 * ```
 */
export function glossary(entries: GlossaryData): ContextFragment<GlossaryData> {
  const check = new BuilderInput('glossary(entries)');
  const value = check.object('entries', entries);
  const data: GlossaryData = {};
  const keys = Object.keys(value);
  if (keys.length === 0) check.problem('entries', 'expected at least one entry');
  for (const key of keys) {
    if (key.trim() === '') check.problem('entries', 'a term must not be blank');
    // defineProperty, not assignment: a term named "__proto__" must be kept as a term.
    Object.defineProperty(data, key, {
      value: check.text(`entries[${JSON.stringify(key)}]`, value[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  check.done();
  return { name: 'glossary', data };
}

/** Input and data of a {@link policy} fragment. */
export interface PolicyData {
  /** The rule. */
  rule: string;
  /** Sub-policies that refine it: `policy()` fragments or plain strings. */
  policies?: Array<ContextFragment<PolicyData> | ContextFragment | string>;
  [key: string]: string | Array<ContextFragment | string> | undefined;
}

/**
 * A rule, optionally refined by nested policies.
 *
 * @example
 * ```ts
 * policy({ rule: 'Validate schema first', policies: [policy({ rule: 'Check table names' })] });
 * ```
 */
export function policy(input: PolicyData): ContextFragment<PolicyData> {
  const check = new BuilderInput('policy(input)');
  const value = check.object('input', input);
  const data = compact({
    rule: check.text('rule', value.rule),
    policies: check.fragmentList('policies', value.policies, ['policy']),
  });
  check.done();
  return { name: 'policy', data: data as PolicyData };
}

/** Input and data of a {@link principle} fragment. */
export interface PrincipleData {
  /** A short title. */
  title: string;
  /** What the principle means. */
  description: string;
  /** Policies that put it into practice: `policy()` fragments or plain strings. */
  policies?: Array<ContextFragment<PolicyData> | ContextFragment | string>;
  [key: string]: string | Array<ContextFragment | string> | undefined;
}

/**
 * A guiding principle with the policies that implement it.
 *
 * @example
 * ```ts
 * principle({
 *   title: 'Execution order',
 *   description: 'Preserve prerequisites',
 *   policies: [policy({ rule: 'Validate schema first' })],
 * });
 * ```
 */
export function principle(input: PrincipleData): ContextFragment<PrincipleData> {
  const check = new BuilderInput('principle(input)');
  const value = check.object('input', input);
  const data = compact({
    title: check.text('title', value.title),
    description: check.text('description', value.description),
    policies: check.fragmentList('policies', value.policies, ['policy']),
  });
  check.done();
  return { name: 'principle', data: data as PrincipleData };
}

/** Input and data of an {@link identity} fragment (at least one field). */
export interface IdentityData {
  /** The user's name. */
  name?: string;
  /** The user's role. */
  role?: string;
  [key: string]: string | undefined;
}

/**
 * Who the user is.
 *
 * @example
 * ```ts
 * identity({ name: 'Sarah', role: 'Finance manager' });
 * ```
 */
export function identity(input: IdentityData): ContextFragment<IdentityData> {
  const check = new BuilderInput('identity(input)');
  const value = check.object('input', input);
  const data = compact({
    name: check.optionalText('name', value.name),
    role: check.optionalText('role', value.role),
  });
  if (value.name === undefined && value.role === undefined) {
    check.problem('input', 'expected at least one of name or role');
  }
  check.done();
  return { name: 'identity', data };
}

/** Input and data of a {@link persona} fragment. */
export interface PersonaData {
  /** The persona's name. */
  name: string;
  /** What the persona does. */
  role?: string;
  /** How it speaks. */
  tone?: string;
  [key: string]: string | undefined;
}

/**
 * A character for the model to play.
 *
 * @example
 * ```ts
 * persona({ name: 'Ada', role: 'data coach', tone: 'warm and precise' });
 * ```
 */
export function persona(input: PersonaData): ContextFragment<PersonaData> {
  const check = new BuilderInput('persona(input)');
  const value = check.object('input', input);
  const data = compact({
    name: check.text('name', value.name),
    role: check.optionalText('role', value.role),
    tone: check.optionalText('tone', value.tone),
  });
  check.done();
  return { name: 'persona', data };
}

/** Data of an {@link alias} fragment. */
export interface AliasData {
  /** The word the user says. */
  term: string;
  /** What it refers to. */
  meaning: string;
  [key: string]: string;
}

/**
 * Another word the user uses for something.
 *
 * @example
 * ```ts
 * alias('the big table', 'analytics.events');
 * ```
 */
export function alias(term: string, meaning: string): ContextFragment<AliasData> {
  const check = new BuilderInput('alias(term, meaning)');
  const data = { term: check.text('term', term), meaning: check.text('meaning', meaning) };
  check.done();
  return { name: 'alias', data };
}

/** Data of a {@link preference} fragment. */
export interface PreferenceData {
  /** What the preference is about. */
  aspect: string;
  /** The preferred value. */
  value: string;
  [key: string]: string;
}

/**
 * A preference of the user.
 *
 * @example
 * ```ts
 * preference('date format', 'YYYY-MM-DD');
 * ```
 */
export function preference(aspect: string, value: string): ContextFragment<PreferenceData> {
  const check = new BuilderInput('preference(aspect, value)');
  const data = { aspect: check.text('aspect', aspect), value: check.text('value', value) };
  check.done();
  return { name: 'preference', data };
}

/** Input and data of a {@link correction} fragment. */
export interface CorrectionData {
  /** What the correction is about. */
  subject: string;
  /** The wrong belief or output. */
  wrong: string;
  /** What is right. */
  right: string;
  [key: string]: string;
}

/**
 * Something the model got wrong before, and what is right.
 *
 * @example
 * ```ts
 * correction({ subject: 'fiscal year', wrong: 'starts in January', right: 'starts in April' });
 * ```
 */
export function correction(input: CorrectionData): ContextFragment<CorrectionData> {
  const check = new BuilderInput('correction(input)');
  const value = check.object('input', input);
  const data = {
    subject: check.text('subject', value.subject),
    wrong: check.text('wrong', value.wrong),
    right: check.text('right', value.right),
  };
  check.done();
  return { name: 'correction', data };
}
