import { type ReactElement, useRef } from 'react';
import type { ChatView } from '../api';
import { BranchIcon } from './icons';
import { closeMenuOnEscape } from './menu-keys';

/** Props of {@link GraphToolbar}. */
export interface GraphToolbarProps {
  view: ChatView;
  busy: boolean;
  onSwitch: (branch: string) => void;
  onBtw: () => void;
  onCompare: (left: string, right: string) => void;
  onDeleteBranch: (branch: string) => void;
  /** Opens the rename dialog for a branch. */
  onRenameBranch: (branch: string) => void;
  onRestore: (name: string) => void;
  /** Selects a message in the graph and brings it into view. */
  onFocus: (messageId: string) => void;
}

/** The graph's toolbar: the branch you are on, side branch, compare, delete, and checkpoints. */
export function GraphToolbar(props: GraphToolbarProps): ReactElement {
  const { view } = props;
  const headId = view.headMessageId;
  const checkpointMenu = useRef<HTMLDetailsElement>(null);
  return (
    <div className="graph-toolbar">
      <label className="inline" title="The branch you are on">
        <BranchIcon />
        <select
          aria-label="Switch branch"
          value={view.branch}
          disabled={props.busy}
          onChange={(event) => props.onSwitch(event.target.value)}
        >
          {view.graph.branches.map((branch) => (
            <option key={branch.name} value={branch.name}>
              {branch.name}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        disabled={props.busy || headId === null}
        onClick={props.onBtw}
        title="Side branch (“by the way”): start a new branch at the current message for a digression, and stay on this one"
      >
        Side branch
      </button>
      <button
        type="button"
        disabled={view.graph.branches.length < 2}
        title="Two branches side by side, from the message they share"
        onClick={() =>
          props.onCompare(
            view.branch,
            view.graph.branches.find((branch) => branch.name !== view.branch)?.name ?? view.branch,
          )
        }
      >
        Compare…
      </button>
      <button
        type="button"
        disabled={props.busy}
        title="Give a branch a new name (its messages stay; if you are on it, you stay on it). F2 from anywhere."
        aria-keyshortcuts="F2"
        onClick={() => props.onRenameBranch(view.branch)}
      >
        Rename…
      </button>
      <button
        type="button"
        disabled={props.busy || view.graph.branches.length < 2}
        title="Delete a branch and the messages only it reached (shows what would go first)"
        onClick={() => props.onDeleteBranch(view.branch)}
      >
        Delete…
      </button>
      <span className="divider" />
      <details className="menu toolbar-menu" ref={checkpointMenu} onKeyDown={closeMenuOnEscape}>
        <summary aria-label="Checkpoints">
          ⚑ Checkpoints <span className="count">{view.graph.checkpoints.length}</span> ▾
        </summary>
        <div className="menu-items checkpoint-menu">
          <button
            type="button"
            disabled={headId === null}
            onClick={() => {
              checkpointMenu.current?.removeAttribute('open');
              if (headId !== null) props.onFocus(headId);
            }}
            title="Select the current message; name it in its card"
          >
            New checkpoint at the current message…
          </button>
          {view.graph.checkpoints.length === 0 ? (
            <p className="muted small menu-note">No checkpoints yet.</p>
          ) : null}
          {view.graph.checkpoints.map((checkpoint) => (
            <div key={checkpoint.name} className="checkpoint-row">
              <button
                type="button"
                className="checkpoint-name"
                title="Show this checkpoint's message"
                onClick={() => {
                  checkpointMenu.current?.removeAttribute('open');
                  props.onFocus(checkpoint.messageId);
                }}
              >
                ⚑ {checkpoint.name}
              </button>
              <button
                type="button"
                disabled={props.busy}
                aria-label={`Restore ${checkpoint.name}`}
                title="Go back to this checkpoint, on a new branch"
                onClick={() => {
                  checkpointMenu.current?.removeAttribute('open');
                  props.onRestore(checkpoint.name);
                }}
              >
                Restore
              </button>
            </div>
          ))}
        </div>
      </details>
    </div>
  );
}
