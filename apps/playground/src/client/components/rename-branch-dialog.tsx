import { type FormEvent, type ReactElement, useState } from 'react';
import { DialogFrame } from './dialog-frame';

/** Props of {@link RenameBranchDialog}. */
export interface RenameBranchDialogProps {
  /** Every branch of the chat. */
  branches: readonly string[];
  /** The branch offered first (the one you are on). */
  initial: string;
  /** Renames for real; resolves to true once done (a refusal is shown as a notice). */
  onRename: (from: string, to: string) => Promise<boolean>;
  onClose: () => void;
}

/** What is wrong with `to` as the new name of `from`, in plain words, or null. */
function renameProblem(from: string, to: string, branches: readonly string[]): string | null {
  const name = to.trim();
  if (name === '') return 'Type a new name for the branch.';
  if (name === from) return `The branch is already called “${from}”. Type another name.`;
  if (name.length > 200) return 'That name is longer than 200 characters. Shorten it.';
  if (branches.includes(name))
    return `There is already a branch called “${name}” in this chat. Pick another name.`;
  return null;
}

/**
 * Renames a branch (the engine's `renameBranch`): its messages, head and checkpoints stay, and
 * when it is the branch you are on, you stay on it under its new name. Keyboard first: the name
 * field has the focus, Enter renames, Escape closes. A problem shows once you have typed or
 * tried to rename, never before.
 */
export function RenameBranchDialog(props: RenameBranchDialogProps): ReactElement {
  const [from, setFrom] = useState(props.initial);
  const [to, setTo] = useState(props.initial);
  const [touched, setTouched] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const problem = renameProblem(from, to, props.branches);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (problem !== null || renaming) return;
    setRenaming(true);
    void props.onRename(from, to.trim()).then((done) => {
      if (done) props.onClose();
      else setRenaming(false);
    });
  };

  return (
    <DialogFrame label="Rename a branch" className="small-dialog" onClose={props.onClose}>
      <header className="panel-header">
        <h2>Rename a branch</h2>
        <span className="grow" />
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </header>
      <form className="dialog-body" onSubmit={submit} noValidate>
        <label className="field">
          <span className="field-label">Branch to rename</span>
          <select
            aria-label="Branch to rename"
            value={from}
            onChange={(event) => {
              setFrom(event.target.value);
              if (!touched) setTo(event.target.value);
            }}
          >
            {props.branches.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">New name</span>
          <input
            aria-label="New branch name"
            // biome-ignore lint/a11y/noAutofocus: the dialog opens to type the name
            autoFocus
            value={to}
            maxLength={250}
            aria-invalid={touched && problem !== null}
            aria-describedby="rename-branch-problem"
            onFocus={(event) => event.target.select()}
            onChange={(event) => {
              setTo(event.target.value);
              setTouched(true);
            }}
          />
        </label>
        <p id="rename-branch-problem" className="inline-error" role="status">
          {touched && problem !== null ? problem : ''}
        </p>
        <p className="muted small">
          Its messages and checkpoints stay as they are; if you are on it, you stay on it.
        </p>
        <div className="editor-actions">
          <button type="submit" disabled={renaming}>
            Rename {from}
          </button>
        </div>
      </form>
    </DialogFrame>
  );
}
