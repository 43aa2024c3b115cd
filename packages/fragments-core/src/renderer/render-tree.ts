import { RenderError } from '../errors/errors';
import type { ContextFragment } from '../fragment/context-fragment';
import { isFragment, isFragmentObject } from '../fragment/guards';

/** A leaf: text, a number or a boolean. */
export interface RenderScalar {
  readonly kind: 'scalar';
  /**
   * The fragment name or object key it sits under, or `null` for an item of a list that is not a
   * fragment.
   */
  readonly key: string | null;
  /** The value (never null or undefined: those are dropped by the walk). */
  readonly value: string | number | boolean;
}

/** A named fragment whose data is a list, an object or another fragment. */
export interface RenderGroup {
  /**
   * Where the group came from: `'fragment'` (a fragment whose data holds children), `'object'`
   * (a plain object) or `'list'` (an array).
   */
  readonly kind: 'fragment' | 'object' | 'list';
  /** The fragment name or object key, or `null` for an unnamed list item. */
  readonly key: string | null;
  /** The children, in input order, `null` / `undefined` already dropped. */
  readonly children: readonly RenderNode[];
}

/** A node of the normalized tree that {@link walkFragments} builds. */
export type RenderNode = RenderScalar | RenderGroup;

/** Options of {@link walkFragments}. */
export interface WalkOptions {
  /**
   * How deep the tree may nest before rendering is refused with a `RenderError` that names the
   * limit. Each fragment, object and list is one level.
   * @default 64
   */
  maxDepth?: number;
}

/** The default of {@link WalkOptions.maxDepth}. */
export const DEFAULT_MAX_DEPTH = 64;

/**
 * Normalizes fragments into a tree of {@link RenderNode}s, the shape every renderer draws:
 *
 * - a fragment with a string, number or boolean becomes a scalar named after the fragment;
 * - a fragment holding a list, an object or a fragment becomes a `'fragment'` group; a nested
 *   fragment as data becomes the group's one child;
 * - lists become `'list'` groups, plain objects `'object'` groups (keys in insertion order);
 * - `null` and `undefined` vanish wherever they are (a fragment whose data is null is dropped);
 * - `bigint` becomes its decimal text, `Date` its ISO text; functions, symbols, class instances
 *   other than Date, cycles and trees deeper than `maxDepth` are refused with a `RenderError`
 *   that says where.
 */
export function walkFragments(
  fragments: readonly ContextFragment[],
  options: WalkOptions = {},
): RenderNode[] {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new RenderError(`maxDepth must be a positive integer, received ${String(maxDepth)}.`);
  }
  const walker = new Walker(maxDepth);
  const nodes: RenderNode[] = [];
  fragments.forEach((fragment, index) => {
    if (!isFragment(fragment)) {
      throw new RenderError(
        `render(fragments): fragments[${index}] is not a fragment (expected an object with a string name and data).`,
      );
    }
    const node = walker.fragment(fragment, `${fragment.name}`, 1);
    if (node) nodes.push(node);
  });
  return nodes;
}

class Walker {
  readonly #maxDepth: number;
  readonly #ancestors = new Set<object>();

  constructor(maxDepth: number) {
    this.#maxDepth = maxDepth;
  }

  fragment(fragment: ContextFragment, path: string, depth: number): RenderNode | null {
    this.#checkDepth(path, depth);
    const data = fragment.data;
    if (data === null || data === undefined) return null;
    const scalar = toScalar(data, path);
    if (scalar !== undefined) return { kind: 'scalar', key: fragment.name, value: scalar };
    return this.#enter(fragment, path, () => {
      let children: RenderNode[];
      if (isFragment(data)) {
        const child = this.fragment(data, `${path}.${data.name}`, depth + 1);
        children = child ? [child] : [];
      } else if (Array.isArray(data)) {
        children = this.#items(data, path, depth + 1);
      } else if (isFragmentObject(data)) {
        children = this.#entries(data, path, depth + 1);
      } else {
        throw notFragmentData(data, path);
      }
      return { kind: 'fragment', key: fragment.name, children };
    });
  }

  value(value: unknown, key: string | null, path: string, depth: number): RenderNode | null {
    if (value === null || value === undefined) return null;
    const scalar = toScalar(value, path);
    if (scalar !== undefined) return { kind: 'scalar', key, value: scalar };
    if (isFragment(value)) {
      // A fragment in a list keeps its own name; under an object key it is grouped under the
      // key, so the key is not lost.
      if (key === null) return this.fragment(value, path, depth);
      this.#checkDepth(path, depth);
      const child = this.fragment(value, `${path}.${value.name}`, depth + 1);
      return child ? { kind: 'object', key, children: [child] } : null;
    }
    this.#checkDepth(path, depth);
    if (Array.isArray(value)) {
      return this.#enter(value, path, () => ({
        kind: 'list',
        key,
        children: this.#items(value, path, depth + 1),
      }));
    }
    if (isFragmentObject(value)) {
      return this.#enter(value, path, () => ({
        kind: 'object',
        key,
        children: this.#entries(value, path, depth + 1),
      }));
    }
    throw notFragmentData(value, path);
  }

  #items(items: readonly unknown[], path: string, depth: number): RenderNode[] {
    const nodes: RenderNode[] = [];
    items.forEach((item, index) => {
      const node = this.value(item, null, `${path}[${index}]`, depth);
      if (node) nodes.push(node);
    });
    return nodes;
  }

  #entries(object: Record<string, unknown>, path: string, depth: number): RenderNode[] {
    const nodes: RenderNode[] = [];
    for (const key of Object.keys(object)) {
      const node = this.value(object[key], key, `${path}.${key}`, depth);
      if (node) nodes.push(node);
    }
    return nodes;
  }

  #enter<T>(container: object, path: string, build: () => T): T {
    if (this.#ancestors.has(container)) {
      throw new RenderError(
        `Cannot render ${path}: the fragment tree contains a cycle (a value contains itself).`,
      );
    }
    this.#ancestors.add(container);
    try {
      return build();
    } finally {
      this.#ancestors.delete(container);
    }
  }

  #checkDepth(path: string, depth: number): void {
    if (depth > this.#maxDepth) {
      throw new RenderError(
        `Cannot render ${path}: the fragment tree nests deeper than the limit of ${this.#maxDepth} levels (maxDepth).`,
      );
    }
  }
}

function toScalar(value: unknown, path: string): string | number | boolean | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      // JSON and every text format we know show non-finite numbers as text, not as a number.
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'function':
    case 'symbol':
      throw new RenderError(
        `Cannot render the value at ${path}: ${typeof value} is not fragment data.`,
      );
    default:
      if (value instanceof Date) {
        if (Number.isNaN(value.getTime()))
          throw new RenderError(`Cannot render the value at ${path}: invalid Date.`);
        return value.toISOString();
      }
      return undefined;
  }
}

function notFragmentData(value: unknown, path: string): RenderError {
  return new RenderError(
    `Cannot render the value at ${path}: ${describe(value)} is not fragment data (use strings, numbers, booleans, lists, plain objects or fragments).`,
  );
}

function describe(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object';
  }
  return typeof value;
}
