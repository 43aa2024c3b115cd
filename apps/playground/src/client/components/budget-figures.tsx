import type { ReactElement } from 'react';

/** A number of tokens, for a person. */
export function tokens(value: number): string {
  return `${value.toLocaleString('en-US')} tokens`;
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
