import type { ContextFragment, FragmentData, JsonValue } from '@ctxgraph/fragments-core';
import { createSerializer } from './create-serializer';
import type { FragmentSerializer } from './fragment-serializer';
import type { SerializedFragment, SerializedGroup } from './schemas';

/**
 * The serializer behind the top-level functions: the 19 built-in types and nothing else. It is
 * immutable; to support a custom type, make your own with `createSerializer({ types })` or
 * `defaultSerializer.extend(type)` and call its methods.
 */
export const defaultSerializer: FragmentSerializer<SerializedFragment> = createSerializer();

/**
 * The flat JSON form of a built-in, non-message fragment, or of a named group made by
 * `fragment(name, ...children)` (see {@link FragmentSerializer.fromFragment}).
 *
 * @example
 * ```ts
 * fromFragment(term('MRR', 'monthly recurring revenue'));
 * // { type: 'term', name: 'MRR', definition: 'monthly recurring revenue' }
 * ```
 */
export function fromFragment(fragment: ContextFragment): SerializedFragment | SerializedGroup {
  return defaultSerializer.fromFragment(fragment);
}

/**
 * Hydrates flat JSON of a built-in type back into a fragment through its builder (see
 * {@link FragmentSerializer.toFragment}).
 *
 * @example
 * ```ts
 * engine.set(toFragment({ type: 'hint', text: 'Always exclude test accounts' }));
 * ```
 */
export function toFragment(flat: unknown): ContextFragment {
  return defaultSerializer.toFragment(flat);
}

/**
 * Encodes nested fragment data, with fragments inside, into JSON (see
 * {@link FragmentSerializer.encodeSerializedValue}).
 *
 * @example
 * ```ts
 * encodeSerializedValue({ policies: ['Prefer low-risk actions', hint('Validate first')] });
 * // { policies: ['Prefer low-risk actions', { type: 'hint', text: 'Validate first' }] }
 * ```
 */
export function encodeSerializedValue(value: FragmentData): JsonValue | undefined {
  return defaultSerializer.encodeSerializedValue(value);
}

/**
 * The inverse of {@link encodeSerializedValue} (see {@link FragmentSerializer.decodeSerializedValue}).
 *
 * @example
 * ```ts
 * decodeSerializedValue({ policies: ['Prefer low-risk actions', { type: 'hint', text: 'Validate first' }] });
 * // { policies: ['Prefer low-risk actions', hint('Validate first')] }
 * ```
 */
export function decodeSerializedValue(value: unknown): FragmentData {
  return defaultSerializer.decodeSerializedValue(value);
}
