// The budget planner: a pure function from counted segments to a plan and its report. No I/O, no
// engine state and no memory of earlier calls: the engine gathers the segments and applies the
// plan, so an engine made per request plans exactly what a long-lived one does.
import { BudgetExceededError, type BudgetItem } from '@ctxgraph/fragments-core';
import type { CacheBreakpoint } from '../cache/cache-profile';

/** A context fragment as the planner sees it. */
export interface PlanFragment {
  /** `'#<position>'` in the context lane, or the fragment's own id. */
  readonly id: string;
  /** The fragment's name. */
  readonly name: string;
  readonly tokens: number;
  readonly priority: number;
  readonly required: boolean;
}

/**
 * The write amplification (tokens written to the provider's cache per new token) the
 * `'write-bound'` chunking keeps to: a cut rewrites the history it keeps, and history kept after
 * a cut is at most the room, so chunks of `room / 1.1` let in at least ten times what a cut
 * rewrites. The price is context: right after a cut, the history sent is at most a tenth of
 * the room (a compaction's summary, with `autoCompact`, stands in for what went).
 */
const WRITE_AMPLIFICATION_TARGET = 1.1;

/** A message as the planner sees it (history first, then pending, oldest first). */
export interface PlanMessage {
  readonly id: string;
  readonly role: string;
  readonly tokens: number;
  /**
   * The shown message of a compaction (our summary, or a provider-compaction reply): only on the
   * first message. It stands in for everything before the cut, so it is kept while any history is.
   */
  readonly compaction?: boolean;
}

/** Everything {@link planBudget} needs. */
export interface PlanInput {
  readonly maxInputTokens: number;
  /**
   * How big the chunks history is cut in are: a share of the budget (0 to 1: a chunk starts at
   * the first turn after every `releaseRatio × maxInputTokens` tokens), or `'write-bound'` for a
   * provider that charges for cache writes: a chunk is the history's room divided by
   * {@link WRITE_AMPLIFICATION_TARGET}, so what a cut makes the provider write again (the history
   * kept after it) is at most a tenth of the new tokens the chunk lets in before the next cut.
   */
  readonly releaseRatio: number | 'write-bound';
  /**
   * The budget a `releaseRatio` chunk is a share of, when it differs from `maxInputTokens` (a
   * calibrated plan's room moves with its factor; the chunk boundaries must not).
   * @default maxInputTokens
   */
  readonly chunkBudgetTokens?: number;
  /** Tokens no choice changes (the system prompt's wrapping). */
  readonly overheadTokens: number;
  readonly fragments: readonly PlanFragment[];
  readonly messages: readonly PlanMessage[];
  /** Index of the first pending (not yet saved) message: it and all after it are kept. */
  readonly pendingFrom: number;
  readonly tokenizer: string;
}

/** Why a part was left out. */
export type LeftOutRule =
  /** A fragment below priority 0 goes before any history. */
  | 'fragment-below-history'
  /** The oldest history turns go first, in chunks. */
  | 'history-oldest-first'
  /**
   * A compaction's message (its summary, or the provider's compaction reply) goes only once no
   * other history fits: it stands in for everything before the compaction.
   */
  | 'compaction-last'
  /** Once no history may go, the lowest-priority fragments go. */
  | 'fragment-priority';

/** What was left out of the input: a fragment, or the run of oldest history messages. */
export type LeftOutItem =
  | {
      readonly kind: 'fragment';
      readonly id: string;
      readonly name: string;
      readonly tokens: number;
      readonly rule: Exclude<LeftOutRule, 'history-oldest-first' | 'compaction-last'>;
    }
  | {
      readonly kind: 'history';
      /** The oldest message left out. */
      readonly fromId: string;
      /** The newest message left out (the one before the first kept). */
      readonly toId: string;
      readonly messages: number;
      readonly tokens: number;
      readonly rule: Extract<LeftOutRule, 'history-oldest-first' | 'compaction-last'>;
    };

/** The planner's answer. */
export interface Plan {
  /** Per fragment, in lane order: kept or not. */
  readonly keptFragments: readonly boolean[];
  /**
   * Index in `messages` of the first message kept after the compaction's message (messages
   * before it are left out, except the compaction's message when `keptCompaction`).
   */
  readonly firstKeptIndex: number;
  /** The first message is a compaction's and is kept though history after it was cut. */
  readonly keptCompaction: boolean;
  readonly leftOut: readonly LeftOutItem[];
  readonly totalTokens: number;
  /** History tokens left out: what a compaction could summarize instead. */
  readonly droppedHistoryTokens: number;
  readonly droppedHistoryMessages: number;
  readonly breakpoints: readonly CacheBreakpoint[];
}

interface Turn {
  readonly start: number;
  readonly end: number;
  readonly tokens: number;
  readonly protected: boolean;
}

