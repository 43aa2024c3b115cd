import {
  type ContextFragment,
  type FragmentData,
  isFragmentObject,
  type JsonValue,
} from '@ctxgraph/fragments-core';
import type { z } from 'zod';
import { splitBudget } from './conversion/check-serialized';
import type { Operation } from './conversion/fail';
import { decodeValue, hydrateFragment } from './conversion/hydrate-fragment';
import { encodeValue, serializeFragment } from './conversion/serialize-fragment';
import {
  assertShallow,
  type NestedConversions,
  newWalk,
  shapeProblem,
  type Walk,
} from './conversion/walk';
import type {
  FragmentTypeDefinition,
  SerializedFragmentBase,
  SerializedOf,
} from './fragment-type-definition';
import { FragmentTypeRegistry } from './fragment-type-registry';
import { type SerializedFragment, type SerializedGroup, serializedBudgetSchema } from './schemas';

// The conversions a type's `SerializationContext` calls; handed to every walk from here, the one
// module that imports both directions.
const nestedConversions: NestedConversions = { encode: encodeValue, decode: decodeValue };

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
  readonly #registry: FragmentTypeRegistry;

  /** Prefer {@link createSerializer}; this checks the definitions the same way. */
  constructor(definitions: readonly FragmentTypeDefinition[]) {
    this.#registry = new FragmentTypeRegistry(definitions);
    this.types = this.#registry.types;
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
    serializeFragment(fragment, '', this.#walk('fromFragment')) as Serialized | SerializedGroup;

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
    const walk = this.#walk('toFragment');
    assertShallow(flat, walk);
    return hydrateFragment(flat, '', walk);
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
    encodeValue(value, '', this.#walk('encodeSerializedValue'));

  /**
   * The inverse of {@link encodeSerializedValue}: plain objects whose `type` is a registered type
   * become fragments (through {@link toFragment}); other objects and arrays are walked; JSON
   * scalars stay. Objects whose `type` is not registered stay plain objects.
   *
   * @throws {SerializationError} for values JSON cannot hold and for serialized fragments that do
   * not match their schema.
   */
  readonly decodeSerializedValue: (value: unknown) => FragmentData = (value) => {
    const walk = this.#walk('decodeSerializedValue');
    assertShallow(value, walk);
    return decodeValue(value, '', walk);
  };

  /**
   * True when `value` is a serialized fragment this serializer can hydrate (its `type` is
   * registered and it passes that type's schema).
   */
  readonly isSerializedFragment: (value: unknown) => value is Serialized = (
    value,
  ): value is Serialized => {
    if (!isFragmentObject(value) || typeof value.type !== 'string') return false;
    const schema = this.#registry.forType(value.type)?.schema;
    if (schema === undefined || shapeProblem(value) !== undefined) return false;
    const { fields, budget } = splitBudget(value);
    return (
      schema.safeParse(fields).success &&
      (budget === undefined || serializedBudgetSchema.safeParse(budget).success)
    );
  };

  /** The schema of a registered type's flat form, or `undefined` when it is not registered. */
  schemaFor(type: string): z.ZodType | undefined {
    return this.#registry.forType(type)?.schema;
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
    return new FragmentSerializer([...this.#registry.definitions, ...types]);
  }

  #walk(operation: Operation): Walk {
    return newWalk(operation, this.#registry, nestedConversions);
  }
}
