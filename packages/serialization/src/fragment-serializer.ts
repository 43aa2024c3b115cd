import {
  type ContextFragment,
  DEFAULT_MAX_DEPTH,
  type FragmentBudget,
  type FragmentData,
  isFragment,
  isFragmentObject,
  type JsonValue,
  joinPath,
  prefixPath,
  ValidationError,
  type ValidationIssue,
} from '@ctxgraph/fragments-core';
import type { z } from 'zod';
import { builtinFragmentTypes } from './builtin-fragment-types';
import { describeKind } from './describe-kind';
import type {
  FragmentTypeDefinition,
  SerializationContext,
  SerializedFragmentBase,
} from './fragment-type-definition';
import {
  type SerializedBudgetField,
  type SerializedFragment,
  type SerializedGroup,
  type SerializedGroupChild,
  serializedBudgetSchema,
  serializedGroupShellSchema,
} from './schemas';
import { SerializationError } from './serialization-error';
import { issuesFromZod } from './zod-issues';

/** Options of {@link createSerializer}. */
export interface SerializerOptions<
  Types extends readonly FragmentTypeDefinition[] = readonly FragmentTypeDefinition[],
> {
  /**
   * Custom fragment types to support, next to (or instead of) the built-in ones. A `type` or
   * `fragmentName` may appear only once across all of them.
   * @default []
   */
  types?: Types;
  /**
   * Whether the 19 built-in types (`term`, `hint`, … `correction`) are included.
   * @default true
   */
  builtins?: boolean;
}

/** The serialized form a definition produces. */
export type SerializedOf<Definition> =
  Definition extends FragmentTypeDefinition<infer Serialized> ? Serialized : never;

/**
 * The `type` of a serialized named group (`fragment(name, ...children)`), reserved: no registered
 * type may use it.
 */
export const GROUP_TYPE = 'fragment';

type Operation = 'fromFragment' | 'toFragment' | 'encodeSerializedValue' | 'decodeSerializedValue';

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
 * State of one top-level call: its name for messages, the containers being visited, and how many
 * levels of the serialized form they make.
 */
interface Walk {
  readonly operation: Operation;
  readonly ancestors: Set<object>;
  depth: number;
}

/**
 * Converts fragments to flat JSON and back for a fixed set of fragment types (its registry).
 * It is immutable: `extend()` returns a new serializer with more types. Its methods are bound, so
 * `const { fromFragment, toFragment } = serializer` works.
 *
 * The flat form of a fragment is `{ type, ...fields }`, plus `budget` when the fragment has
 * budget settings (`withBudget()`); nested fragments become nested flat objects. Identity-only
 * fields (`id`, `metadata`, `persist`) are not part of the form.
 */
export class FragmentSerializer<Serialized extends SerializedFragmentBase = SerializedFragment> {
  /** The `type` of every supported fragment type, in registration order. */
  readonly types: readonly string[];
  readonly #definitions: readonly FragmentTypeDefinition[];
  readonly #byType = new Map<string, FragmentTypeDefinition>();
  readonly #byName = new Map<string, FragmentTypeDefinition>();

