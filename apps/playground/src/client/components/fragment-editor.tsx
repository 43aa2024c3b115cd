import type { JsonValue } from '@ctxgraph/fragments-core';
import { type ReactElement, type RefObject, useEffect, useRef } from 'react';
import { api, type FlatFragment } from '../api';
import { describeError } from '../describe-error';
import { cleanFragment, draftProblems, specFor } from '../fragment-catalog';
import type { DraftPreview } from './context-pane';
import { FragmentForm } from './fragment-form';

/** A fragment being written, as a form or as JSON, before it joins the context. */
export interface Draft {
  /** Where it goes: an index to replace, or null to append. */
  index: number | null;
  value: FlatFragment;
  mode: 'form' | 'json';
  json: string;
  error: string | null;
  /**
   * Something was typed in the draft, or adding it was tried: only then are its problems
   * (blank required fields, JSON not yet valid) shown, so a new form starts without errors.
   */
  touched: boolean;
}

/** A draft of `value`, to go at `index` (null: at the end): a form when the type has one. */
export function draftOf(index: number | null, value: FlatFragment): Draft {
  return {
    index,
    value,
    mode: specFor(value.type) ? 'form' : 'json',
    json: JSON.stringify(value, null, 2),
    error: null,
    touched: false,
  };
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

/**
 * Tells `onPreview` what the context would render as with the draft in place (null: no draft).
 */
export function useDraftPreview(
  draft: Draft | null,
  fragments: readonly JsonValue[],
  onPreview: (preview: DraftPreview | null) => void,
): void {
  const previewSequence = useRef(0);
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
      // Before anything is typed, the page says the draft is not previewed yet, not what it lacks.
      onPreview({ kind: 'incomplete', problems: draft.touched ? problems : [] });
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
}

/** Props of {@link FragmentEditor}. */
export interface FragmentEditorProps {
  draft: Draft;
  /** The draft changed, or (null) was dropped. */
  onDraft: (draft: Draft | null) => void;
  /** Puts the draft into the context (the pane saves it). */
  onCommit: () => void;
  editorRef: RefObject<HTMLElement | null>;
}

/** The editor of a draft: the form or the JSON, what it still lacks, and its actions. */
export function FragmentEditor(props: FragmentEditorProps): ReactElement {
  const { draft, onDraft } = props;
  const draftIssues = problemsOf(draft);
  const shownIssues = draft.touched ? draftIssues : [];
  const switchMode = (mode: Draft['mode']) => {
    if (draft.mode === mode) return;
    if (mode === 'json') {
      onDraft({
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
      onDraft({ ...draft, mode, value, error: null });
    } catch (error) {
      onDraft({ ...draft, error: `Cannot show this as a form: ${messageOf(error)}` });
    }
  };

  return (
    <section className="editor" aria-label="Fragment editor" ref={props.editorRef}>
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
          showProblems={draft.touched}
          onChange={(value) => onDraft({ ...draft, value, error: null, touched: true })}
        />
      ) : (
        <textarea
          className="code"
          rows={10}
          aria-label="Fragment JSON"
          value={draft.json}
          onChange={(event) =>
            onDraft({ ...draft, json: event.target.value, error: null, touched: true })
          }
        />
      )}
      {shownIssues.length > 0 ? (
        <ul className="draft-problems" data-testid="draft-problems">
          {shownIssues.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      ) : null}
      {draft.error ? <p className="inline-error">{draft.error}</p> : null}
      <div className="editor-actions">
        <button
          type="button"
          className="primary"
          // Before anything is typed the button stays enabled: pressing it shows what is missing.
          disabled={shownIssues.length > 0}
          title={shownIssues.length > 0 ? 'Fill the fields marked required first' : undefined}
          onClick={() => {
            if (draftIssues.length > 0) onDraft({ ...draft, touched: true });
            else props.onCommit();
          }}
        >
          {draft.index === null ? 'Add to context' : 'Save'}
        </button>
        <button type="button" onClick={() => onDraft(null)}>
          Cancel
        </button>
      </div>
    </section>
  );
}
