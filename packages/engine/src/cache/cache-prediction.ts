// Predicts, per budgeted call, which leading input tokens the provider will read from its prompt
// cache, from the profile's rules and what earlier calls on the same branch sent. Pure: the
// planner keeps the memory and passes the clock's reading in.
import type { CacheRules } from './cache-profiles';
import type { PrefixReport } from './prefix-report';
import { segmentHash } from './segment-hash';

/** Why the provider cannot read (all of) what an earlier call on the branch sent. */
export type CacheBreakCause =
  /** No earlier budgeted call on this branch in this engine: nothing to read from. */
  | 'first-call'
  /** A fragment or message changed bytes (a fragment edited, the history cut moved). */
  | 'changed'
  /** A message or fragment of the earlier input is no longer sent (history cut, fragment left out). */
  | 'removed'
  /** The cache entry outlived its time to live. */
  | 'expired'
  /** The call goes to another model or profile than the earlier one (caches are per model). */
  | 'model-changed'
  /** The shared prefix is shorter than the model's minimum cacheable size. */
  | 'below-minimum'
  /** The shared prefix does not end where an earlier call wrote a cache entry. */
  | 'not-marked'
  /** The profile caches nothing. */
  | 'not-cached'
  /** Only in a confirmation: the provider read less than the rules explain (eviction, routing). */
  | 'unexplained';

/** Where the read from the cache stops, and why. */
export interface CacheBreak {
  /** `'system'` when the system prompt as a whole (no single fragment) is the place. */
  readonly kind: 'fragment' | 'message' | 'system';
  /** The fragment's id (`'#<position>'` or its own), the message id, or `'system'`. */
  readonly id: string;
  /** The fragment's name, the message's role, or `'system'`. */
  readonly name: string;
  readonly cause: CacheBreakCause;
}

/** What the plan expects the provider to read from and write to its cache for this call. */
export interface CachePrediction {
  /** The cache profile that marked the call (`'anthropic'`, `'openai'`, `'none'`, …). */
  readonly profile: string;
  /** The model the call is planned for, or null when none was passed. */
  readonly modelId: string | null;
  /** The profile's rules for that model. */
  readonly rules: CacheRules;
  /** Breakpoints marked on the messages (within the profile's maximum). */
  readonly marks: number;
  /** The input's tokens (the engine's count, as in the budget report). */
  readonly inputTokens: number;
  /** Leading tokens the previous budgeted call on this branch sent too (could be read). */
  readonly reusableTokens: number;
  /**
   * Tokens of the fragments and messages the previous call did not send (the system prompt
   * counts as one piece): what any cache has to write at least once.
   */
  readonly newTokens: number;
  /** Leading tokens predicted to be read from the cache. */
  readonly readTokens: number;
  /** Tokens predicted to be written to the cache (0 where the provider does not report writes). */
  readonly writeTokens: number;
  /**
   * Where the predicted read stops short of what the previous call sent, and why; null when it
   * reads all of it (only new tokens are not read).
   */
  readonly break: CacheBreak | null;
}

/** A piece of the input as the cache sees it: the system prompt, then each message. */
export interface CacheUnit {
  readonly kind: 'system' | 'message';
  readonly id: string;
  readonly name: string;
  readonly tokens: number;
  readonly hash: string;
}

interface CacheEntry {
  /** How many units the cached prefix holds. */
  readonly units: number;
  readonly key: string;
  readonly tokens: number;
  expiresAt: number;
}

/** What the planner keeps per branch for the next prediction. */
export interface CacheMemory {
  readonly profile: string;
  readonly modelId: string | null;
  readonly units: readonly CacheUnit[];
  readonly at: number;
  readonly entries: readonly CacheEntry[];
}

/** Everything {@link predictCache} needs. */
export interface PredictInput {
  readonly profile: string;
  readonly modelId: string | null;
  readonly rules: CacheRules;
  readonly units: readonly CacheUnit[];
  /** Indexes in `units` of the units that end at a marked breakpoint. */
  readonly marks: readonly number[];
  readonly inputTokens: number;
  readonly prefix: PrefixReport;
  readonly memory: CacheMemory | null;
  readonly now: number;
}

