import type { ContextFragment, ContextRenderer, PruneResult } from '@ctxgraph/fragments-core';
import { type DeleteBranchOptions, deleteBranchOf } from './branches/branch-operations';
import {
  type BranchComparisonReport,
  type CompareBranchesOptions,
  compareBranchesOf,
} from './branches/compare-branches';
import {
  type CheckedResolveOptions,
  checkResolveOptions,
  continueFromProblem,
  type EngineSettings,
  optionsProblem,
  pickRenderer,
  pricedOptionsProblem,
} from './context-engine-options';
import { ContextLane } from './context-lane/context-lane';
import { addMessages, routeFragments } from './conversation/conversation';
import { saveTurn } from './conversation/save-turn';
import {
  type ContinueFromOptions,
  type ContinueFromResult,
  continueFrom,
} from './messages/message-graph';
import {
  BudgetPlanner,
  type ModelResolveResult,
  type ResolveOptions,
  type ResolveResult,
} from './resolve/budgeted-resolve';
import { ChatSession } from './session/chat-session';
import type { SaveOptions } from './session/write-messages';

// The engine's calls that work with several of its parts at once, so the facade
// (`context-engine.ts`) only hands each call over.

/** The parts of an engine its calls work with: the open chat, the context lane, the planner. */
export interface EngineParts {
  readonly session: ChatSession;
  readonly lane: ContextLane;
  readonly planner: BudgetPlanner;
  /** The engine's default renderer, if it has one. */
  readonly renderer: ContextRenderer | undefined;
}

/** The parts of a new engine, from its checked options. */
export function engineParts(settings: EngineSettings): EngineParts {
  return {
    session: new ChatSession(settings),
    lane: new ContextLane(settings.serializer),
    planner: new BudgetPlanner(settings.autoCompact),
    renderer: settings.renderer,
  };
}

/**
 * `resolve()`: checks the options at the call (a rejection, nothing queued, for a bad one), then,
 * in call order, opens the chat and hands the planner one call with the context lane as it was
 * at the call.
 */
export function resolveCall(
  parts: EngineParts,
  options: ResolveOptions | undefined,
): Promise<ResolveResult | ModelResolveResult> {
  let checked: CheckedResolveOptions;
  try {
    checked = checkResolveOptions(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const { session, planner } = parts;
  const context = parts.lane.atCall();
  return session.run(async (ticket) => {
    const renderer = pickRenderer(options?.renderer, parts.renderer, 'resolve(options)');
    const opened = await session.open();
    // Fields named one by one: an object spread here costs more than the rest of a warm resolve.
    const { format, budget } = checked;
    const call = { format, budget, renderer, fragments: context(), ticket };
    return planner.resolve(session, call, opened);
  });
}

/**
 * `set()`: routes the fragments, queues the messages (whose checks may refuse the call, and then
 * nothing is added) and adds the rest to the context lane.
 */
export function setFragments(parts: EngineParts, fragments: readonly ContextFragment[]): void {
  const routed = routeFragments(fragments);
  addMessages(parts.session, routed);
  parts.lane.add(routed.context);
}

/** `save()`: in call order, saves the messages set before the call; resolves to the head. */
export function saveCall(
  parts: EngineParts,
  options: SaveOptions,
): Promise<{ headMessageId: string | undefined }> {
  const { session } = parts;
  return session.run(async (ticket) => {
    await saveTurn(session, ticket, options);
    return { headMessageId: session.view.headMessageId ?? undefined };
  });
}

/** `compareBranches()`: checks the options at the call, then compares in call order. */
export function compareCall(
  parts: EngineParts,
  names: { readonly left: string; readonly right: string },
  options: CompareBranchesOptions | undefined,
): Promise<BranchComparisonReport> {
  const problem = pricedOptionsProblem('compareBranches(left, right, options)', options);
  if (problem !== undefined) return Promise.reject(problem);
  return parts.session.run(() =>
    compareBranchesOf(parts.session, names.left, names.right, options),
  );
}

/** `continueFrom()`: checks the options at the call, then positions the engine in call order. */
export function continueCall(
  parts: EngineParts,
  nodeId: string | null,
  options: ContinueFromOptions | undefined,
): Promise<ContinueFromResult> {
  const problem = continueFromProblem(options);
  if (problem !== undefined) return Promise.reject(problem);
  return parts.session.run(() =>
    continueFrom(
      parts.session,
      nodeId,
      options?.activate === true,
      options?.pastCompaction === true,
    ),
  );
}

/** `deleteBranch()`: checks the options at the call, then deletes in call order. */
export function deleteBranchCall(
  parts: EngineParts,
  name: string,
  options: DeleteBranchOptions | undefined,
): Promise<PruneResult> {
  const problem = optionsProblem('deleteBranch(name, options)', options);
  if (problem !== undefined) return Promise.reject(problem);
  return parts.session.run((ticket) => deleteBranchOf(parts.session, ticket, name, options));
}
