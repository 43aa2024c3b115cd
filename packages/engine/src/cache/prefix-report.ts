/** One piece of an input, in order, as hashed for prefix diagnostics. */
export interface Segment {
  readonly kind: 'fragment' | 'message';
  /** `'#<position>'` or the fragment id; the message id. */
  readonly id: string;
  /** The fragment's name or the message's role. */
  readonly name: string;
  readonly tokens: number;
  /** {@link segmentHash} of the segment's bytes. */
  readonly hash: string;
}

/** How much of an input repeats the previous call's on the same chat and branch. */
export interface PrefixReport {
  /** False for the first budgeted call on this chat and branch (nothing to compare with). */
  readonly compared: boolean;
  /** Leading tokens byte-identical to the previous call (a provider can serve them from cache). */
  readonly reusedTokens: number;
  /** The input's tokens. */
  readonly totalTokens: number;
  /**
   * Where this input stops repeating the previous one: the first segment whose bytes (or id)
   * differ (`'changed'`), or, when this input is shorter, the first of the previous input's
   * segments it lacks (`'removed'`); null when the previous input is an unchanged prefix of this
   * one.
   */
  readonly firstChange: {
    readonly kind: 'fragment' | 'message';
    readonly id: string;
    readonly name: string;
    readonly change: 'changed' | 'removed';
  } | null;
}

/**
 * Compares two inputs segment by segment. The system prompt's own wrapping (`overheadTokens`)
 * counts as reused when every fragment matched, since the renderer then made the same bytes.
 */
export function comparePrefix(
  previous: readonly Segment[] | null,
  current: readonly Segment[],
  overheadTokens: number,
): PrefixReport {
  let totalTokens = overheadTokens;
  for (const segment of current) totalTokens += segment.tokens;
  if (previous === null)
    return { compared: false, reusedTokens: 0, totalTokens, firstChange: null };
  let reusedTokens = 0;
  let index = 0;
  while (index < current.length && index < previous.length) {
    const now = current[index] as Segment;
    const before = previous[index] as Segment;
    if (now.kind !== before.kind || now.id !== before.id || now.hash !== before.hash) break;
    reusedTokens += now.tokens;
    index += 1;
  }
  const fragmentCount = (segments: readonly Segment[]): number =>
    segments.reduce((count, segment) => count + (segment.kind === 'fragment' ? 1 : 0), 0);
  const fragments = fragmentCount(current);
  if (fragments === fragmentCount(previous) && index >= fragments) reusedTokens += overheadTokens;
  let firstChange: PrefixReport['firstChange'] = null;
  const now = current[index];
  const before = previous[index];
  if (before !== undefined) {
    firstChange =
      now === undefined
        ? { kind: before.kind, id: before.id, name: before.name, change: 'removed' }
        : { kind: now.kind, id: now.id, name: now.name, change: 'changed' };
  }
  return { compared: true, reusedTokens, totalTokens, firstChange };
}
