import {
  type ContextFragment,
  type FragmentData,
  isFragment,
  isFragmentObject,
  joinPath,
} from '@ctxgraph/fragments-core';
import { describeKind } from '../describe-kind';
import { GROUP_TYPE } from '../fragment-type-registry';
import { serializedGroupShellSchema } from '../schemas';
import { issuesFromZod } from '../zod-issues';
import { callDefinition } from './call-definition';
import { checkSerialized } from './check-serialized';
import { defineEntry } from './define-entry';
import { fail } from './fail';
import { enter, type Walk } from './walk';

/**
 * The fragment for a serialized fragment or group at `path`: checked against its type's schema,
 * hydrated by the type's `toFragment`, its `budget` restored as the fragment's budget settings.
 */
export function hydrateFragment(flat: unknown, path: string, walk: Walk): ContextFragment {
  if (!isFragmentObject(flat)) {
    const received = isFragment(flat)
      ? `a "${flat.name}" fragment (it is already hydrated)`
      : describeKind(flat);
    throw fail(walk, [
      { path, message: `expected a serialized fragment object, received ${received}` },
    ]);
  }
  const type = flat.type;
  const typePath = joinPath(path, 'type');
  if (typeof type !== 'string') {
    const message =
      type === undefined
        ? 'missing (expected the fragment type, a string)'
        : `expected the fragment type as a string, received ${describeKind(type)}`;
    throw fail(walk, [{ path: typePath, message }]);
  }
  if (type === GROUP_TYPE) return hydrateGroup(flat, path, walk);
  const definition = walk.registry.forType(type);
  if (definition === undefined) {
    throw fail(walk, [
      {
        path: typePath,
        message: `unknown serialized fragment type "${type}" (supported: ${walk.registry.types.join(', ')}, and ${GROUP_TYPE} for named groups)`,
      },
    ]);
  }
  return enter(flat, path, walk, () => {
    const { serialized, budget } = checkSerialized(definition, flat, path, walk);
    const hydrated = callDefinition(walk, path, definition, 'toFragment', (context) =>
      definition.toFragment(serialized, context),
    );
    if (!isFragment(hydrated)) {
      throw fail(walk, [
        {
          path,
          message: `the "${type}" type's toFragment returned ${describeKind(hydrated)}, expected a fragment`,
        },
      ]);
    }
    return budget === undefined ? hydrated : { ...hydrated, budget };
  });
}

/**
 * The fragment for a serialized named group, `{ type: 'fragment', name, children }`: each child
 * is hydrated against its own type, so groups can hold custom types too.
 */
export function hydrateGroup(
  flat: Record<string, unknown>,
  path: string,
  walk: Walk,
): ContextFragment {
  return enter(flat, path, walk, () => {
    const result = serializedGroupShellSchema.safeParse(flat, { reportInput: true });
    if (!result.success) {
      throw fail(
        walk,
        issuesFromZod(result.error.issues, path),
        `invalid serialized "${GROUP_TYPE}" group`,
      );
    }
    const { name, children, budget } = result.data;
    const childrenPath = joinPath(path, 'children');
    const data = enter(flat.children as unknown[], childrenPath, walk, () =>
      children.map((child, index) =>
        typeof child === 'string'
          ? child
          : hydrateFragment(child, joinPath(childrenPath, index), walk),
      ),
    );
    // Always a list, even with one text child, so the group reads back as it was written.
    return budget === undefined ? { name, data } : { name, data, budget };
  });
}

/**
 * Decodes JSON at `path` into fragment data: plain objects whose `type` is registered (or is
 * {@link GROUP_TYPE}) are hydrated, other objects and arrays are walked, JSON scalars stay.
 */
export function decodeValue(value: unknown, path: string, walk: Walk): FragmentData {
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) {
        throw fail(walk, [{ path, message: `${value} is not a JSON value (only finite numbers)` }]);
      }
      return value;
    case 'object':
      break;
    default:
      throw fail(walk, [{ path, message: `a ${typeof value} is not a JSON value` }]);
  }
  if (value === null) return null;
  if (Array.isArray(value)) {
    return enter(value, path, walk, () => {
      const items: FragmentData[] = [];
      value.forEach((item, index) => {
        const decoded = decodeValue(item, joinPath(path, index), walk);
        if (decoded !== undefined) items.push(decoded);
      });
      return items;
    });
  }
  if (isFragmentObject(value)) {
    if (
      typeof value.type === 'string' &&
      (value.type === GROUP_TYPE || walk.registry.hasType(value.type))
    ) {
      return hydrateFragment(value, path, walk);
    }
    return enter(value, path, walk, () => {
      const result: { [key: string]: FragmentData } = {};
      for (const key of Object.keys(value)) {
        const decoded = decodeValue(value[key], joinPath(path, key), walk);
        if (decoded !== undefined) defineEntry(result, key, decoded);
      }
      return result;
    });
  }
  const received = isFragment(value)
    ? `a "${value.name}" fragment (it is already hydrated)`
    : describeKind(value);
  throw fail(walk, [{ path, message: `${received} is not a JSON value` }]);
}