  /** Prefer {@link createSerializer}; this checks the definitions the same way. */
  constructor(definitions: readonly FragmentTypeDefinition[]) {
    const issues: ValidationIssue[] = [];
    for (const [index, definition] of definitions.entries()) {
      const path = `types[${index}]`;
      const problem = checkDefinition(definition);
      if (problem) {
        issues.push({ path, message: problem });
        continue;
      }
      const fragmentName = definition.fragmentName ?? definition.type;
      if (definition.type === GROUP_TYPE) {
        issues.push({
          path: `${path}.type`,
          message: `type "${GROUP_TYPE}" is reserved for named groups made by fragment(name, ...children)`,
        });
      } else if (this.#byType.has(definition.type)) {
        issues.push({
          path: `${path}.type`,
          message: `type "${definition.type}" is already registered`,
        });
      } else if (this.#byName.has(fragmentName)) {
        issues.push({
          path: `${path}.fragmentName`,
          message: `fragments named "${fragmentName}" are already handled by type "${this.#byName.get(fragmentName)?.type}"`,
        });
      } else {
        this.#byType.set(definition.type, definition);
        this.#byName.set(fragmentName, definition);
      }
    }
    if (issues.length > 0) {
      throw new SerializationError(`createSerializer: ${formatIssues(issues)}.`, { issues });
    }
    this.#definitions = Object.freeze([...definitions]);
    this.types = Object.freeze([...this.#byType.keys()]);
  }

  /**
   * The flat JSON form of a non-message fragment. A fragment with a codec is stored as what its
   * `codec.encode()` returns, which must be a supported serialized fragment; any other fragment
   * is converted by the type registered for its `name`. A fragment whose name no type handles and
   * whose data is a list of fragments and text (what `fragment(name, ...children)` makes) becomes
   * a group, `{ type: 'fragment', name, children }`. The fragment's `budget` settings, when it has
   * any, become the last field, `budget: { priority?, required? }`, for every type (the type's own
   * schema and conversions never see it). The result always passes the type's schema (its
   * `budget` aside), so `toFragment` accepts it.
   *
   * @throws {SerializationError} for a message fragment, an unregistered name, data that does not
   * fit the type's format, budget settings other than a finite `priority` and a boolean
   * `required`, or values JSON cannot hold; `issues` say where.
   */
  readonly fromFragment: (fragment: ContextFragment) => Serialized | SerializedGroup = (fragment) =>
    this.#fromFragment(fragment, '', newWalk('fromFragment')) as Serialized | SerializedGroup;

  /**
   * Hydrates flat JSON back into a fragment by calling the type's builder, after checking it
   * against the type's schema. A `budget` field becomes the fragment's budget settings, as
   * `withBudget()` sets them; JSON without one (anything stored before budgets existed) hydrates
   * a fragment without.
   *
   * @throws {SerializationError} for a non-object, a missing or unknown `type`, JSON that breaks
   * the schema (every problem listed with its path, e.g. `policies[1].rule` or
   * `budget.priority`), or a builder that refuses the fields.
   */
  readonly toFragment: (flat: unknown) => ContextFragment = (flat) => {
    const walk = newWalk('toFragment');
    assertShallow(flat, walk);
    return this.#toFragment(flat, '', walk);
  };

  /**
   * Encodes nested fragment data into JSON: fragments become their flat form (recursively),
   * arrays and plain objects are walked, strings / finite numbers / booleans / `null` stay, and
   * `undefined` is dropped (from objects and arrays alike, as renderers drop it). A plain object
   * whose `type` is a registered type is taken as already serialized and checked against its
   * schema. `-0` becomes `0`.
   *
   * @throws {SerializationError} for message fragments, `NaN` / `Infinity`, bigints, functions,
   * symbols, class instances (`Date`, `Map`, …) and cycles, naming the path.
   */
  readonly encodeSerializedValue: (value: FragmentData) => JsonValue | undefined = (value) =>
    this.#encode(value, '', newWalk('encodeSerializedValue'));

  /**
   * The inverse of {@link encodeSerializedValue}: plain objects whose `type` is a registered type
   * become fragments (through {@link toFragment}); other objects and arrays are walked; JSON
   * scalars stay. Objects whose `type` is not registered stay plain objects.
   *
   * @throws {SerializationError} for values JSON cannot hold and for serialized fragments that do
   * not match their schema.
   */
  readonly decodeSerializedValue: (value: unknown) => FragmentData = (value) => {
    const walk = newWalk('decodeSerializedValue');
    assertShallow(value, walk);
    return this.#decode(value, '', walk);
  };

  /**
   * True when `value` is a serialized fragment this serializer can hydrate (its `type` is
   * registered and it passes that type's schema).
   */
  readonly isSerializedFragment: (value: unknown) => value is Serialized = (
    value,
  ): value is Serialized => {
    if (!isFragmentObject(value) || typeof value.type !== 'string') return false;
    const schema = this.#byType.get(value.type)?.schema;
    if (schema === undefined || shapeProblem(value) !== undefined) return false;
    const { fields, budget } = splitBudget(value);
    return (
      schema.safeParse(fields).success &&
      (budget === undefined || serializedBudgetSchema.safeParse(budget).success)
    );
  };

  /** The schema of a registered type's flat form, or `undefined` when it is not registered. */
  schemaFor(type: string): z.ZodType | undefined {
    return this.#byType.get(type)?.schema;
  }

  /**
   * A new serializer with these types added to this one's.
   *
   * @example
   * ```ts
   * const serializer = defaultSerializer.extend(metricType);
   * ```
   */
  extend<const Types extends readonly FragmentTypeDefinition[]>(
    ...types: Types
  ): FragmentSerializer<Serialized | SerializedOf<Types[number]>> {
    return new FragmentSerializer([...this.#definitions, ...types]);
  }

  #fromFragment(fragment: unknown, path: string, walk: Walk): SerializedFragmentBase {
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
      const encoded = this.#enter(
        fragment,
        path,
        walk,
        () => this.#fromCodec(fragment, path, walk),
        false,
      );
      if (fragment.budget === undefined) return encoded;
      // The fragment's own settings win over any `budget` its codec encoded.
      return this.#enter(encoded, path, walk, () =>
        this.#withBudget(encoded, fragment.budget, path, walk),
      );
    }
    return this.#enter(fragment, path, walk, () => {
      const definition = this.#byName.get(fragment.name);
      if (definition === undefined && isGroupData(fragment.data)) {
        const group = this.#fromGroup(fragment.name, fragment.data, path, walk);
        return this.#withBudget(group, fragment.budget, path, walk);
      }
      if (definition === undefined) {
        throw fail(walk, [
          {
            path,
            message: `unknown fragment name "${fragment.name}": no serialized type handles it (supported: ${this.#supportedNames()}; register a custom type with createSerializer({ types }))`,
          },
        ]);
      }
      const fields = this.#call(walk, path, definition, 'fromFragment', () =>
        definition.fromFragment(fragment, this.#context(path, walk)),
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
      const encoded = this.#encodeFields(fields, path, walk);
      const serialized = this.#validate(
        definition,
        { type: definition.type, ...encoded },
        path,
        walk,
      );
      return this.#withBudget(serialized, fragment.budget, path, walk);
    });
  }

  /**
   * `serialized` with the fragment's budget settings checked and added as its last field (a level
   * of the serialized form of its own), or `serialized` itself when the fragment has none.
   */
  #withBudget<T extends SerializedFragmentBase>(
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
    return this.#enter(
      settings,
      budgetPath,
      walk,
      () => ({ ...fields, budget: settings }) as unknown as T,
    );
  }

  #fromCodec(fragment: ContextFragment, path: string, walk: Walk): SerializedFragmentBase {
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
    if (typeof type !== 'string' || !this.#byType.has(type)) {
      const received = isFragmentObject(encoded)
        ? `an object with type ${JSON.stringify(type)}`
        : describeKind(encoded);
      throw fail(walk, [
        {
          path,
          message: `the codec of the "${fragment.name}" fragment must encode a serialized fragment of a supported type (${this.types.join(', ')}), but returned ${received}`,
        },
      ]);
    }
    return this.#encode(encoded as FragmentData, path, walk) as unknown as SerializedFragmentBase;
  }

  #toFragment(flat: unknown, path: string, walk: Walk): ContextFragment {
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
    if (type === GROUP_TYPE) return this.#toGroup(flat, path, walk);
    const definition = this.#byType.get(type);
    if (definition === undefined) {
      throw fail(walk, [
        {
          path: typePath,
          message: `unknown serialized fragment type "${type}" (supported: ${this.types.join(', ')}, and ${GROUP_TYPE} for named groups)`,
        },
      ]);
    }
    return this.#enter(flat, path, walk, () => {
      const { serialized, budget } = this.#check(definition, flat, path, walk);
      const hydrated = this.#call(walk, path, definition, 'toFragment', () =>
        definition.toFragment(serialized, this.#context(path, walk)),
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
   * A named group: the group object and its `children` list are a level each (as a nested policy
   * and its `policies`), so groups nest as deep as policies do.
   */
  #fromGroup(
    name: string,
    data: ReadonlyArray<ContextFragment | string>,
    path: string,
    walk: Walk,
  ): SerializedGroup {
    if (name.trim() === '') {
      throw fail(walk, [{ path, message: 'a group needs a non-empty name' }]);
    }
    const childrenPath = joinPath(path, 'children');
    const children = this.#enter(data, childrenPath, walk, () =>
      data.map(
        (child, index): SerializedGroupChild =>
          typeof child === 'string'
            ? child
            : (this.#fromFragment(
                child,
                joinPath(childrenPath, index),
                walk,
              ) as SerializedFragment),
      ),
    );
    return { type: GROUP_TYPE, name, children };
  }

  #toGroup(flat: Record<string, unknown>, path: string, walk: Walk): ContextFragment {
    return this.#enter(flat, path, walk, () => {
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
      const data = this.#enter(flat.children as unknown[], childrenPath, walk, () =>
        children.map((child, index) =>
          typeof child === 'string'
            ? child
            : this.#toFragment(child, joinPath(childrenPath, index), walk),
        ),
      );
      // Always a list, even with one text child, so the group reads back as it was written.
      return budget === undefined ? { name, data } : { name, data, budget };
    });
  }

  #encode(value: FragmentData, path: string, walk: Walk): JsonValue | undefined {
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
    if (isFragment(value)) return this.#fromFragment(value, path, walk) as unknown as JsonValue;
    if (Array.isArray(value)) {
      return this.#enter(value, path, walk, () => {
        const items: JsonValue[] = [];
        value.forEach((item, index) => {
          const encoded = this.#encode(item, joinPath(path, index), walk);
          if (encoded !== undefined) items.push(encoded);
        });
        return items;
      });
    }
    if (isFragmentObject(value)) {
      const definition = typeof value.type === 'string' ? this.#byType.get(value.type) : undefined;
      return this.#enter(value, path, walk, () => {
        const fields = this.#encodeFields(value, path, walk);
        // Already in serialized form: check it now, so decoding it later cannot fail.
        if (value.type === GROUP_TYPE) {
          this.#toGroup(fields, path, { ...walk, ancestors: new Set() });
          return fields;
        }
        if (definition)
          return this.#validate(definition, fields, path, walk) as unknown as JsonValue;
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

  #encodeFields(
    object: Record<string, unknown>,
    path: string,
    walk: Walk,
  ): { [key: string]: JsonValue } {
    const result: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(object)) {
      const encoded = this.#encode(object[key] as FragmentData, joinPath(path, key), walk);
      if (encoded !== undefined) defineEntry(result, key, encoded);
    }
    return result;
  }

  #decode(value: unknown, path: string, walk: Walk): FragmentData {
    switch (typeof value) {
      case 'undefined':
        return undefined;
      case 'string':
      case 'boolean':
        return value;
      case 'number':
        if (!Number.isFinite(value)) {
          throw fail(walk, [
            { path, message: `${value} is not a JSON value (only finite numbers)` },
          ]);
        }
        return value;
      case 'object':
        break;
      default:
        throw fail(walk, [{ path, message: `a ${typeof value} is not a JSON value` }]);
    }
    if (value === null) return null;
    if (Array.isArray(value)) {
      return this.#enter(value, path, walk, () => {
        const items: FragmentData[] = [];
        value.forEach((item, index) => {
          const decoded = this.#decode(item, joinPath(path, index), walk);
          if (decoded !== undefined) items.push(decoded);
        });
        return items;
      });
    }
    if (isFragmentObject(value)) {
      if (
        typeof value.type === 'string' &&
        (value.type === GROUP_TYPE || this.#byType.has(value.type))
      ) {
        return this.#toFragment(value, path, walk);
      }
      return this.#enter(value, path, walk, () => {
        const result: { [key: string]: FragmentData } = {};
        for (const key of Object.keys(value)) {
          const decoded = this.#decode(value[key], joinPath(path, key), walk);
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

  /** `candidate` checked, its `budget` (if any) included as the last field. */
  #validate(
    definition: FragmentTypeDefinition,
    candidate: unknown,
    path: string,
    walk: Walk,
  ): SerializedFragmentBase & SerializedBudgetField {
    const { serialized, budget } = this.#check(definition, candidate, path, walk);
    return budget === undefined ? serialized : { ...serialized, budget };
  }

  /**
   * Checks a serialized fragment: its fields against the type's schema, its `budget` apart
   * against the budget schema (so custom schemas need not know it), every problem at once.
   */
  #check(
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

  /** Runs a definition's conversion, giving its validation errors this fragment's path. */
  #call<T>(
    walk: Walk,
    path: string,
    definition: FragmentTypeDefinition,
    conversion: 'fromFragment' | 'toFragment',
    convert: () => T,
  ): T {
    try {
      return convert();
    } catch (error) {
      // Errors from nested conversions already carry full paths.
      if (SerializationError.isInstance(error)) throw error;
      if (ValidationError.isInstance(error)) {
        const issues = error.issues.map((issue) => ({
          path: prefixPath(path, issue.path === 'input' ? '' : issue.path),
          message: issue.message,
        }));
        throw fail(walk, issues, `the "${definition.type}" fragment was refused`, error);
      }
      throw fail(
        walk,
        [
          {
            path,
            message: `the "${definition.type}" type's ${conversion} threw: ${errorMessage(error)}`,
          },
        ],
        undefined,
        error,
      );
    }
  }

  #context(path: string, walk: Walk): SerializationContext {
    return {
      path,
      encode: (value, at = '') => this.#encode(value, prefixPath(path, at), walk),
      decode: (value, at = '') => this.#decode(value, prefixPath(path, at), walk),
    };
  }

  /**
   * Visits a container (a level of the serialized form unless `level` is false), refusing one
   * that contains itself or that nests deeper than {@link MAX_SERIALIZED_DEPTH}.
   */
  #enter<T>(container: object, path: string, walk: Walk, visit: () => T, level = true): T {
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

  #supportedNames(): string {
    return [...this.#byName.keys()].join(', ');
  }
}

