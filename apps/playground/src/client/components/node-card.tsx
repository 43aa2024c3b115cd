import { type ReactElement, useEffect, useState } from 'react';
import type { GraphNodeView, VersionsAnswer } from '../api';
import { describeError } from '../describe-error';
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
  /** Other messages share its parent and role: it has versions (an edit, a regenerated reply). */
  hasVersions: boolean;
  /** The graph's size, so the versions are read again when it grows. */
  graphSize: number;
  onVersions: (nodeId: string) => Promise<VersionsAnswer>;
  /** Selects another version in the graph (and the inspector). */
  onSelectVersion: (nodeId: string) => void;
  /** Goes on with a version: switches to the branch at its newest leaf (or starts one there). */
  onOpenVersion: (leafNodeId: string) => void;
  /** The active branch's messages. */
  activeIds: ReadonlySet<string>;
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
  const { node, hasVersions, graphSize, onVersions } = props;
  const [versions, setVersions] = useState<VersionsAnswer['versions'] | null>(null);
  const [versionsError, setVersionsError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again when the graph grows
  useEffect(() => {
    setVersions(null);
    setVersionsError(null);
    if (!hasVersions) return;
    let current = true;
    onVersions(node.id).then(
      (answer) => {
        if (current) setVersions(answer.versions);
      },
      (failure: unknown) => {
        if (current) setVersionsError(describeError(failure).message);
      },
    );
    return () => {
      current = false;
    };
  }, [node.id, hasVersions, graphSize, onVersions]);
  const at = versions?.findIndex((version) => version.nodeId === node.id) ?? -1;
  const shown = at >= 0 && versions !== null ? versions[at] : undefined;
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
      {versionsError ? <p className="inline-error">{versionsError}</p> : null}
      {versions !== null && versions.length > 1 && shown !== undefined ? (
        <fieldset className="versions-switch" aria-label="Versions">
          <button
            type="button"
            aria-label="Previous version"
            disabled={at === 0}
            onClick={() => {
              const previous = versions[at - 1];
              if (previous) props.onSelectVersion(previous.nodeId);
            }}
          >
            ‹
          </button>
          <span data-testid="version-position">
            Version {at + 1} of {versions.length}
          </span>
          <button
            type="button"
            aria-label="Next version"
            disabled={at === versions.length - 1}
            onClick={() => {
              const next = versions[at + 1];
              if (next) props.onSelectVersion(next.nodeId);
            }}
          >
            ›
          </button>
          {props.activeIds.has(node.id) ? (
            <span className="muted small">on your branch</span>
          ) : (
            <button
              type="button"
              disabled={props.busy}
              title="Go on with this version: switch to the branch at its newest message (or start one there)"
              onClick={() => props.onOpenVersion(shown.leafNodeId)}
            >
              Continue this version
            </button>
          )}
        </fieldset>
      ) : null}
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
