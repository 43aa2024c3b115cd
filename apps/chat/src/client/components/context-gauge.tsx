/** Props of {@link ContextGauge}: each may be absent (the gauge shows what it has). */
export interface ContextGaugeProps {
  /** Tokens the chat's context uses now. */
  usedTokens?: number | undefined;
  /** The model's context window, in tokens. */
  windowTokens?: number | undefined;
  /** What the chat has cost so far, in US dollars. */
  costUsd?: number | undefined;
}

const tokens = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** `cost` as dollars: cents for a cent or more, else enough digits to not read as zero. */
function dollars(cost: number): string {
  const digits = cost >= 0.01 || cost === 0 ? 2 : 4;
  return `$${cost.toFixed(digits)}`;
}

/**
 * A small gauge of the chat's context use (tokens used of the window, as a meter) and its cost.
 * Renders nothing when it has neither a token count nor a cost.
 */
export function ContextGauge({ usedTokens, windowTokens, costUsd }: ContextGaugeProps) {
  if (usedTokens === undefined && costUsd === undefined) return null;
  const share =
    usedTokens !== undefined && windowTokens !== undefined && windowTokens > 0
      ? Math.min(1, usedTokens / windowTokens)
      : undefined;
  const level = share === undefined ? 'none' : share >= 0.9 ? 'high' : share >= 0.7 ? 'mid' : 'low';
  return (
    <div className="context-gauge" data-testid="context-gauge" data-level={level}>
      {usedTokens !== undefined ? (
        <span className="gauge-tokens">
          {share !== undefined ? (
            <meter
              className="gauge-meter"
              min={0}
              max={1}
              low={0.7}
              high={0.9}
              optimum={0}
              value={share}
              aria-label="Context used"
            />
          ) : null}
          <span data-testid="context-tokens">
            {tokens.format(usedTokens)}
            {windowTokens !== undefined ? ` / ${tokens.format(windowTokens)}` : ''} tokens
            {share !== undefined ? ` (${Math.round(share * 100)}%)` : ''}
          </span>
        </span>
      ) : null}
      {costUsd !== undefined ? (
        <span className="gauge-cost" data-testid="context-cost" title="What this chat has cost">
          {dollars(costUsd)}
        </span>
      ) : null}
    </div>
  );
}
