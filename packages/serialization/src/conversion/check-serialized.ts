import { type FragmentBudget, isFragmentObject, joinPath } from '@ctxgraph/fragments-core';
import type { FragmentTypeDefinition, SerializedFragmentBase } from '../fragment-type-definition';
import { type SerializedBudgetField, serializedBudgetSchema } from '../schemas';
import { issuesFromZod } from '../zod-issues';
import { fail } from './fail';
import type { Walk } from './walk';

/**
 * Checks a serialized fragment: its fields against the type's schema, its `budget` apart
 * against the budget schema (so custom schemas need not know it), every problem at once.
 */
export function checkSerialized(
  definition: FragmentTypeDefinition,
  candidate: unknown,
  path: string,
  walk: Walk,
): { serialized: SerializedFragmentBase; budget: FragmentBudget | undefined } {
  const { fields, budget } = splitBudget(candidate);
  const result = definition.schema.safeParse(fields, { reportInput: true });
  const budgetResult =
    budget === undefined
      ? undefined
      : serializedBudgetSchema.safeParse(budget, { reportInput: true });
  if (result.success && budgetResult?.success !== false) {
    return { serialized: result.data, budget: budgetResult?.data };
  }
  const issues = [
    ...(result.success ? [] : issuesFromZod(result.error.issues, path)),
    ...(budgetResult?.success === false
      ? issuesFromZod(budgetResult.error.issues, joinPath(path, 'budget'))
      : []),
  ];
  throw fail(walk, issues, `invalid serialized "${definition.type}" fragment`);
}

/** `candidate` checked ({@link checkSerialized}), its `budget` (if any) included as the last field. */
export function validateSerialized(
  definition: FragmentTypeDefinition,
  candidate: unknown,
  path: string,
  walk: Walk,
): SerializedFragmentBase & SerializedBudgetField {
  const { serialized, budget } = checkSerialized(definition, candidate, path, walk);
  return budget === undefined ? serialized : { ...serialized, budget };
}

/**
 * A serialized fragment's fields apart from its `budget`, and that budget (`undefined` when the
 * field is absent or `undefined`). Anything that is not an object is returned as the fields.
 */
export function splitBudget(candidate: unknown): { fields: unknown; budget: unknown } {
  if (!isFragmentObject(candidate) || !Object.hasOwn(candidate, 'budget')) {
    return { fields: candidate, budget: undefined };
  }
  const { budget, ...fields } = candidate;
  return { fields, budget };
}
