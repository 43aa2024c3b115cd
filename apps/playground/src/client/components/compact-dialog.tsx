import { type ReactElement, useState } from 'react';
import { DialogFrame } from './dialog-frame';

/** Props of {@link CompactDialog}. */
export interface CompactDialogProps {
  /** The configured model, which writes the summary when none is written here; null without one. */
  modelId: string | null;
  /** How many messages the active branch shows now. */
  messages: number;
  /** Compacts; resolves to true once done. */
  onCompact: (keepTurns: number, summary: string | undefined) => Promise<boolean>;
  onClose: () => void;
}

/**
 * Compacts the active branch (the engine's `compact()`): the older messages are replaced by a
 * summary, written by the model or, without one, by hand; the last turns stay as they are.
 */
export function CompactDialog(props: CompactDialogProps): ReactElement {
  const [keepTurns, setKeepTurns] = useState(2);
  const [summary, setSummary] = useState('');
  // Set once the summary was typed in or compacting was tried: the missing summary is marked only
  // then, not before anything is typed.
  const [touched, setTouched] = useState(false);
  const needsSummary = props.modelId === null;
  const blank = needsSummary && summary.trim() === '';
  const missing = touched && blank;
  return (
    <DialogFrame label="Compact the conversation" className="small-dialog" onClose={props.onClose}>
      <header className="panel-header">
        <h2>Compact the conversation</h2>
        <span className="grow" />
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </header>
      <form
        className="dialog-body"
        onSubmit={(event) => {
          event.preventDefault();
          if (blank) {
            setTouched(true);
            return;
          }
          void props
            .onCompact(keepTurns, summary.trim() === '' ? undefined : summary.trim())
            .then((done) => {
              if (done) props.onClose();
            });
        }}
      >
        <p className="muted">
          The older messages of this branch ({props.messages} shown now) are replaced by a summary
          in what the model receives; they stay in the graph, and the other branches are untouched.
        </p>
        <label className="field">
          <span className="field-label">Keep the last turns as they are</span>
          <input
            type="number"
            min={0}
            max={1000}
            aria-label="Turns to keep"
            value={keepTurns}
            onChange={(event) => setKeepTurns(Math.max(0, Number(event.target.value) || 0))}
          />
        </label>
        <label className={missing ? 'field invalid' : 'field'}>
          <span className="field-label">
            Summary
            {needsSummary ? (
              <span className="required">* (no model is configured: write it yourself)</span>
            ) : (
              <span className="muted"> (leave empty and {props.modelId} writes it)</span>
            )}
          </span>
          <textarea
            rows={5}
            aria-label="Summary"
            aria-invalid={missing}
            aria-describedby="compact-summary-problem"
            placeholder="What the conversation so far established…"
            value={summary}
            onChange={(event) => {
              setSummary(event.target.value);
              setTouched(true);
            }}
          />
        </label>
        <p id="compact-summary-problem" className="inline-error" role="status">
          {missing ? 'Write the summary: no model is configured to write it.' : ''}
        </p>
        <div className="editor-actions">
          <button type="submit" className="primary" disabled={missing}>
            Compact
          </button>
        </div>
      </form>
    </DialogFrame>
  );
}
