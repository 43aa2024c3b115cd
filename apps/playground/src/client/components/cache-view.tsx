import type { ReactElement } from 'react';
import type { BudgetedCall, CacheCalls } from '../api';
import { Bar, tokens } from './budget-figures';

/** Per recorded call: the prefix it shared with the previous one, and what broke it. */
export function CacheView(props: {
  calls: readonly BudgetedCall[];
  texts: ReadonlyMap<string, { text: string }>;
  onRecord: () => Promise<void>;
  /** The model calls recorded on the branch with a prediction, or null while they load. */
  recorded: CacheCalls | null;
  recordedError: string | null;
}): ReactElement {
  return (
    <div className="budget-body" data-testid="cache-view">
      <ModelCalls recorded={props.recorded} error={props.recordedError} />
      <p className="muted">
        An app calls the model once per turn; each call made within the budget is compared with the
        previous one on this branch. The leading part that repeats byte for byte is what a provider
        serves from its cache. While this panel is open (the message box stays usable beside it), a
        call is recorded at every new message, with the budget shown; <em>Record a call now</em>{' '}
        records one at once.
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
                <span className="muted small" data-testid="cache-call-budget">
                  within {tokens(call.budget.maxInputTokens)}
                </span>
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

const percent = (share: number): string => `${Math.round(share * 100)}%`;

/** Why a read stopped where it did, in words. */
function breakText(cause: { kind: string; name: string; cause: string } | null): string {
  if (cause === null) return 'read all of the previous call';
  return `stopped at the ${cause.kind} “${cause.name}” (${cause.cause})`;
}

const STATUS: Record<string, string> = {
  agreed: 'as predicted',
  'read-less': 'the provider read less than predicted',
  'read-more': 'the provider read more than predicted',
};

/**
 * The model calls of the branch that went through the chat cycle with a budget: what the engine
 * predicted the provider would read from its cache, and what the provider reported (the reply's
 * recorded usage), per call and in total (`usage().cache`).
 */
function ModelCalls(props: { recorded: CacheCalls | null; error: string | null }): ReactElement {
  const { recorded } = props;
  return (
    <section className="model-calls" aria-label="Model calls, predicted and confirmed">
      <h3>Model calls: predicted, then confirmed</h3>
      {props.error ? <p className="inline-error">{props.error}</p> : null}
      {recorded === null ? null : recorded.calls.length === 0 ? (
        <p className="muted">
          No model reply on this branch has a cache prediction yet: ask the model (each reply is
          planned within the budget, and its usage confirms the plan).
        </p>
      ) : (
        <>
          <p data-testid="cache-totals">
            {recorded.totals.calls} calls: {tokens(recorded.totals.readTokens)} of{' '}
            {tokens(recorded.totals.inputTokens)} input read from the cache (
            {percent(recorded.totals.hitRate)}; predicted{' '}
            {percent(recorded.totals.predictedHitRate)}
            ).
          </p>
          <table className="model-calls-table" data-testid="cache-calls">
            <thead>
              <tr>
                <th scope="col">Call</th>
                <th scope="col">Predicted read</th>
                <th scope="col">Confirmed read</th>
                <th scope="col">Verdict</th>
              </tr>
            </thead>
            <tbody>
              {recorded.calls.map((call, index) => (
                <tr key={call.nodeId} data-testid="cache-call">
                  <td>
                    {index + 1} ({call.modelId})
                  </td>
                  <td data-testid="cache-predicted">
                    {tokens(call.predicted.readTokens)} of {tokens(call.predicted.inputTokens)}
                    <div className="muted small">{breakText(call.predicted.break)}</div>
                  </td>
                  <td data-testid="cache-confirmed">
                    {tokens(call.confirmed.readTokens)} of {tokens(call.confirmed.inputTokens)}
                    <div className="muted small">{breakText(call.confirmed.break)}</div>
                  </td>
                  <td>{STATUS[call.status] ?? call.status}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
