import {
  type ContextFragment,
  type FragmentData,
  isFragment,
  isFragmentObject,
  type JsonValue,
  joinPath,
} from '@ctxgraph/fragments-core';
import { describeKind } from '../describe-kind';
import type { SerializedFragmentBase } from '../fragment-type-definition';
import { GROUP_TYPE } from '../fragment-type-registry';
import {
  type SerializedBudgetField,
  type SerializedFragment,
  type SerializedGroup,
  type SerializedGroupChild,
  serializedBudgetSchema,
} from '../schemas';
import { issuesFromZod } from '../zod-issues';
import { callDefinition } from './call-definition';
import { validateSerialized } from './check-serialized';
import { defineEntry } from './define-entry';
import { errorMessage, fail } from './fail';
import { hydrateGroup } from './hydrate-fragment';
import { enter, type Walk } from './walk';

/**
 * The serialized form of the fragment at `path`: what its codec encodes, the fields of the type
 * registered for its name, or a group for `fragment(name, ...children)` data; its budget settings
 * last.
 */
export function serializeFragment(
  fragment: unknown,
  path: string,
  walk: Walk,
): SerializedFragmentBase {
  if (!isFragment(fragment)) {
    throw fail(walk, [
      {
        path,
        message: `expected a fragment (an object with a string name and data), received ${describeKind(fragment)}`,
      },
    ]);
  }
  if (fragment.type === 'message') {
    throw fail(walk, [
      {
        path,
        message: `"${fragment.name}" is a message fragment, and message fragments cannot be converted to serialized fragments (conversation messages are persisted by the engine's save())`,
      },
    ]);
  }
  if (fragment.codec !== undefined) {
    // Its level is the object its codec returns, so the fragment itself is not counted.
    const encoded = enter(fragment, path, walk, () => fromCodec(fragment, path, walk), false);
    if (fragment.budget === undefined) return encoded;
    // The fragment's own settings win over any `budget` its codec encoded.
    return enter(encoded, path, walk, () => withBudget(encoded, fragment.budget, path, walk));
  }
  return enter(fragment, path, walk, () => {
    const definition = walk.registry.forName(fragment.name);
    if (definition === undefined && isGroupData(fragment.data)) {
      const group = fromGroup(fragment.name, fragment.data, path, walk);
      return withBudget(group, fragment.budget, path, walk);
    }
    if (definition === undefined) {
      throw fail(walk, [
        {
          path,
          message: `unknown fragment name "${fragment.name}": no serialized type handles it (supported: ${walk.registry.supportedNames()}; register a custom type with createSerializer({ types }))`,
        },
      ]);
    }
    const fields = callDefinition(walk, path, definition, 'fromFragment', (context) =>
      definition.fromFragment(fragment, context),
    );
    if (!isFragmentObject(fields)) {
      throw fail(walk, [
        {
          path,
          message: `the "${definition.type}" type's fromFragment returned ${describeKind(fields)}, expected an object of fields`,
        },
      ]);
    }
    if (Object.hasOwn(fields, 'budget')) {
      throw fail(walk, [
        {
          path: joinPath(path, 'budget'),
          message: `the "${definition.type}" type's fromFragment returned a "budget" field, but the serialized form keeps that name for the fragment's budget settings (rename the field)`,
        },
      ]);
    }
    const encoded = encodeFields(fields, path, walk);
    const serialized = validateSerialized(
      definition,
      { type: definition.type, ...encoded },
      path,
      walk,
    );
    return withBudget(serialized, fragment.budget, path, walk);
  });
}

/**
 * Encodes fragment data at `path` into JSON: fragments are serialized, arrays and plain objects
 * walked, `undefined` dropped, `-0` made `0`; a plain object whose `type` is registered (or is
 * {@link GROUP_TYPE}) is taken as already serialized and checked, so decoding it cannot fail.
 */
