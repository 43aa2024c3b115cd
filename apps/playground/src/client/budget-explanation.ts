/** One part of a budgeted input that could not be left out (the engine's `BudgetItem`). */
export interface RequiredPart {
  readonly kind: 'fragment' | 'message';
  readonly id: string;
  readonly name: string;
  readonly tokens: number;
  readonly keptBecause: 'required' | 'pending' | null;
}

/** What `inspect({ budget })` reports when even what cannot be left out is over the budget. */
export interface Shortfall {
  readonly maxInputTokens: number;
  readonly requiredTokens: number;
  readonly required: readonly RequiredPart[];
}

function tokens(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'token' : 'tokens'}`;
}

/**
 * Why a budget cannot be met, naming the real causes from the engine's shortfall: the fragments
 * marked required (by name), the newest turn (which is always sent), and the fixed overhead (the
 * rest of the count: the system prompt's frame and each message's framing). It offers only the
 * remedies that apply: "mark fewer fragments required" only when some are.
 */
export function explainShortfall(shortfall: Shortfall): string {
  const fragments = shortfall.required.filter((part) => part.kind === 'fragment');
  const turn = shortfall.required.filter((part) => part.kind === 'message');
  const fragmentTokens = fragments.reduce((sum, part) => sum + part.tokens, 0);
  const turnTokens = turn.reduce((sum, part) => sum + part.tokens, 0);
  const overhead = Math.max(0, shortfall.requiredTokens - fragmentTokens - turnTokens);
  const causes: string[] = [];
  if (turn.length > 0) {
    causes.push(
      `the newest turn, always sent (${turn.length === 1 ? `1 ${turn[0]?.name} message` : `${turn.length} messages`}, ${tokens(turnTokens)})`,
    );
  }
  if (fragments.length > 0) {
    const names = fragments.map((part) => `“${part.name}”`).join(', ');
    causes.push(
      `${fragments.length === 1 ? 'the fragment' : 'the fragments'} marked required ${names} (${tokens(fragmentTokens)})`,
    );
  }
  if (overhead > 0)
    causes.push(`the fixed overhead of the prompt and messages (${tokens(overhead)})`);
  const remedies = ['raise the budget'];
  if (fragments.length > 0) remedies.push('mark fewer fragments required');
  if (turn.length > 0) remedies.push('shorten the newest message');
  const list =
    causes.length <= 1
      ? (causes[0] ?? 'nothing the engine could name')
      : `${causes.slice(0, -1).join(', ')} and ${causes.at(-1)}`;
  const remedy =
    remedies.length === 1
      ? remedies[0]
      : `${remedies.slice(0, -1).join(', ')} or ${remedies.at(-1)}`;
  return `Even the parts that cannot be left out take ${tokens(shortfall.requiredTokens)}, over the budget of ${tokens(shortfall.maxInputTokens)}: ${list}. To fit, ${remedy}.`;
}