/**
 * A serializer for the built-in fragment types plus any custom ones: an explicit registry, so
 * two parts of an app can support different types without touching shared state.
 *
 * @example
 * ```ts
 * const serializer = createSerializer({ types: [metricType] });
 * const stored = serializer.fromFragment(metric('arr', 'SELECT …'));
 * const hydrated = serializer.toFragment(stored);
 * ```
 */
export function createSerializer<
  const Types extends readonly FragmentTypeDefinition[] = readonly [],
>(
  options: SerializerOptions<Types> = {},
): FragmentSerializer<SerializedFragment | SerializedOf<Types[number]>> {
  const builtins = options.builtins ?? true;
  return new FragmentSerializer([
    ...(builtins ? builtinFragmentTypes : []),
    ...(options.types ?? []),
  ]);
}

/** Data that `fragment(name, ...children)` makes for a group: a list of fragments and text. */
function isGroupData(data: unknown): data is Array<ContextFragment | string> {
  return (
    Array.isArray(data) && data.every((child) => typeof child === 'string' || isFragment(child))
  );
}

/**
 * A serialized fragment's fields apart from its `budget`, and that budget (`undefined` when the
 * field is absent or `undefined`). Anything that is not an object is returned as the fields.
 */
function splitBudget(candidate: unknown): { fields: unknown; budget: unknown } {
  if (!isFragmentObject(candidate) || !Object.hasOwn(candidate, 'budget')) {
    return { fields: candidate, budget: undefined };
  }
  const { budget, ...fields } = candidate;
  return { fields, budget };
}