/**
 * Groups messages into turns: a turn starts at each user message (a leading run of other roles is
 * one turn). A UI message keeps a tool call with its result, and a turn keeps every message up to
 * the next user message, so dropping whole turns never separates a call from its result and the
 * kept history always starts at a user message. The last turn and every turn holding a pending
 * message are protected.
 */
export function groupTurns(
  messages: readonly PlanMessage[],
  pendingFrom: number,
  from = 0,
): Turn[] {
  const turns: Turn[] = [];
  let start = from;
  let tokens = 0;
  let pending = false;
  for (let index = from; index < messages.length; index += 1) {
    const message = messages[index] as PlanMessage;
    if (message.role === 'user' && index > start) {
      turns.push({ start, end: index, tokens, protected: pending });
      start = index;
      tokens = 0;
      pending = false;
    }
    tokens += message.tokens;
    if (index >= pendingFrom) pending = true;
  }
  if (messages.length > from) turns.push({ start, end: messages.length, tokens, protected: true });
  return turns;
}

/**
 * Fits fragments and history to `maxInputTokens`:
 *
 * 1. Required fragments, the protected turns (the newest turn, every pending message) and the
 *    overhead are always kept; when they alone are over the budget, a `BudgetExceededError`.
 * 2. Fragments below priority 0 go first (lowest priority, then the last set, first), then the
 *    oldest turns, whole chunks at a time: the history starts at the earliest chunk boundary from
 *    which the rest fits. A chunk starts at the first turn after every `releaseRatio ×
 *    maxInputTokens` tokens of history, counted from its first message, so the boundaries do not
 *    move as the conversation grows: the following calls grow on the same prefix (byte-identical,
 *    cached by the provider) until the budget forces the next boundary.
 *    After a compaction, its shown message (the first, flagged `compaction`) is held apart: the
 *    turns after it go first, chunks counted from just after it, and it goes only when none of
 *    them is left to drop and the input still does not fit (rule `'compaction-last'`).
 * 3. When no more history may go and it still does not fit, fragments at priority 0 or above go,
 *    lowest first.
 *
 * The cut is a function of this call's input alone (never of the previous plan): a planner for a
 * new engine per request cuts where a long-lived one does, and when room comes back (a bigger
 * budget, a fragment removed, a compaction's summary in place of its span) the earlier history
 * comes back with it.
 *
 * Breakpoints: the system prompt, the end of the previous turn's question (its user message and
 * anything before its first reply: where the call that answered it ended its input, so the
 * provider cached that prefix), when it is kept, and the end of this input. They are read from
 * this input alone, like the cut: a fresh engine marks what a warm one does.
 */
