import { builtinFragmentTypes } from './builtin-fragment-types';
import { FragmentSerializer } from './fragment-serializer';
import type { FragmentTypeDefinition, SerializedOf } from './fragment-type-definition';
import type { SerializedFragment } from './schemas';

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
