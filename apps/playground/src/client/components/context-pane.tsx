import type { JsonValue } from '@ctxgraph/fragments-core';
import { type MouseEvent, type ReactElement, useEffect, useRef, useState } from 'react';
import { api, type ChatView, type FlatFragment } from '../api';
import { describeError } from '../describe-error';
import {
  cleanFragment,
  draftProblems,
  EXAMPLE_CONTEXT,
  emptyFragment,
  FRAGMENT_SPECS,
  specFor,
  summarize,
} from '../fragment-catalog';
import { FragmentForm } from './fragment-form';

/** Props of {@link ContextPane}. */
export interface ContextPaneProps {
  view: ChatView;
  /** Saves the whole list; rejects with the server's error. */
  onSave: (fragments: JsonValue[]) => Promise<void>;
  /** The preview of an unsaved draft (null when no draft is open). */
  onPreview: (preview: DraftPreview | null) => void;
}

/**
 * What the prompt panel shows of an open draft: its prompts, what it still lacks (checked on the
 * page, so an incomplete draft sends no request), or why the server refused it.
 */
export type DraftPreview =
  | { kind: 'ready'; prompts: ChatView['prompts'] }
  | { kind: 'incomplete'; problems: string[] }
  | { kind: 'refused'; message: string };

interface Draft {
  /** Where it goes: an index to replace, or null to append. */
  index: number | null;
  value: FlatFragment;
  mode: 'form' | 'json';
  json: string;
  error: string | null;
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}

/** Closes the ⋯ menu (a <details>) once one of its items was chosen. */
function closeMenu(event: MouseEvent<HTMLElement>): void {
  event.currentTarget.closest('details')?.removeAttribute('open');
}

function messageOf(error: unknown): string {
  return describeError(error).message;
}

/** What the draft lacks, checked on the page: a JSON syntax error, or blank required fields. */
function problemsOf(draft: Draft): string[] {
  if (draft.mode === 'json') {
    try {
      JSON.parse(draft.json);
      return [];
    } catch (error) {
      return [`Not valid JSON yet (${error instanceof Error ? error.message : String(error)})`];
    }
  }
  return draftProblems(draft.value);
}

