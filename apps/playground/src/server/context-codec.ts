import type { ContextFragment, JsonValue, ValidationIssue } from '@ctxgraph/fragments-core';
import { ValidationError } from '@ctxgraph/fragments-core';
import { fromFragment, SerializationError, toFragment } from '@ctxgraph/serialization';

/** The most fragments one chat's context may hold (a guard against pasted runaway JSON). */
export const MAX_CONTEXT_FRAGMENTS = 500;

// Named groups, `fragment(name, ...children)`, are serialized by @ctxgraph/serialization as
// `{ type: 'fragment', name, children }` (the shape this file wrote itself before), with its
// depth limit (MAX_SERIALIZED_DEPTH, the renderers' default), so contexts stored earlier still load.

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Re-throws a failure of one item with the item's place in the list in front of each path. */
function atPath(path: string, error: unknown): never {
  if (ValidationError.isInstance(error)) {
    const issues: ValidationIssue[] = error.issues.map((issue) => ({
      path: issue.path
        ? issue.path.startsWith('[')
          ? path + issue.path
          : `${path}.${issue.path}`
        : path,
      message: issue.message,
    }));
    const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    throw new SerializationError(`${list}.`, { issues, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  throw new ValidationError(`${path}: ${message}`, { issues: [{ path, message }], cause: error });
}

/**
 * Turns the playground's serialized context (a list of `fromFragment` objects, named groups
 * included) into fragments. Throws one `ValidationError` that names the item and field at fault.
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
      { issues: [{ path: 'fragments', message: 'expected an array' }] },
    );
  }
  if (value.length > MAX_CONTEXT_FRAGMENTS) {
    throw new ValidationError(
      `fragments: at most ${MAX_CONTEXT_FRAGMENTS} fragments, received ${value.length}.`,
      { issues: [{ path: 'fragments', message: 'too many fragments' }] },
    );
  }
  return value.map((item, index) => {
    try {
      return toFragment(item);
    } catch (error) {
      return atPath(`fragments[${index}]`, error);
    }
  });
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
  return fragments.map((item, index) => {
    try {
      return fromFragment(item) as unknown as JsonValue;
    } catch (error) {
      return atPath(`fragments[${index}]`, error);
    }
  });
}
