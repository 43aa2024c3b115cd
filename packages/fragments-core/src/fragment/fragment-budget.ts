import { ValidationError } from '../errors/errors';
import type { ContextFragment } from './context-fragment';
import { isFragment, isMessageFragment } from './guards';

/**
 * How a context fragment fares when `resolve({ budget })` has to leave things out. Renderers never
 * see it: a fragment renders to the same bytes with or without it.
 */
export interface FragmentBudget {
  /**
   * Higher is kept longer. Fragments below 0 are left out before any history; fragments at 0 or
   * above are left out only once every history turn that may go has gone. Among fragments, the
   * lowest priority goes first, and among equals the one set last.
   * @default 0
   */
  readonly priority?: number;
  /**
   * Never left out: when the required fragments and the pending turn alone do not fit, resolve
   * fails with a `BudgetExceededError` instead.
   * @default false
   */
  readonly required?: boolean;
}

/**
 * A copy of a context fragment with its budget settings (priority, required). Use it around any
 * builder; message fragments are refused (history follows its own policy).
 *
 * @example
 * ```ts
 * engine.set(
 *   withBudget(role('You are a support agent.'), { required: true }),
 *   withBudget(hint('Long product catalogue…'), { priority: -1 }),
 * );
 * ```
 */
export function withBudget<T extends ContextFragment>(fragment: T, budget: FragmentBudget): T {
  const where = 'withBudget(fragment, budget)';
  if (!isFragment(fragment) || isMessageFragment(fragment)) {
    throw new ValidationError(
      `${where}: fragment must be a context fragment (messages follow the history policy instead).`,
      { issues: [{ path: 'fragment', message: 'expected a non-message fragment' }] },
    );
  }
  if (typeof budget !== 'object' || budget === null) {
    throw new ValidationError(`${where}: budget must be an object with priority and/or required.`, {
      issues: [{ path: 'budget', message: 'expected an object' }],
    });
  }
  const { priority, required } = budget;
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isFinite(priority))) {
    throw new ValidationError(
      `${where}: budget.priority must be a finite number, received ${String(priority)}.`,
      { issues: [{ path: 'budget.priority', message: 'expected a finite number' }] },
    );
  }
  if (required !== undefined && typeof required !== 'boolean') {
    throw new ValidationError(
      `${where}: budget.required must be a boolean, received ${String(required)}.`,
      { issues: [{ path: 'budget.required', message: 'expected a boolean' }] },
    );
  }
  const settings: FragmentBudget = {
    ...(priority === undefined ? {} : { priority }),
    ...(required === undefined ? {} : { required }),
  };
  return { ...(fragment as ContextFragment), budget: settings } as T;
}
