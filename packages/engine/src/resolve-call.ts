import type { ContextFragment, ContextRenderer } from '@ctxgraph/fragments-core';
import type { BudgetPlanner } from './budget/budgeted-resolve';
import {
  type CheckedResolveOptions,
  checkResolveOptions,
  type ModelResolveResult,
  pickRenderer,
  type ResolveOptions,
  type ResolveResult,
} from './context-engine-options';
import type { ChatSession } from './session/chat-session';

/** What `resolve()` works with besides its options: the engine's parts. */
export interface ResolveParts {
  readonly session: ChatSession;
  readonly planner: BudgetPlanner;
  /** The context lane as it is at the call (`ContextLane.atCall()`). */
  readonly context: () => readonly ContextFragment[];
  /** The engine's default renderer, if it has one. */
  readonly renderer: ContextRenderer | undefined;
}

/**
 * `resolve()`: checks the options at the call (a rejection, nothing queued, for a bad one), then,
 * in call order, opens the chat and hands the planner one call with the context lane as it was
 * at the call.
 */
export function resolveCall(
  parts: ResolveParts,
  options: ResolveOptions | undefined,
): Promise<ResolveResult | ModelResolveResult> {
  let checked: CheckedResolveOptions;
  try {
    checked = checkResolveOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const { session, planner, context } = parts;
  return session.run(async (ticket) => {
    const renderer = pickRenderer(options?.renderer, parts.renderer, 'resolve(options)');
    const opened = await session.open();
    // Fields named one by one: an object spread here costs more than the rest of a warm resolve.
    const { format, budget } = checked;
    const call = { format, budget, renderer, fragments: context(), ticket };
    return planner.resolve(session, call, opened);
  });
}
