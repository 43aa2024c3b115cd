import type { ContextFragment } from './context-fragment';
import { LAZY_ID, type LazyFragment } from './lazy';

/**
 * True when `value` looks like a {@link ContextFragment}: a non-array object with a string `name`
 * and a `data` property (which may hold `undefined`).
 */
export function isFragment(value: unknown): value is ContextFragment {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    'name' in value &&
    'data' in value &&
    typeof (value as { name: unknown }).name === 'string'
  );
}

/**
 * True when `value` is a plain object (`{}` or `Object.create(null)`) that is not a fragment:
 * arrays, class instances (`Date`, `Map`, …) and primitives are not.
 */
export function isFragmentObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return !isFragment(value);
}

/** True when `fragment` is a conversation message (`type: 'message'`). */
export function isMessageFragment(fragment: unknown): fragment is ContextFragment {
  return isFragment(fragment) && fragment.type === 'message';
}

/** True when `fragment` waits for the engine to resolve its id at save time. */
export function isLazyFragment(fragment: unknown): fragment is LazyFragment {
  return (
    isFragment(fragment) &&
    LAZY_ID in fragment &&
    typeof (fragment as Record<symbol, unknown>)[LAZY_ID] === 'object'
  );
}
