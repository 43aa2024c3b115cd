import {
  builtinFragmentDescriptors,
  type FragmentTypeDescriptor,
  isFragmentObject,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describeKind } from './describe-kind';
import type { FragmentTypeDefinition } from './fragment-type-definition';
import { serializedFragmentSchemas } from './schemas';

// Each built-in type is derived from its descriptor in fragments-core: the flat form holds the
// descriptor's fields, and hydrating goes through the descriptor's builder, so hydrated fragments
// are exactly what application code would have built.

/** The flat fields of a fragment whose data is an object of the descriptor's fields. */
function objectFields(data: unknown): Record<string, unknown> {
  if (!isFragmentObject(data)) {
    throw new ValidationError(`data: expected an object, received ${describeKind(data)}`, {
      issues: [{ path: 'data', message: `expected an object, received ${describeKind(data)}` }],
    });
  }
  // `type` names the format in the flat form and `budget` holds the fragment's budget settings,
  // so a data field of either name cannot be kept.
  for (const reserved of ['type', 'budget']) {
    if (Object.hasOwn(data, reserved)) {
      throw new ValidationError(`data.${reserved}: the field name "${reserved}" is reserved`, {
        issues: [
          {
            path: `data.${reserved}`,
            message: `the field name "${reserved}" is reserved by the serialized form`,
          },
        ],
      });
    }
  }
  return data;
}

/** The serializer definition of a built-in type, derived from its descriptor. */
function fromDescriptor(descriptor: FragmentTypeDescriptor): FragmentTypeDefinition {
  const { dataField } = descriptor;
  const nested = descriptor.fields.filter((field) => field.kind === 'fragments');
  return {
    type: descriptor.name,
    schema: serializedFragmentSchemas[descriptor.name as keyof typeof serializedFragmentSchemas],
    fromFragment: (fragment) =>
      dataField === undefined ? objectFields(fragment.data) : { [dataField]: fragment.data },
    toFragment: (serialized, context) => {
      const { type: _type, ...fields } = serialized as unknown as Record<string, unknown>;
      // Nested serialized fragments (a principle's policies) become fragments again, through the
      // same registry; strings stay text.
      for (const field of nested) {
        if (fields[field.name] !== undefined) {
          fields[field.name] = context.decode(fields[field.name], field.name);
        }
      }
      return descriptor.build(fields);
    },
  };
}

/** The 19 fragment types of fragments-core's domain builders, in the order the spec lists them. */
export const builtinFragmentTypes: readonly FragmentTypeDefinition[] = Object.freeze(
  builtinFragmentDescriptors.map(fromDescriptor),
);
