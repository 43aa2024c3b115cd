import {
  DEFAULT_MAX_DEPTH,
  type FragmentData,
  isFragmentObject,
  type JsonValue,
  joinPath,
  type ValidationIssue,
} from '@ctxgraph/fragments-core';
import type { FragmentTypeRegistry } from '../fragment-type-registry';
import { fail, type Operation } from './fail';

/**
 * The deepest the serialized form may nest: each object and list is one level, the serialized
 * fragment (or the value given to `encodeSerializedValue`) being level 1. A nested `policy` takes
 * two (its object and its `policies` list), so 32 policies can nest. It is the renderers' default
 * `maxDepth` (`DEFAULT_MAX_DEPTH`), which counts at least as many levels for the same fragments,
 * so whatever renders with the defaults can be serialized; and a serialized value this deep still
 * fits the stores' JSON depth limit (`MAX_JSON_DEPTH`, 128) inside a message or the context lane.
 * Deeper input is refused with a `SerializationError` instead of overflowing the stack.
 */
export const MAX_SERIALIZED_DEPTH: number = DEFAULT_MAX_DEPTH;

/**
 * The value conversions a type's `SerializationContext` hands out. Encoding and decoding call
 * each other through it (a type's `toFragment` may encode, its `fromFragment` may decode), so the
 * walk carries them and neither direction's module imports the other's for it.
 */
export interface NestedConversions {
  /** Encodes a nested value at `path` (what `encodeSerializedValue` does). */
  readonly encode: (value: FragmentData, path: string, walk: Walk) => JsonValue | undefined;
  /** Decodes a nested value at `path` (what `decodeSerializedValue` does). */
  readonly decode: (value: unknown, path: string, walk: Walk) => FragmentData;
}

/**
 * State of one top-level call: its name for messages, the registry it converts with, the
 * containers being visited, and how many levels of the serialized form they make.
 */
export interface Walk {
  /** The public method this walk runs, named in every error message. */
  readonly operation: Operation;
  /** The fragment types the call converts with. */
  readonly registry: FragmentTypeRegistry;
  /** The nested conversions a type's conversions may call. */
  readonly nested: NestedConversions;
  /** The containers on the path from the top to where the walk is. */
  readonly ancestors: Set<object>;
  /** How many levels of the serialized form those containers make. */
  depth: number;
}

/** A walk for one call of `operation`, at the top (no ancestors, depth 0). */
export function newWalk(
  operation: Operation,
  registry: FragmentTypeRegistry,
  nested: NestedConversions,
): Walk {
  return { operation, registry, nested, ancestors: new Set(), depth: 0 };
}

/**
 * Visits a container (a level of the serialized form unless `level` is false), refusing one
 * that contains itself or that nests deeper than {@link MAX_SERIALIZED_DEPTH}.
 */
export function enter<T>(
  container: object,
  path: string,
  walk: Walk,
  visit: () => T,
  level = true,
): T {
  if (walk.ancestors.has(container)) throw fail(walk, [{ path, message: cycleMessage }]);
  if (level && walk.depth >= MAX_SERIALIZED_DEPTH) throw fail(walk, [tooDeep(path)]);
  walk.ancestors.add(container);
  if (level) walk.depth += 1;
  try {
    return visit();
  } finally {
    walk.ancestors.delete(container);
    if (level) walk.depth -= 1;
  }
}

/**
 * Refuses JSON input that nests too deep or contains itself, before any schema sees it: zod
 * checks a recursive schema (`policy`) by recursion, so a deep enough input would overflow the
 * stack inside it. One walk, as deep as the limit at most.
 */
export function assertShallow(value: unknown, walk: Walk): void {
  const problem = shapeProblem(value);
  if (problem !== undefined) throw fail(walk, [problem]);
}

/**
 * The first place where JSON input nests deeper than {@link MAX_SERIALIZED_DEPTH} or contains
 * itself, or `undefined` when it does neither.
 */
export function shapeProblem(
  value: unknown,
  path = '',
  depth = 1,
  ancestors: Set<object> = new Set(),
): ValidationIssue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const isArray = Array.isArray(value);
  if (!isArray && !isFragmentObject(value)) return undefined;
  if (ancestors.has(value)) return { path, message: cycleMessage };
  if (depth > MAX_SERIALIZED_DEPTH) return tooDeep(path);
  ancestors.add(value);
  let problem: ValidationIssue | undefined;
  if (isArray) {
    for (let index = 0; index < value.length && problem === undefined; index += 1) {
      problem = shapeProblem(value[index], joinPath(path, index), depth + 1, ancestors);
    }
  } else {
    for (const key of Object.keys(value)) {
      problem = shapeProblem(value[key], joinPath(path, key), depth + 1, ancestors);
      if (problem !== undefined) break;
    }
  }
  ancestors.delete(value);
  return problem;
}

const cycleMessage = 'the value contains itself (a cycle cannot be stored as JSON)';

function tooDeep(path: string): ValidationIssue {
  return {
    path,
    message: `nested deeper than ${MAX_SERIALIZED_DEPTH} levels (each object and list is a level; a nested policy takes two)`,
  };
}
