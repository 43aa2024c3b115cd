import type { ContextFragment, FragmentData, JsonValue } from '@ctxgraph/fragments-core';
import type { z } from 'zod';

/** The least every serialized fragment has: a `type` naming its format. */
export interface SerializedFragmentBase {
  /** Which registered fragment type this object is (`'term'`, `'hint'`, or a custom one). */
  type: string;
}

/**
 * What a fragment type's conversions get from the serializer: where they are (for error paths)
 * and how to convert nested values through the same registry, so nested fragments of any
 * registered type (built-in or custom) round-trip too.
 */
export interface SerializationContext {
  /** Where the fragment being converted sits: `''` at the top, `policies[1]` when nested. */
  readonly path: string;
  /**
   * Encodes a nested value as {@link FragmentSerializer.encodeSerializedValue} does. `at` is the
   * value's path relative to this fragment (`'items'`), used in error messages.
   */
  encode(value: FragmentData, at?: string): JsonValue | undefined;
  /**
   * Decodes a nested value as {@link FragmentSerializer.decodeSerializedValue} does: objects whose
   * `type` is registered become fragments.
   */
  decode(value: unknown, at?: string): FragmentData;
}

/**
 * Everything the serializer needs to support one fragment type: its flat JSON schema and the two
 * conversions. Pass definitions to `createSerializer({ types })` (or `serializer.extend()`).
 *
 * - `fromFragment` returns the fields of the flat form without `type`. Nested fragments, arrays
 *   and objects in them may be returned as they are: the serializer encodes the result, adds
 *   `type`, and checks it against `schema`.
 * - `toFragment` receives JSON that already passed `schema` and returns the fragment, usually by
 *   calling the type's builder. Decode nested values with `context.decode`.
 * - Either may throw a `ValidationError` whose issue paths are relative to the fragment; the
 *   serializer puts the fragment's own path in front.
 */
export interface FragmentTypeDefinition<
  Serialized extends SerializedFragmentBase = SerializedFragmentBase,
> {
  /** The `type` of the flat form. Must be unique within a serializer. */
  readonly type: Serialized['type'];
  /**
   * The `name` of the fragments this definition serializes.
   * @default the same as `type`
   */
  readonly fragmentName?: string;
  /** The schema of the flat form, `type` included. */
  readonly schema: z.ZodType<Serialized>;
  /** The flat fields (without `type`) of a fragment named `fragmentName`. */
  fromFragment(fragment: ContextFragment, context: SerializationContext): Record<string, unknown>;
  /** The fragment for validated flat JSON. */
  toFragment(serialized: Serialized, context: SerializationContext): ContextFragment;
}

/** The serialized form a definition produces. */
export type SerializedOf<Definition> =
  Definition extends FragmentTypeDefinition<infer Serialized> ? Serialized : never;

/**
 * Declares a fragment type for a serializer, inferring the serialized type from its schema.
 *
 * @example
 * ```ts
 * const metricType = defineFragmentType({
 *   type: 'metric',
 *   schema: z.strictObject({ type: z.literal('metric'), name: z.string(), sql: z.string() }),
 *   fromFragment: (fragment) => ({ ...(fragment.data as { name: string; sql: string }) }),
 *   toFragment: ({ name, sql }) => ({ name: 'metric', data: { name, sql } }),
 * });
 * const serializer = createSerializer({ types: [metricType] });
 * ```
 */
export function defineFragmentType<Serialized extends SerializedFragmentBase>(
  definition: FragmentTypeDefinition<Serialized>,
): FragmentTypeDefinition<Serialized> {
  return definition;
}