function newWalk(operation: Operation): Walk {
  return { operation, ancestors: new Set(), depth: 0 };
}

const cycleMessage = 'the value contains itself (a cycle cannot be stored as JSON)';

function tooDeep(path: string): ValidationIssue {
  return {
    path,
    message: `nested deeper than ${MAX_SERIALIZED_DEPTH} levels (each object and list is a level; a nested policy takes two)`,
  };
}

/**
 * Refuses JSON input that nests too deep or contains itself, before any schema sees it: zod
 * checks a recursive schema (`policy`) by recursion, so a deep enough input would overflow the
 * stack inside it. One walk, as deep as the limit at most.
 */
function assertShallow(value: unknown, walk: Walk): void {
  const problem = shapeProblem(value);
  if (problem !== undefined) throw fail(walk, [problem]);
}

function shapeProblem(
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

function fail(
  walk: Walk,
  issues: ValidationIssue[],
  summary?: string,
  cause?: unknown,
): SerializationError {
  const head = summary === undefined ? '' : `${summary}: `;
  const options = cause === undefined ? { issues } : { issues, cause };
  return new SerializationError(`${walk.operation}: ${head}${formatIssues(issues)}.`, options);
}

function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`))
    .join('; ');
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Sets a key even when it is `__proto__`, which plain assignment would turn into a prototype change. */
function defineEntry<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

function checkDefinition(definition: unknown): string | undefined {
  if (typeof definition !== 'object' || definition === null) {
    return `expected a fragment type definition, received ${describeKind(definition)}`;
  }
  const candidate = definition as Partial<Record<keyof FragmentTypeDefinition, unknown>>;
  if (typeof candidate.type !== 'string' || candidate.type.trim() === '')
    return 'type must be a non-empty string';
  if (
    candidate.fragmentName !== undefined &&
    (typeof candidate.fragmentName !== 'string' || candidate.fragmentName.trim() === '')
  ) {
    return 'fragmentName must be a non-empty string when given';
  }
  const schema = candidate.schema as { safeParse?: unknown } | undefined;
  if (typeof schema?.safeParse !== 'function') return 'schema must be a zod schema';
  if (typeof candidate.fromFragment !== 'function') return 'fromFragment must be a function';
  if (typeof candidate.toFragment !== 'function') return 'toFragment must be a function';
  return undefined;
}