/** The chat's context fragments: list, compose, edit, reorder, remove, import and export. */
export function ContextPane(props: ContextPaneProps): ReactElement {
  const fragments = props.view.context;
  const [draft, setDraft] = useState<Draft | null>(null);
  const [importing, setImporting] = useState<{ text: string; error: string | null } | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const previewSequence = useRef(0);
  const editorRef = useRef<HTMLElement>(null);
  const [confirmingRemoval, setConfirmingRemoval] = useState(false);
  const [removed, setRemoved] = useState<JsonValue[] | null>(null);
  const openEditor = draft === null ? null : `${draft.index}:${draft.value.type}`;
  const draftIssues = draft === null ? [] : problemsOf(draft);

  // Bring the editor into view when one opens (it sits below a possibly long list).
  useEffect(() => {
    if (openEditor !== null) editorRef.current?.scrollIntoView({ block: 'nearest' });
  }, [openEditor]);
  const { onPreview } = props;

  // Preview the list as it would be with the draft, a moment after the last keystroke. A draft
  // that is incomplete is said so at once and sends nothing.
  useEffect(() => {
    if (draft === null) {
      onPreview(null);
      return;
    }
    const sequence = ++previewSequence.current;
    const problems = problemsOf(draft);
    if (problems.length > 0) {
      onPreview({ kind: 'incomplete', problems });
      return;
    }
    const timer = setTimeout(() => {
      const candidate =
        draft.mode === 'json' ? (JSON.parse(draft.json) as JsonValue) : cleanFragment(draft.value);
      const list = [...fragments];
      if (draft.index === null) list.push(candidate);
      else list[draft.index] = candidate;
      api
        .preview(list)
        .then((result) => {
          if (sequence === previewSequence.current)
            onPreview({ kind: 'ready', prompts: result.prompts });
        })
        .catch((error: unknown) => {
          if (sequence === previewSequence.current)
            onPreview({ kind: 'refused', message: messageOf(error) });
        });
    }, 300);
    return () => clearTimeout(timer);
  }, [draft, fragments, onPreview]);

  const open = (index: number | null, value: FlatFragment) =>
    setDraft({
      index,
      value,
      mode: specFor(value.type) ? 'form' : 'json',
      json: JSON.stringify(value, null, 2),
      error: null,
    });

  const saveList = async (list: JsonValue[]): Promise<string | null> => {
    try {
      await props.onSave(list);
      return null;
    } catch (error) {
      return messageOf(error);
    }
  };

  const commitDraft = async () => {
    if (draft === null) return;
    let value: JsonValue;
    if (draft.mode === 'json') {
      try {
        value = JSON.parse(draft.json) as JsonValue;
      } catch (error) {
        setDraft({ ...draft, error: `Not valid JSON: ${messageOf(error)}` });
        return;
      }
    } else {
      value = cleanFragment(draft.value);
    }
    const list = [...fragments];
    if (draft.index === null) list.push(value);
    else list[draft.index] = value;
    const error = await saveList(list);
    if (error) setDraft({ ...draft, error });
    else setDraft(null);
  };

  const change = async (list: JsonValue[]) => {
    setListError(await saveList(list));
  };

  const move = (index: number, by: number) => {
    const list = [...fragments];
    const [item] = list.splice(index, 1);
    if (item === undefined) return;
    list.splice(index + by, 0, item);
    void change(list);
  };

  const switchMode = (mode: Draft['mode']) => {
    if (draft === null || draft.mode === mode) return;
    if (mode === 'json') {
      setDraft({
        ...draft,
        mode,
        json: JSON.stringify(cleanFragment(draft.value), null, 2),
        error: null,
      });
      return;
    }
    try {
      const value = JSON.parse(draft.json) as FlatFragment;
      if (
        typeof value !== 'object' ||
        value === null ||
        typeof value.type !== 'string' ||
        !specFor(value.type)
      ) {
        throw new Error('the form needs an object with a known "type"');
      }
      setDraft({ ...draft, mode, value, error: null });
    } catch (error) {
      setDraft({ ...draft, error: `Cannot show this as a form: ${messageOf(error)}` });
    }
  };

  const importJson = async () => {
    if (importing === null) return;
    let list: unknown;
    try {
      list = JSON.parse(importing.text);
    } catch (error) {
      setImporting({ ...importing, error: `Not valid JSON: ${messageOf(error)}` });
      return;
    }
    const error = await saveList((Array.isArray(list) ? list : [list]) as JsonValue[]);
    if (error) setImporting({ ...importing, error });
    else setImporting(null);
  };

  return (
    <section
      className={draft || importing ? 'panel context-panel drafting' : 'panel context-panel'}
      aria-label="Context"
    >
      <header className="panel-header">
        <h2>Context</h2>
        <span className="count">{fragments.length}</span>
        <span className="grow" />
        <select
          aria-label="Add fragment"
          value=""
          onChange={(event) => {
            if (event.target.value) open(null, emptyFragment(event.target.value));
          }}
        >
          <option value="">+ Add fragment…</option>
          {FRAGMENT_SPECS.map((spec) => (
            <option key={spec.type} value={spec.type}>
              {spec.label}
            </option>
          ))}
        </select>
        <details className="menu">
          <summary aria-label="Context menu">⋯</summary>
          <div className="menu-items">
            <button
              type="button"
              onClick={(event) => {
                closeMenu(event);
                setImporting({ text: JSON.stringify(fragments, null, 2), error: null });
              }}
            >
              Load JSON…
            </button>
            <button
              type="button"
              onClick={(event) => {
                closeMenu(event);
                download(`context-${props.view.chat.id}.json`, JSON.stringify(fragments, null, 2));
              }}
            >
              Save JSON file
            </button>
            <button
              type="button"
              onClick={(event) => {
                closeMenu(event);
                void change([...fragments, ...EXAMPLE_CONTEXT]);
              }}
            >
              Add example fragments
            </button>
            <button
              type="button"
              className="danger"
              disabled={fragments.length === 0}
              onClick={(event) => {
                closeMenu(event);
                setConfirmingRemoval(true);
              }}
            >
              Remove all
            </button>
          </div>
        </details>
      </header>
      <div className="panel-body">
        {listError ? <p className="inline-error">{listError}</p> : null}
        {confirmingRemoval ? (
          <div className="confirm-bar" role="alertdialog" aria-label="Confirm removal">
            <span>
              Remove all {fragments.length} fragments from this chat’s context? You can undo it
              right after.
            </span>
            <button
              type="button"
              className="danger-solid"
              onClick={() => {
                const before = [...fragments];
                setConfirmingRemoval(false);
                void saveList([]).then((error) => {
                  setListError(error);
                  if (error === null) setRemoved(before);
                });
              }}
            >
              Remove all
            </button>
            <button type="button" onClick={() => setConfirmingRemoval(false)}>
              Cancel
            </button>
          </div>
        ) : null}
        {removed !== null && fragments.length === 0 ? (
          <div className="confirm-bar undo-bar" role="status">
            <span>Removed {removed.length} fragments.</span>
            <button
              type="button"
              onClick={() => {
                const list = removed;
                void saveList(list).then((error) => {
                  setListError(error);
                  if (error === null) setRemoved(null);
                });
              }}
            >
              Undo
            </button>
            <button
              type="button"
              className="icon"
              aria-label="Dismiss"
              onClick={() => setRemoved(null)}
            >
              ×
            </button>
          </div>
        ) : null}
        {fragments.length === 0 && draft === null ? (
          <div className="empty">
            <p>
              No context yet. Add a fragment (role, hint, term, a nested group…) and watch the
              system prompt below.
            </p>
            <button type="button" onClick={() => void change([...EXAMPLE_CONTEXT])}>
              Load an example context
            </button>
          </div>
        ) : null}
        <ol className="fragment-list">
          {fragments.map((item, index) => {
            const type =
              typeof item === 'object' && item !== null && !Array.isArray(item)
                ? String(item.type)
                : 'text';
            const editing = draft?.index === index;
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: the list order is the identity here
              <li key={index} className={editing ? 'editing' : undefined} data-type={type}>
                <span className={`badge type-${type}`}>{specFor(type)?.label ?? type}</span>
                <span className="summary" title={summarize(item)}>
                  {summarize(item)}
                </span>
                <span className="row-actions">
                  <button
                    type="button"
                    className="icon"
                    title="Move up"
                    disabled={index === 0}
                    onClick={() => move(index, -1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    className="icon"
                    title="Move down"
                    disabled={index === fragments.length - 1}
                    onClick={() => move(index, 1)}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    className="icon"
                    title="Edit"
                    onClick={() => open(index, item as FlatFragment)}
                  >
                    ✎
                  </button>
                  <button
                    type="button"
                    className="icon"
                    title="Remove"
                    onClick={() => void change(fragments.filter((_, at) => at !== index))}
                  >
                    ×
                  </button>
                </span>
              </li>
            );
          })}
        </ol>
        {draft ? (
          <section className="editor" aria-label="Fragment editor" ref={editorRef}>
            <div className="editor-head">
              <strong>
                {draft.index === null ? 'New' : 'Edit'}{' '}
                {specFor(draft.value.type)?.label ?? draft.value.type}
              </strong>
              <code className="muted">{specFor(draft.value.type)?.builder}</code>
              <span className="grow" />
              <div className="segmented">
                <button
                  type="button"
                  className={draft.mode === 'form' ? 'active' : ''}
                  onClick={() => switchMode('form')}
                >
                  Form
                </button>
                <button
                  type="button"
                  className={draft.mode === 'json' ? 'active' : ''}
                  onClick={() => switchMode('json')}
                >
                  JSON
                </button>
              </div>
            </div>
            {draft.mode === 'form' ? (
              <FragmentForm
                value={draft.value}
                onChange={(value) => setDraft({ ...draft, value, error: null })}
              />
            ) : (
              <textarea
                className="code"
                rows={10}
                aria-label="Fragment JSON"
                value={draft.json}
                onChange={(event) => setDraft({ ...draft, json: event.target.value, error: null })}
              />
            )}
            {draftIssues.length > 0 ? (
              <ul className="draft-problems" data-testid="draft-problems">
                {draftIssues.map((problem) => (
                  <li key={problem}>{problem}</li>
                ))}
              </ul>
            ) : null}
            {draft.error ? <p className="inline-error">{draft.error}</p> : null}
            <div className="editor-actions">
              <button
                type="button"
                className="primary"
                disabled={draftIssues.length > 0}
                title={draftIssues.length > 0 ? 'Fill the fields marked required first' : undefined}
                onClick={() => void commitDraft()}
              >
                {draft.index === null ? 'Add to context' : 'Save'}
              </button>
              <button type="button" onClick={() => setDraft(null)}>
                Cancel
              </button>
            </div>
          </section>
        ) : null}
        {importing ? (
          <section className="editor" aria-label="Load context JSON">
            <div className="editor-head">
              <strong>Load context JSON</strong>
              <span className="muted">
                a list of serialized fragments (fromFragment output); replaces the context
              </span>
            </div>
            <textarea
              className="code"
              rows={12}
              aria-label="Context JSON"
              value={importing.text}
              onChange={(event) => setImporting({ text: event.target.value, error: null })}
            />
            {importing.error ? <p className="inline-error">{importing.error}</p> : null}
            <div className="editor-actions">
              <button type="button" className="primary" onClick={() => void importJson()}>
                Replace context
              </button>
              <button type="button" onClick={() => setImporting(null)}>
                Cancel
              </button>
            </div>
          </section>
        ) : null}
      </div>
    </section>
  );
}
