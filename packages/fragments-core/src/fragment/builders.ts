import type { ContextFragment } from './context-fragment';
import {
  aliasType,
  analogyType,
  buildFromDescriptor,
  clarificationType,
  correctionType,
  exampleType,
  explainType,
  glossaryType,
  guardrailType,
  hintType,
  identityType,
  personaType,
  policyType,
  preferenceType,
  principleType,
  quirkType,
  roleType,
  styleGuideType,
  termType,
  workflowType,
} from './fragment-types';

// Every domain builder returns a fragment named after its type whose data is either a string or a
// flat object of strings (plus nested policy fragments for principle/policy). That keeps each one
// renderable by any renderer and serializable to flat JSON by @ctxgraph/serialization.
// What each builder accepts is defined once, by its type's descriptor in fragment-types.ts.

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
  return buildFromDescriptor(termType, 'term(name, definition)', { name, definition });
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
  return buildFromDescriptor(hintType, 'hint(text)', { text });
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
  return buildFromDescriptor(roleType, 'role(text)', { text });
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
  if (typeof input === 'string') {
    return buildFromDescriptor(guardrailType, 'guardrail(input)', { rule: input });
  }
  return buildFromDescriptor(guardrailType, 'guardrail(input)', input, 'input');
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
  return buildFromDescriptor(explainType, 'explain(input)', input, 'input');
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
  return buildFromDescriptor(exampleType, 'example(input)', input, 'input');
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
  return buildFromDescriptor(clarificationType, 'clarification(input)', input, 'input');
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
  return buildFromDescriptor(workflowType, 'workflow(input)', input, 'input');
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
  return buildFromDescriptor(quirkType, 'quirk(input)', input, 'input');
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
  return buildFromDescriptor(styleGuideType, 'styleGuide(input)', input, 'input');
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
  return buildFromDescriptor(analogyType, 'analogy(input)', input, 'input');
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
  return buildFromDescriptor(glossaryType, 'glossary(entries)', { entries });
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
  return buildFromDescriptor(policyType, 'policy(input)', input, 'input');
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
  return buildFromDescriptor(principleType, 'principle(input)', input, 'input');
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
  return buildFromDescriptor(identityType, 'identity(input)', input, 'input');
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
  return buildFromDescriptor(personaType, 'persona(input)', input, 'input');
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
  return buildFromDescriptor(aliasType, 'alias(term, meaning)', { term, meaning });
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
  return buildFromDescriptor(preferenceType, 'preference(aspect, value)', { aspect, value });
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
  return buildFromDescriptor(correctionType, 'correction(input)', input, 'input');
}