/** Anthropic looks for an earlier entry up to 20 blocks before each breakpoint. */
const LOOKBACK_UNITS = 20;
/** Entries kept per branch (the newest). */
const MAX_ENTRIES = 16;

/**
 * The tolerance of a comparison between token counts: 2% of the input, at least 16 tokens and
 * at least the provider's prefix step (a read rounded down to it is not a miss).
 */
export function tokenTolerance(inputTokens: number, prefixStep = 1): number {
  return Math.max(16, prefixStep, Math.ceil(inputTokens * 0.02));
}

/** The unit that holds token position `position` (the first whose end is past it). */
export function unitAt(
  units: readonly CacheUnit[],
  position: number,
): { unit: CacheUnit; index: number } | null {
  let end = 0;
  for (let index = 0; index < units.length; index += 1) {
    const unit = units[index] as CacheUnit;
    end += unit.tokens;
    if (end > position) return { unit, index };
  }
  return null;
}

function roundDown(tokens: number, rules: CacheRules): number {
  if (tokens < rules.minCacheableTokens) return 0;
  const step = rules.prefixStep;
  return rules.minCacheableTokens + Math.floor((tokens - rules.minCacheableTokens) / step) * step;
}

/**
 * Predicts the call's cache read and write and names where the read stops, and returns the
 * memory the next call on the branch predicts from.
 */
