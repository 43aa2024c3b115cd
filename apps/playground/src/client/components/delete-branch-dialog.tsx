import { useQuery } from '@tanstack/react-query';
import { type ReactElement, useEffect, useState } from 'react';
import { api } from '../api';
import { describeError } from '../describe-error';
import { queryKeys } from '../state/query-keys';
import { DialogFrame } from './dialog-frame';

/** Props of {@link DeleteBranchDialog}. */
export interface DeleteBranchDialogProps {
  /** The user the page acts as. */
  userId: string;
  chatId: string;
  /** Every branch of the chat. */
  branches: readonly string[];
  /** The active branch (deleting it needs another to switch to). */
  activeBranch: string;
  /** The branch offered first. */
  initial: string;
  /** Deletes for real; resolves once done (the page shows the chat after). */
  onDelete: (branch: string, activate: string | undefined) => Promise<boolean>;
  onClose: () => void;
}

function plural(count: number, noun: string): string {
  return `${count.toLocaleString('en-US')} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * Deletes a branch after showing what would go: the engine's `deleteBranch` with `dryRun` first
 * (nothing changes), then for real once confirmed.
 */
export function DeleteBranchDialog(props: DeleteBranchDialogProps): ReactElement {
  const [branch, setBranch] = useState(props.initial);
  const others = props.branches.filter((name) => name !== branch);
  const [activate, setActivate] = useState(others[0] ?? '');
  const deletingActive = branch === props.activeBranch;
  const target = deletingActive ? activate : undefined;
  const { chatId } = props;

  useEffect(() => {
    if (!others.includes(activate)) setActivate(others[0] ?? '');
  }, [others, activate]);

  // Set while the branch is deleted for real: the dry run is not read again for a branch that is
  // going (the deletion marks the chat's queries stale).
  const [deleting, setDeleting] = useState(false);
  // What would go: the engine's deleteBranch with dryRun, which changes nothing.
  const dryRun = useQuery({
    queryKey: queryKeys.branchDeletion(props.userId, chatId, branch, target),
    queryFn: () =>
      api.deleteBranch(chatId, branch, { ...(target ? { activate: target } : {}), dryRun: true }),
    enabled: !deleting && !(deletingActive && !target),
  });
  const preview = dryRun.data?.result ?? null;
  const error = dryRun.error ? describeError(dryRun.error).message : null;

  return (
    <DialogFrame label="Delete a branch" className="small-dialog" onClose={props.onClose}>
      <header className="panel-header">
        <h2>Delete a branch</h2>
        <span className="grow" />
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </header>
      <div className="dialog-body">
        <label className="field">
          <span className="field-label">Branch to delete</span>
          <select
            aria-label="Branch to delete"
            value={branch}
            onChange={(event) => setBranch(event.target.value)}
          >
            {props.branches.map((name) => (
              <option key={name} value={name}>
                {name}
                {name === props.activeBranch ? ' (you are on it)' : ''}
              </option>
            ))}
          </select>
        </label>
        {deletingActive ? (
          <label className="field">
            <span className="field-label">You are on it: switch to</span>
            <select
              aria-label="Branch to switch to"
              value={activate}
              onChange={(event) => setActivate(event.target.value)}
            >
              {others.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {error ? <p className="inline-error">{error}</p> : null}
        {preview ? (
          <p className="deletion-preview" data-testid="deletion-preview">
            Deleting <strong>{branch}</strong> removes{' '}
            {preview.nodes === 0
              ? 'no message (every one of its messages is still on another branch or checkpoint)'
              : `${plural(preview.nodes, 'message')} that only it reached (${plural(preview.bytes, 'byte')})`}
            . Afterwards you are on <strong>{preview.activeBranch}</strong>. Nothing has changed
            yet.
          </p>
        ) : null}
        <div className="editor-actions">
          <button
            type="button"
            className="danger-solid"
            disabled={preview === null}
            onClick={() => {
              setDeleting(true);
              void props.onDelete(branch, target).then((done) => {
                if (done) props.onClose();
                else setDeleting(false);
              });
            }}
          >
            Delete {branch}
          </button>
        </div>
      </div>
    </DialogFrame>
  );
}