export function planBudget(input: PlanInput): Plan {
  const { maxInputTokens, fragments, messages } = input;
  // A compaction's message leads the history (the compacted view shows it first): it is held
  // apart from the turns and goes only after all of them, so the model never loses both the
  // originals and what stands in for them while any history is sent.
  const lead =
    messages[0]?.compaction === true && input.pendingFrom > 0 && messages.length > 1 ? 1 : 0;
  const turns = groupTurns(messages, input.pendingFrom, lead);
  const firstProtected = turns.findIndex((turn) => turn.protected);
  const protectedFrom = firstProtected === -1 ? turns.length : firstProtected;

  let requiredTokens = input.overheadTokens;
  const required: BudgetItem[] = [];
  for (const fragment of fragments) {
    if (!fragment.required) continue;
    requiredTokens += fragment.tokens;
    required.push({
      ...itemOf('fragment', fragment.id, fragment.name, fragment.tokens),
      keptBecause: 'required',
    });
  }
  for (
    let index = turns[protectedFrom]?.start ?? messages.length;
    index < messages.length;
    index += 1
  ) {
    const message = messages[index] as PlanMessage;
    requiredTokens += message.tokens;
    required.push({
      ...itemOf('message', message.id, message.role, message.tokens),
      keptBecause: 'pending',
    });
  }
  if (requiredTokens > maxInputTokens) {
    throw new BudgetExceededError({
      maxInputTokens,
      requiredTokens,
      required,
      tokenizer: input.tokenizer,
    });
  }

  // Drop orders: fragments below history first, then the others, each lowest priority first and,
  // among equals, the one set last first.
  const optional = fragments
    .map((fragment, index) => ({ fragment, index }))
    .filter(({ fragment }) => !fragment.required)
    .sort(
      (left, right) => left.fragment.priority - right.fragment.priority || right.index - left.index,
    );
  const belowHistory = optional.filter(({ fragment }) => fragment.priority < 0);
  const aboveHistory = optional.filter(({ fragment }) => fragment.priority >= 0);

  const kept = fragments.map(() => true);
  const leftOut: LeftOutItem[] = [];
  let fragmentTokens = fragments.reduce((sum, fragment) => sum + fragment.tokens, 0);

  const leave = (
    { fragment, index }: { fragment: PlanFragment; index: number },
    rule: 'fragment-below-history' | 'fragment-priority',
  ): void => {
    if (!kept[index]) return;
    kept[index] = false;
    fragmentTokens -= fragment.tokens;
    leftOut.push({
      kind: 'fragment',
      id: fragment.id,
      name: fragment.name,
      tokens: fragment.tokens,
      rule,
    });
  };

  let startTurn = 0;
  const leadTokens = lead === 1 ? (messages[0] as PlanMessage).tokens : 0;
  let history = turns.reduce((sum, turn) => sum + turn.tokens, leadTokens);
  let keptLead = lead === 1;
  const total = (): number => input.overheadTokens + fragmentTokens + history;

  // Every fragment below history goes before any history does, so once history is cut they are
  // all out.
  for (const entry of belowHistory) {
    if (total() <= maxInputTokens) break;
    leave(entry, 'fragment-below-history');
  }
  if (total() > maxInputTokens && protectedFrom > 0) {
    // Cut at the earliest chunk boundary from which the rest fits. Boundaries are fixed places
    // in the history (a chunk starts at the first turn after every `releaseRatio ×
    // maxInputTokens` tokens), so consecutive calls cut at the same place until growth forces
    // the next boundary: they share their prefix.
    const chunk = Math.max(
      1,
      Math.floor(
        input.releaseRatio === 'write-bound'
          ? // The room history has once the fragments below it are out (they go first): it
            // changes only with the budget and the fragments kept, so the boundaries stay put.
            (maxInputTokens - input.overheadTokens - fragmentTokens) / WRITE_AMPLIFICATION_TARGET
          : (input.chunkBudgetTokens ?? maxInputTokens) * input.releaseRatio,
      ),
    );
    let offset = 0;
    while (startTurn < protectedFrom) {
      const before = offset;
      offset += (turns[startTurn] as Turn).tokens;
      history -= (turns[startTurn] as Turn).tokens;
      startTurn += 1;
      const boundary = Math.floor(offset / chunk) !== Math.floor(before / chunk);
      if ((boundary || startTurn === protectedFrom) && total() <= maxInputTokens) break;
    }
  }
  if (keptLead && total() > maxInputTokens && startTurn === protectedFrom) {
    keptLead = false;
    history -= leadTokens;
  }
  for (const entry of aboveHistory) {
    if (total() <= maxInputTokens) break;
    leave(entry, 'fragment-priority');
  }

  const firstKeptIndex = turns[startTurn]?.start ?? messages.length;
  let droppedTurnTokens = 0;
  for (let index = lead; index < firstKeptIndex; index += 1) {
    droppedTurnTokens += (messages[index] as PlanMessage).tokens;
  }
  if (firstKeptIndex > lead) {
    leftOut.push({
      kind: 'history',
      fromId: (messages[lead] as PlanMessage).id,
      toId: (messages[firstKeptIndex - 1] as PlanMessage).id,
      messages: firstKeptIndex - lead,
      tokens: droppedTurnTokens,
      rule: 'history-oldest-first',
    });
  }
  const leadDropped = lead === 1 && !keptLead;
  if (leadDropped) {
    const message = messages[0] as PlanMessage;
    leftOut.push({
      kind: 'history',
      fromId: message.id,
      toId: message.id,
      messages: 1,
      tokens: message.tokens,
      rule: 'compaction-last',
    });
  }
  const droppedHistoryTokens = droppedTurnTokens + (leadDropped ? leadTokens : 0);
  const droppedHistoryMessages = firstKeptIndex - lead + (leadDropped ? 1 : 0);

  const breakpoints: CacheBreakpoint[] = [{ kind: 'system' }];
  const last = messages.at(-1);
  const previousTurn = turns.at(-2);
  if (previousTurn !== undefined) {
    // The previous turn's question ends before its first assistant message.
    let end = previousTurn.start;
    while (end + 1 < previousTurn.end && (messages[end + 1] as PlanMessage).role !== 'assistant') {
      end += 1;
    }
    if (end >= firstKeptIndex) {
      breakpoints.push({
        kind: 'message',
        id: (messages[end] as PlanMessage).id,
        role: 'previous-input',
      });
    }
  }
  if (last !== undefined) breakpoints.push({ kind: 'message', id: last.id, role: 'input' });

  return {
    keptFragments: kept,
    // Nothing cut: the history is whole, from its first message.
    firstKeptIndex: keptLead && firstKeptIndex === 1 ? 0 : firstKeptIndex,
    keptCompaction: keptLead && firstKeptIndex > 1,
    leftOut,
    totalTokens: total(),
    droppedHistoryTokens,
    droppedHistoryMessages,
    breakpoints,
  };
}

function itemOf(
  kind: 'fragment' | 'message',
  id: string,
  name: string,
  tokens: number,
): { kind: 'fragment' | 'message'; id: string; name: string; tokens: number } {
  return { kind, id, name, tokens };
}