export function encodeValue(value: FragmentData, path: string, walk: Walk): JsonValue | undefined {
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) {
        throw fail(walk, [
          { path, message: `${value} cannot be stored as JSON (only finite numbers)` },
        ]);
      }
      return value === 0 ? 0 : value;
    case 'object':
      break;
    default:
      throw fail(walk, [{ path, message: `a ${typeof value} cannot be stored as JSON` }]);
  }
  if (value === null) return null;
  if (isFragment(value)) return serializeFragment(value, path, walk) as unknown as JsonValue;
  if (Array.isArray(value)) {
    return enter(value, path, walk, () => {
      const items: JsonValue[] = [];
      value.forEach((item, index) => {
        const encoded = encodeValue(item, joinPath(path, index), walk);
        if (encoded !== undefined) items.push(encoded);
      });
      return items;
    });
  }
  if (isFragmentObject(value)) {
    const definition =
      typeof value.type === 'string' ? walk.registry.forType(value.type) : undefined;
    return enter(value, path, walk, () => {
      const fields = encodeFields(value, path, walk);
      // Already in serialized form: check it now, so decoding it later cannot fail.
      if (value.type === GROUP_TYPE) {
        hydrateGroup(fields, path, { ...walk, ancestors: new Set() });
        return fields;
      }
      if (definition)
        return validateSerialized(definition, fields, path, walk) as unknown as JsonValue;
      return fields;
    });
  }
  throw fail(walk, [
    {
      path,
      message: `${describeKind(value)} cannot be stored as JSON (use strings, finite numbers, booleans, null, arrays, plain objects or fragments)`,
    },
  ]);
}

function encodeFields(
  object: Record<string, unknown>,
  path: string,
  walk: Walk,
): { [key: string]: JsonValue } {
  const result: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(object)) {
    const encoded = encodeValue(object[key] as FragmentData, joinPath(path, key), walk);
    if (encoded !== undefined) defineEntry(result, key, encoded);
  }
  return result;
}

/**
 * `serialized` with the fragment's budget settings checked and added as its last field (a level
 * of the serialized form of its own), or `serialized` itself when the fragment has none.
 */
function withBudget<T extends SerializedFragmentBase>(
  serialized: T,
  budget: unknown,
  path: string,
  walk: Walk,
): T {
  if (budget === undefined) return serialized;
  const budgetPath = joinPath(path, 'budget');
  const result = serializedBudgetSchema.safeParse(budget, { reportInput: true });
  if (!result.success) {
    throw fail(walk, issuesFromZod(result.error.issues, budgetPath), 'invalid budget settings');
  }
  const settings = result.data;
  // A codec's encoding may hold a `budget` of its own: the fragment's replaces it, last.
  const { budget: _replaced, ...fields } = serialized as T & SerializedBudgetField;
  return enter(settings, budgetPath, walk, () => ({ ...fields, budget: settings }) as unknown as T);
}

function fromCodec(fragment: ContextFragment, path: string, walk: Walk): SerializedFragmentBase {
  let encoded: unknown;
  try {
    encoded = fragment.codec?.encode();
  } catch (error) {
    throw fail(
      walk,
      [
        {
          path,
          message: `the codec of the "${fragment.name}" fragment threw: ${errorMessage(error)}`,
        },
      ],
      undefined,
      error,
    );
  }
  const type = isFragmentObject(encoded) ? encoded.type : undefined;
  if (typeof type !== 'string' || !walk.registry.hasType(type)) {
    const received = isFragmentObject(encoded)
      ? `an object with type ${JSON.stringify(type)}`
      : describeKind(encoded);
    throw fail(walk, [
      {
        path,
        message: `the codec of the "${fragment.name}" fragment must encode a serialized fragment of a supported type (${walk.registry.types.join(', ')}), but returned ${received}`,
      },
    ]);
  }
  return encodeValue(encoded as FragmentData, path, walk) as unknown as SerializedFragmentBase;
}

/**
 * A named group: the group object and its `children` list are a level each (as a nested policy
 * and its `policies`), so groups nest as deep as policies do.
 */
function fromGroup(
  name: string,
  data: ReadonlyArray<ContextFragment | string>,
  path: string,
  walk: Walk,
): SerializedGroup {
  if (name.trim() === '') {
    throw fail(walk, [{ path, message: 'a group needs a non-empty name' }]);
  }
  const childrenPath = joinPath(path, 'children');
  const children = enter(data, childrenPath, walk, () =>
    data.map(
      (child, index): SerializedGroupChild =>
        typeof child === 'string'
          ? child
          : (serializeFragment(child, joinPath(childrenPath, index), walk) as SerializedFragment),
    ),
  );
  return { type: GROUP_TYPE, name, children };
}

/** Data that `fragment(name, ...children)` makes for a group: a list of fragments and text. */
function isGroupData(data: unknown): data is Array<ContextFragment | string> {
  return (
    Array.isArray(data) && data.every((child) => typeof child === 'string' || isFragment(child))
  );
}
