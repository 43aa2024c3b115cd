import type { ReactElement } from 'react';
import type { BudgetedCall } from '../api';
import { Bar, tokens } from './budget-figures';

/** Per recorded call: the prefix it shared with the previous one, and what broke it. */
export function CacheView(props: {
  calls: readonly BudgetedCall[];
  texts: ReadonlyMap<string, { text: string }>;
  onRecord: () => Promise<void>;
}): ReactElement {
  return (
    <div className="budget-body" data-testid="cache-view">
      <p className="muted">
        An app calls the model once per turn; each call made within the budget is compared with the
        previous one on this branch. The leading part that repeats byte for byte is what a provider
        serves from its cache. While this window is open, a call is recorded at every new message;{' '}
        <em>Record a call now</em> records one at once.
      </p>
      <button type="button" className="primary" onClick={() => void props.onRecord()}>
        Record a call now
      </button>
      {props.calls.length === 0 ? <p className="muted">No call recorded yet.</p> : null}
      <ol className="cache-turns" aria-label="Recorded calls">
        {props.calls.map((call, index) => {
          const { prefix } = call.budget;
          const change = prefix.firstChange;
          const segments = [
            ...call.budget.fragments
              .filter((fragment) => fragment.kept)
              .map((fragment) => ({ kind: 'fragment', id: fragment.id, name: fragment.name })),
            ...call.budget.messages.map((message) => ({
              kind: 'message',
              id: message.id,
              name: props.texts.get(message.id)?.text.slice(0, 48) ?? message.role,
            })),
          ];
          const brokenAt =
            change === null
              ? -1
              : segments.findIndex(
                  (segment) => segment.kind === change.kind && segment.id === change.id,
                );
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: calls are appended, never reordered
            <li key={index} className="cache-turn">
              <div className="cache-turn-head">
                <strong>Call {index + 1}</strong>
                <Bar value={prefix.reusedTokens} of={prefix.totalTokens} tone="reused" />
                <span data-testid="cache-reuse">
                  {prefix.compared
                    ? `${tokens(prefix.reusedTokens)} of ${tokens(prefix.totalTokens)} reused`
                    : `first call: ${tokens(prefix.totalTokens)}, nothing to compare with`}
                </span>
              </div>
              {change ? (
                <p className="cache-break" data-testid="cache-break">
                  The prefix broke at the {change.kind} “{change.name}” ({change.change}).
                </p>
              ) : prefix.compared ? (
                <p className="muted small">The previous call is an unchanged prefix of this one.</p>
              ) : null}
              <div className="segments" data-testid="prompt-segments">
                {segments.map((segment, at) => (
                  <span
                    key={`${segment.kind}-${segment.id}`}
                    className={`segment ${
                      !prefix.compared
                        ? 'new'
                        : brokenAt === -1 || at < brokenAt
                          ? 'reused'
                          : at === brokenAt
                            ? 'broke'
                            : 'new'
                    }`}
                    title={`${segment.kind}: ${segment.name}`}
                  >
                    {segment.name}
                  </span>
                ))}
              </div>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
