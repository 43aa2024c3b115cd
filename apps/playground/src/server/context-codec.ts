import {
  type ContextFragment,
  fragment,
  isFragment,
  type JsonValue,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { fromFragment, toFragment } from '@ctxgraph/serialization';

/** The most fragments one chat's context may hold (a guard against pasted runaway JSON). */
export const MAX_CONTEXT_FRAGMENTS = 500;

/**
 * A named group, `fragment(name, ...children)`, in the playground's JSON: `{ type: 'fragment',
 * name, children }`, each child a string or another serialized fragment.
 */
interface SerializedGroup {
  type: 'fragment';
  name: string;
  children: JsonValue[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Re-throws a failure of one item with the item's place in the list in front of its message. */
function atPath(path: string, error: unknown): never {
  if (ValidationError.isInstance(error)) {
    const issues = error.issues.map((issue) => ({
      path: issue.path ? `${path}.${issue.path}` : path,
      message: issue.message,
    }));
    throw new ValidationError(`${path}: ${error.message}`, { issues, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  throw new ValidationError(`${path}: ${message}`, { issues: [{ path, message }], cause: error });
}

function decodeGroup(value: Record<string, unknown>, path: string, depth: number): ContextFragment {
  const { name, children } = value;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ValidationError(
      `${path}.name: a group needs a non-empty name, received ${describe(name)}.`,
      {
        issues: [{ path: `${path}.name`, message: 'expected a non-empty string' }],
      },
    );
  }
  if (!Array.isArray(children)) {
    throw new ValidationError(
      `${path}.children: expected an array of strings or fragments, received ${describe(children)}.`,
      {
        issues: [{ path: `${path}.children`, message: 'expected an array' }],
      },
    );
  }
  const decoded = children.map((child, index) => {
    const childPath = `${path}.children[${index}]`;
    if (typeof child === 'string') return child;
    return decodeItem(child, childPath, depth + 1);
  });
  // fragment() with a single non-fragment child makes it the data; keep a lone text child a list
  // item instead, so the group renders the same after a round trip through the page.
  return decoded.length === 1 && typeof decoded[0] === 'string'
    ? { name, data: decoded }
    : fragment(name, ...decoded);
}

function decodeItem(value: unknown, path: string, depth: number): ContextFragment {
  if (depth > 32) {
    throw new ValidationError(`${path}: fragments are nested more than 32 levels deep.`, {
      issues: [{ path, message: 'nested too deep' }],
    });
  }
  if (!isPlainObject(value)) {
    throw new ValidationError(
      `${path}: expected a serialized fragment object ({ "type": ... }), received ${describe(value)}.`,
      {
        issues: [{ path, message: `expected an object, received ${describe(value)}` }],
      },
    );
  }
  if (value.type === 'fragment') return decodeGroup(value, path, depth);
  try {
    return toFragment(value as Parameters<typeof toFragment>[0]);
  } catch (error) {
    return atPath(path, error);
  }
}

/**
 * Turns the playground's serialized context (a list of `fromFragment` objects, plus named groups)
 * into fragments. Throws one `ValidationError` that names the item and field at fault.
 *
 * @example
 * ```ts
 * decodeContext([{ type: 'role', text: 'You are helpful.' }]);
 * ```
 */
export function decodeContext(value: unknown): ContextFragment[] {
  if (!Array.isArray(value)) {
    throw new ValidationError(
      `fragments: expected an array of serialized fragments, received ${describe(value)}.`,
      {
        issues: [{ path: 'fragments', message: 'expected an array' }],
      },
    );
  }
  if (value.length > MAX_CONTEXT_FRAGMENTS) {
    throw new ValidationError(
      `fragments: at most ${MAX_CONTEXT_FRAGMENTS} fragments, received ${value.length}.`,
      {
        issues: [{ path: 'fragments', message: 'too many fragments' }],
      },
    );
  }
  return value.map((item, index) => decodeItem(item, `fragments[${index}]`, 0));
}

function encodeChild(child: unknown, path: string): JsonValue {
  if (typeof child === 'string') return child;
  if (isFragment(child)) return encodeFragment(child, path);
  throw new ValidationError(
    `${path}: a group child must be text or a fragment, received ${describe(child)}.`,
    {
      issues: [{ path, message: 'expected text or a fragment' }],
    },
  );
}

function encodeFragment(value: ContextFragment, path: string): JsonValue {
  try {
    return fromFragment(value) as unknown as JsonValue;
  } catch (error) {
    // Not a type serialization knows: a named group made by fragment(name, ...children).
    const data = value.data;
    const children = Array.isArray(data) ? data : [data];
    if (children.every((child) => typeof child === 'string' || isFragment(child))) {
      const group: SerializedGroup = {
        type: 'fragment',
        name: value.name,
        children: children.map((child, index) => encodeChild(child, `${path}.children[${index}]`)),
      };
      return group as unknown as JsonValue;
    }
    return atPath(path, error);
  }
}

/**
 * The serialized form of fragments (what {@link decodeContext} reads back).
 *
 * @example
 * ```ts
 * encodeContext([role('You are helpful.')]); // [{ type: 'role', text: 'You are helpful.' }]
 * ```
 */
export function encodeContext(fragments: readonly ContextFragment[]): JsonValue[] {
  return fragments.map((item, index) => encodeFragment(item, `fragments[${index}]`));
}
