import { type ReactElement, useState } from 'react';
import type { GraphNodeView } from '../api';
import { BranchIcon } from './icons';

/** Props of {@link NodeCard}. */
export interface NodeCardProps {
  node: GraphNodeView;
  /** The active branch's head (where the conversation continues). */
  isHead: boolean;
  /** On the active branch. */
  onBranch: boolean;
  /** Branches whose head this message is. */
  branches: readonly string[];
  /** Every branch whose history holds this message. */
  through: readonly string[];
  /** Checkpoints on this message. */
  checkpoints: readonly string[];
  busy: boolean;
  onClose: () => void;
  onRewind: () => void;
  onCheckpoint: (name: string) => void;
  /** A branch other than the current one through this message, to compare with, or null. */
  compareWith: string | null;
  onCompare: (branch: string) => void;
  /** For a compaction node, the messages its summary replaces (oldest first); else null. */
  span: GraphNodeView[] | null;
  /** Brings a compaction's originals into view in the graph. */
  onShowSpan: (span: GraphNodeView[]) => void;
}

/**
 * The inspector beside the graph: the selected message's text, where it sits (its branches and
 * checkpoints), and what can be done from it. It sits next to the canvas, never over it; Escape
 * or Close puts it away and gives the focus back to the node.
 */
export function NodeCard(props: NodeCardProps): ReactElement {
  const [name, setName] = useState('');
  const { node } = props;
  return (
    <aside className="node-card inspector" aria-label="Selected message">
      <header className="node-card-head">
        <span className={`dot ${node.role}`} />
        <strong>{node.role}</strong>
        <span className="muted small">message {node.sequence}</span>
        {props.isHead ? <span className="pill">current</span> : null}
        {!props.onBranch ? <span className="pill muted-pill">other branch</span> : null}
        <span className="grow" />
        <button
          type="button"
          className="icon"
          aria-label="Close the inspector"
          title="Close (Escape)"
          onClick={props.onClose}
        >
          ×
        </button>
      </header>
      {props.branches.length + props.checkpoints.length > 0 ? (
        <div className="graph-node-tags">
          {props.branches.map((branch) => (
            <span key={branch} className="tag head">
              <BranchIcon /> {branch}
            </span>
          ))}
          {props.checkpoints.map((checkpoint) => (
            <span key={checkpoint} className="tag checkpoint">
              ⚑ {checkpoint}
            </span>
          ))}
        </div>
      ) : null}
      <div className="node-card-text" data-testid="selected-message-text">
        {node.text || '(no text)'}
      </div>
      <dl className="inspector-facts">
        <dt>Node id</dt>
        <dd>
          <code>{node.id}</code>
        </dd>
        <dt>On branches</dt>
        <dd data-testid="branches-through">
          {props.through.length > 0 ? props.through.join(', ') : 'none (an abandoned fork)'}
        </dd>
        <dt>Characters</dt>
        <dd>{node.text.length.toLocaleString('en-US')}</dd>
      </dl>
      {node.compaction !== null && props.span !== null ? (
        <details className="compaction-originals">
          <summary>
            Summary of {node.compaction.coveredMessages} messages, saves{' '}
            {node.compaction.savedTokens} tokens per call: show the originals
          </summary>
          {props.span.length < node.compaction.coveredMessages ? (
            <p className="muted small">
              The newest {props.span.length} of them, oldest first; the rest are in the graph above.
            </p>
          ) : null}
          <ol className="originals" aria-label="Original messages">
            {props.span.map((original) => (
              <li key={original.id}>
                <span className={`dot ${original.role}`} /> {original.text || '(no text)'}
              </li>
            ))}
          </ol>
          <button type="button" onClick={() => props.onShowSpan(props.span ?? [])}>
            Show them in the graph
          </button>
        </details>
      ) : null}
      <div className="node-card-actions">
        <button
          type="button"
          className="primary"
          disabled={props.busy}
          onClick={props.onRewind}
          title="Start a new branch that continues from this message, and switch to it"
        >
          <BranchIcon /> Branch from here
        </button>
        {props.compareWith !== null ? (
          <button
            type="button"
            onClick={() => props.onCompare(props.compareWith as string)}
            title={`Compare ${props.compareWith} with the branch you are on, from the message they share`}
          >
            Compare with current
          </button>
        ) : null}
      </div>
      <form
        className="inline node-card-checkpoint"
        onSubmit={(event) => {
          event.preventDefault();
          if (name.trim() === '') return;
          props.onCheckpoint(name.trim());
          setName('');
        }}
      >
        <input
          aria-label="Checkpoint name"
          placeholder="checkpoint name"
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        <button type="submit" disabled={props.busy || name.trim() === ''}>
          Checkpoint here
        </button>
      </form>
    </aside>
  );
}