export function predictCache(input: PredictInput): {
  prediction: CachePrediction;
  memory: CacheMemory;
  unitEnds: number[];
} {
  const { units, rules, memory, now } = input;
  const ends: number[] = [];
  const keys: string[] = [];
  let total = 0;
  let key = '';
  for (const unit of units) {
    total += unit.tokens;
    ends.push(total);
    key = segmentHash(`${key}|${unit.hash}`);
    keys.push(key);
  }
  const sameModel =
    memory !== null && memory.profile === input.profile && memory.modelId === input.modelId;
  // The longest run of leading units the previous input sent too.
  let common = 0;
  const previous = memory?.units ?? [];
  while (
    common < units.length &&
    common < previous.length &&
    (units[common] as CacheUnit).hash === (previous[common] as CacheUnit).hash &&
    (units[common] as CacheUnit).id === (previous[common] as CacheUnit).id
  ) {
    common += 1;
  }
  const reusableTokens = common === 0 ? 0 : (ends[common - 1] as number);
  const tokenAt = (count: number): number => (count === 0 ? 0 : (ends[count - 1] as number));

  let readTokens = 0;
  let writeTokens = 0;
  let expired = false;
  let entries: CacheEntry[] = [];
  if (rules.mode === 'breakpoints') {
    const marks = input.marks.filter((mark) => mark < units.length);
    const lastMark = marks.length === 0 ? -1 : Math.max(...marks);
    const live = sameModel ? (memory?.entries ?? []).map((entry) => ({ ...entry })) : [];
    let read: CacheEntry | null = null;
    for (const entry of live) {
      const matches =
        entry.units <= units.length &&
        keys[entry.units - 1] === entry.key &&
        marks.some((mark) => mark + 1 >= entry.units && mark + 1 - entry.units <= LOOKBACK_UNITS);
      if (!matches) continue;
      if (entry.expiresAt <= now) {
        expired = true;
        continue;
      }
      if (read === null || entry.tokens > read.tokens) read = entry;
    }
    if (read !== null) {
      readTokens = read.tokens;
      read.expiresAt = now + rules.ttlSeconds * 1000;
    }
    entries = live.filter((entry) => entry.expiresAt > now);
    const lastTokens = tokenAt(lastMark + 1);
    if (lastMark >= 0 && lastTokens >= rules.minCacheableTokens && lastTokens > readTokens) {
      writeTokens = lastTokens - readTokens;
    }
    for (const mark of marks) {
      const tokens = tokenAt(mark + 1);
      if (tokens < rules.minCacheableTokens) continue;
      const existing = entries.find(
        (entry) => entry.units === mark + 1 && entry.key === keys[mark],
      );
      if (existing) existing.expiresAt = now + rules.ttlSeconds * 1000;
      else
        entries.push({
          units: mark + 1,
          key: keys[mark] as string,
          tokens,
          expiresAt: now + rules.ttlSeconds * 1000,
        });
    }
    entries = entries.slice(Math.max(0, entries.length - MAX_ENTRIES));
  } else if (rules.mode === 'prefix' && sameModel && memory !== null) {
    const previousTotal = memory.units.reduce((sum, unit) => sum + unit.tokens, 0);
    if (now - memory.at >= rules.ttlSeconds * 1000) expired = reusableTokens > 0;
    else readTokens = roundDown(Math.min(reusableTokens, previousTotal), rules);
  }
  if (
    rules.mode === 'prefix' &&
    rules.reportsWrites &&
    input.inputTokens >= rules.minCacheableTokens
  )
    writeTokens = Math.max(0, input.inputTokens - readTokens);

  const tolerance = tokenTolerance(input.inputTokens, rules.prefixStep);
  const sent = new Set(previous.map((unit) => `${unit.kind}|${unit.id}|${unit.hash}`));
  let newTokens = 0;
  for (const unit of units) {
    if (!sent.has(`${unit.kind}|${unit.id}|${unit.hash}`)) newTokens += unit.tokens;
  }
  const prefixBroke = memory !== null && common < previous.length;
  let cacheBreak: CacheBreak | null = null;
  const nameUnit = (index: number, cause: CacheBreakCause): CacheBreak => {
    const unit = units[index];
    if (unit === undefined) {
      const gone = previous[index] as CacheUnit;
      return { kind: gone.kind, id: gone.id, name: gone.name, cause };
    }
    if (unit.kind === 'system') {
      // Name the fragment when the prefix report found which one changed.
      const change = input.prefix.firstChange;
      if (change !== null && change.kind === 'fragment')
        return { kind: 'fragment', id: change.id, name: change.name, cause };
      return { kind: 'system', id: 'system', name: 'system', cause };
    }
    return { kind: 'message', id: unit.id, name: unit.name, cause };
  };
  if (memory === null) {
    cacheBreak = nameUnit(0, 'first-call');
  } else if (!sameModel) {
    cacheBreak = nameUnit(0, 'model-changed');
  } else if (rules.mode === 'none') {
    cacheBreak = nameUnit(0, 'not-cached');
  } else {
    // What the rules leave unread of the shared prefix, and why.
    let ruleCause: CacheBreakCause | null = null;
    if (readTokens < reusableTokens - tolerance)
      ruleCause = expired
        ? 'expired'
        : reusableTokens < rules.minCacheableTokens
          ? 'below-minimum'
          : 'not-marked';
    else if (readTokens === 0 && reusableTokens > 0 && reusableTokens < rules.minCacheableTokens)
      ruleCause = 'below-minimum';
    if (prefixBroke && (ruleCause === null || ruleCause === 'below-minimum')) {
      // The prefix itself broke (a cut, an edit): that, not its short remainder, is the cause.
      const gone = previous[common] as CacheUnit;
      const removed = !units.some((unit) => unit.id === gone.id && unit.kind === gone.kind);
      cacheBreak =
        removed && (units[common] === undefined || units[common]?.kind === 'message')
          ? { kind: gone.kind, id: gone.id, name: gone.name, cause: 'removed' }
          : nameUnit(common, 'changed');
    } else if (ruleCause !== null) {
      cacheBreak = nameUnit(unitAt(units, readTokens)?.index ?? 0, ruleCause);
    }
  }
  return {
    prediction: {
      profile: input.profile,
      modelId: input.modelId,
      rules,
      marks: input.marks.length,
      inputTokens: input.inputTokens,
      reusableTokens,
      newTokens,
      readTokens,
      writeTokens,
      break: cacheBreak,
    },
    memory: {
      profile: input.profile,
      modelId: input.modelId,
      units,
      at: now,
      entries,
    },
    unitEnds: ends,
  };
}
