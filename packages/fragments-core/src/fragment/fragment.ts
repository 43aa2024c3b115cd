import { ValidationError } from '../errors/errors';
import { describeValue } from '../rules/paths';
import type { ContextFragment, FragmentData } from './context-fragment';
import { isFragment } from './guards';

/**
 * A named group. With several children (or none) its data is the list of children; with exactly
 * one child that is not a fragment (a string, an object, a list) its data is that child, so
 * `fragment('note', 'text')` renders as a plain named value.
 *
 * @example
 * ```ts
 * fragment('database',
 *   hint('PostgreSQL 15'),
 *   hint('Tables: users, orders'),
 *   fragment('constraints', hint('No DELETE without audit')),
 * );
 * ```
 */
export function fragment(name: string, ...children: FragmentData[]): ContextFragment {
  if (typeof name !== 'string' || name.trim() === '') {
    const received = typeof name === 'string' ? 'an empty string' : describeValue(name);
    throw new ValidationError(
      `fragment(name, ...children): name must be a non-empty string, received ${received}.`,
      {
        issues: [{ path: 'name', message: `expected a non-empty string, received ${received}` }],
      },
    );
  }
  const [only] = children;
  if (children.length === 1 && !isFragment(only)) return { name, data: only };
  return { name, data: children };
}
