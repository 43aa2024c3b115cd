import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactElement, useState } from 'react';
import { api, type BranchComparisonView } from '../api';
import { describeError } from '../describe-error';
import { textOf } from '../message-text';
import { queryKeys } from '../state/query-keys';
import { DialogFrame } from './dialog-frame';
import { BranchIcon } from './icons';

/** Props of {@link CompareDialog}. */
export interface CompareDialogProps {
  /** The user the page acts as. */
  userId: string;
  chatId: string;
  /** Every branch of the chat, offered on both sides. */
  branches: readonly string[];
  left: string;
  right: string;
  onClose: () => void;
}

/** What a side's recorded model calls cost (usage recorded with `withUsage`). */
function spent(side: BranchComparisonView['left']): string {
  if (side.usage.calls === 0) return 'no model call recorded';
  const calls = `${side.usage.calls} model ${side.usage.calls === 1 ? 'call' : 'calls'}`;
  return side.cost === null ? `${calls}, price unknown` : `${calls}, $${side.cost.toFixed(6)}`;
}

/** Two branches side by side from their common ancestor (the engine's `compareBranches`). */
export function CompareDialog(props: CompareDialogProps): ReactElement {
  const [left, setLeft] = useState(props.left);
  const [right, setRight] = useState(props.right);
  const { chatId } = props;
  // The report on screen stays while another pair's is read.
  const comparison = useQuery({
    queryKey: queryKeys.compare(props.userId, chatId, left, right),
    queryFn: () => api.compare(chatId, left, right),
    placeholderData: keepPreviousData,
  });
  const report = comparison.error ? null : (comparison.data ?? null);
  const error = comparison.error ? describeError(comparison.error).message : null;

  const picker = (label: string, value: string, onChange: (next: string) => void) => (
    <select aria-label={label} value={value} onChange={(event) => onChange(event.target.value)}>
      {props.branches.map((branch) => (
        <option key={branch} value={branch}>
          {branch}
        </option>
      ))}
    </select>
  );

  return (
    <DialogFrame label="Compare branches" className="compare-dialog" onClose={props.onClose}>
      <header className="panel-header">
        <h2>Compare branches</h2>
        <span className="grow" />
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </header>
      {error ? <p className="inline-error dialog-error">{error}</p> : null}
      {report ? (
        <div className="compare-body">
          <p className="compare-ancestor" data-testid="common-ancestor">
            {report.commonAncestor ? (
              <>
                Both branches share the conversation up to{' '}
                <strong>{report.commonAncestor.role}</strong>: “
                {textOf(report.commonAncestor.parts).slice(0, 160)}”. Below, what each has after it.
              </>
            ) : (
              'These branches share no message.'
            )}
          </p>
          <div className="compare-columns">
            {(
              [
                ['Left branch', report.left, left, setLeft],
                ['Right branch', report.right, right, setRight],
              ] as const
            ).map(([label, side, value, set]) => (
              <section
                key={label}
                className="compare-side"
                aria-label={label.replace('branch', 'side')}
              >
                <header className="compare-side-head">
                  <BranchIcon />
                  {picker(label, value, set)}
                  <span className="grow" />
                  <span className="muted small" data-testid="side-figures">
                    {side.messages.length} {side.messages.length === 1 ? 'message' : 'messages'} ·{' '}
                    {side.tokens.toLocaleString('en-US')} tokens · {spent(side)}
                  </span>
                </header>
                {side.messages.length === 0 ? (
                  <p className="muted">Nothing after the common message.</p>
                ) : null}
                {side.messages.map((message) => (
                  <div key={message.id} className={`message ${message.role}`}>
                    <div className="message-role">{message.role}</div>
                    <div className="message-text">{textOf(message.parts)}</div>
                  </div>
                ))}
              </section>
            ))}
          </div>
        </div>
      ) : error ? null : (
        <p className="muted dialog-error">Comparing…</p>
      )}
    </DialogFrame>
  );
}
