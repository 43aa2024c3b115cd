import type { ReactElement } from 'react';

/** A number of tokens, for a person. */
export function tokens(value: number): string {
  return `${value.toLocaleString('en-US')} tokens`;
}

/** The next call's estimate as the engine computes it (`estimateNextCall`, in `nextCall`). */
export interface NextCallFigures {
  readonly cachedTokens: number;
  readonly cost: number | null;
}

/**
 * The next call's estimate in words, the same in every window that shows it: the tokens the
 * model's cache profile predicts are read from the cache, and the cost.
 */
export function nextCallText(nextCall: NextCallFigures): string {
  const cost = nextCall.cost === null ? 'price unknown' : `$${nextCall.cost.toFixed(6)}`;
  return `${tokens(nextCall.cachedTokens)} from the cache, ${cost}`;
}

/** A bar whose length is `value` out of `of`. */
export function Bar(props: {
  value: number;
  of: number;
  tone: 'kept' | 'out' | 'reused';
}): ReactElement {
  const width = props.of <= 0 ? 0 : Math.min(100, (props.value / props.of) * 100);
  return (
    <span className="bar">
      <span className={`bar-fill ${props.tone}`} style={{ width: `${width}%` }} />
    </span>
  );
}
