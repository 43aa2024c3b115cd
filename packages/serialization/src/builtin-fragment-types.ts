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
  isFragmentObject,
  type PolicyData,
  type PrincipleData,
  persona,
  policy,
  preference,
  principle,
  quirk,
  role,
  styleGuide,
  term,
  ValidationError,
  workflow,
} from '@ctxgraph/fragments-core';
import type { z } from 'zod';
import type {
  FragmentTypeDefinition,
  SerializationContext,
  SerializedFragmentBase,
} from './fragment-type-definition';
import { describeValue } from './paths';
import {
  aliasSchema,
  analogySchema,
  clarificationSchema,
  correctionSchema,
  exampleSchema,
  explainSchema,
  glossarySchema,
  guardrailSchema,
  hintSchema,
  identitySchema,
  personaSchema,
  policySchema,
  preferenceSchema,
  principleSchema,
  quirkSchema,
  roleSchema,
  type SerializedFragment,
  styleGuideSchema,
  termSchema,
  workflowSchema,
} from './schemas';

// Each built-in type maps a builder's fragment to its flat JSON and back through the same builder,
// so hydrated fragments are exactly what application code would have built.

type Serialized<Type extends SerializedFragment['type']> = Extract<
  SerializedFragment,
  { type: Type }
>;

/** Fragments whose data is one string, stored under `text`. */
function textType<S extends SerializedFragmentBase & { text: string }>(
  type: S['type'],
  schema: z.ZodType<S>,
  build: (text: string) => ContextFragment,
): FragmentTypeDefinition<S> {
  return {
    type,
    schema,
    fromFragment: (fragment) => ({ text: fragment.data }),
    toFragment: (serialized) => build(serialized.text),
  };
}

/** Fragments whose data is a flat object whose keys are the flat form's fields. */
function objectType<S extends SerializedFragmentBase>(
  type: S['type'],
  schema: z.ZodType<S>,
  build: (fields: Omit<S, 'type'>, context: SerializationContext) => ContextFragment,
): FragmentTypeDefinition<S> {
  return {
    type,
    schema,
    fromFragment: (fragment) => {
      const data = fragment.data;
      if (!isFragmentObject(data)) {
        throw new ValidationError(`data: expected an object, received ${describeValue(data)}`, {
          issues: [
            { path: 'data', message: `expected an object, received ${describeValue(data)}` },
          ],
        });
      }
      if (Object.hasOwn(data, 'type')) {
        // `type` names the format in the flat form, so a data field of that name cannot be kept.
        throw new ValidationError('data.type: the field name "type" is reserved', {
          issues: [
            {
              path: 'data.type',
              message: 'the field name "type" is reserved by the serialized form',
            },
          ],
        });
      }
      return data;
    },
    toFragment: (serialized, context) => {
      const { type: _type, ...fields } = serialized;
      return build(fields, context);
    },
  };
}

/** Hydrates `policies` items: strings stay text, serialized policies become `policy()` fragments. */
function decodePolicies(
  policies: Array<Serialized<'policy'> | string> | undefined,
  context: SerializationContext,
): PolicyData['policies'] {
  if (policies === undefined) return undefined;
  return context.decode(policies, 'policies') as PolicyData['policies'];
}

/** The 19 fragment types of fragments-core's domain builders, in the order the spec lists them. */
export const builtinFragmentTypes: readonly FragmentTypeDefinition[] = Object.freeze([
  objectType('term', termSchema, (fields) => term(fields.name, fields.definition)),
  textType('hint', hintSchema, hint),
  objectType('guardrail', guardrailSchema, (fields) => guardrail(fields)),
  objectType('explain', explainSchema, (fields) => explain(fields)),
  objectType('example', exampleSchema, (fields) => example(fields)),
  objectType('clarification', clarificationSchema, (fields) => clarification(fields)),
  objectType('workflow', workflowSchema, (fields) => workflow(fields)),
  objectType('quirk', quirkSchema, (fields) => quirk(fields)),
  objectType('styleGuide', styleGuideSchema, (fields) => styleGuide(fields)),
  objectType('analogy', analogySchema, (fields) => analogy(fields)),
  {
    type: 'glossary',
    schema: glossarySchema,
    fromFragment: (fragment) => ({ entries: fragment.data }),
    toFragment: (serialized) => glossary(serialized.entries),
  } satisfies FragmentTypeDefinition<Serialized<'glossary'>>,
  textType('role', roleSchema, role),
  objectType('principle', principleSchema, (fields, context) => {
    const input: PrincipleData = { title: fields.title, description: fields.description };
    const policies = decodePolicies(fields.policies, context);
    if (policies !== undefined) input.policies = policies;
    return principle(input);
  }),
  objectType('policy', policySchema, (fields, context) => {
    const input: PolicyData = { rule: fields.rule };
    const policies = decodePolicies(fields.policies, context);
    if (policies !== undefined) input.policies = policies;
    return policy(input);
  }),
  objectType('identity', identitySchema, (fields) => identity(fields)),
  objectType('persona', personaSchema, (fields) => persona(fields)),
  objectType('alias', aliasSchema, (fields) => alias(fields.term, fields.meaning)),
  objectType('preference', preferenceSchema, (fields) => preference(fields.aspect, fields.value)),
  objectType('correction', correctionSchema, (fields) => correction(fields)),
] as FragmentTypeDefinition[]);
