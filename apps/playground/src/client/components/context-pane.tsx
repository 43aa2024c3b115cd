import type { JsonValue } from '@ctxgraph/fragments-core';
import { type MouseEvent, type ReactElement, useEffect, useRef, useState } from 'react';
import type { ChatView } from '../api';
import { describeError } from '../describe-error';
import { cleanFragment, EXAMPLE_CONTEXT, emptyFragment, FRAGMENT_SPECS } from '../fragment-catalog';
import { type Draft, draftOf, FragmentEditor, useDraftPreview } from './fragment-editor';
import { FragmentList } from './fragment-list';
import { closeMenuOnEscape } from './menu-keys';

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

/** The chat's context fragments: list, compose, edit, reorder, remove, import and export. */
export function ContextPane(props: ContextPaneProps): ReactElement {
  const fragments = props.view.context;
  const [draft, setDraft] = useState<Draft | null>(null);
  const [importing, setImporting] = useState<{ text: string; error: string | null } | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const editorRef = useRef<HTMLElement>(null);
  const [confirmingRemoval, setConfirmingRemoval] = useState(false);
  const [removed, setRemoved] = useState<JsonValue[] | null>(null);
  const openEditor = draft === null ? null : `${draft.index}:${draft.value.type}`;
  const pane = useRef<HTMLElement>(null);
  /**
   * Where the focus goes once an editor or a bar closes (its buttons go with it, which would
   * leave the focus on the page): the fragment it added or saved (its Edit button); for a new
   * draft dropped, the Add fragment menu it came from; for the JSON loader and the removal's
   * bars, the ⋯ menu they came from, or the Undo the removal offers; for the removal's question,
   * its Cancel (the item that asked is hidden in the closed menu).
   */
  const [focusAfter, setFocusAfter] = useState<number | 'add' | 'menu' | 'undo' | 'confirm' | null>(
    null,
  );

  // The row appears once the saved list comes back: wait for it, then focus it once.
  // biome-ignore lint/correctness/useExhaustiveDependencies: look again whenever the list changes
  useEffect(() => {
    if (focusAfter === null || draft !== null) return;
    const selector =
      focusAfter === 'add'
        ? 'select[aria-label="Add fragment"]'
        : focusAfter === 'menu'
          ? 'summary[aria-label="Context menu"]'
          : focusAfter === 'undo'
            ? '.undo-bar button'
            : focusAfter === 'confirm'
              ? '[aria-label="Confirm removal"] button[data-safe]'
              : `.fragment-list > li:nth-child(${focusAfter + 1}) button[aria-label^="Edit:"]`;
    const target = pane.current?.querySelector<HTMLElement>(selector);
    if (target) {
      target.focus();
      setFocusAfter(null);
    }
  }, [focusAfter, draft, fragments, removed]);

  /** Drops the open draft, and says where the focus goes. */
  const closeDraft = (focus: number | 'add') => {
    setDraft(null);
    setFocusAfter(focus);
  };

  // Bring the editor into view when one opens (it sits below a possibly long list).
  useEffect(() => {
    if (openEditor !== null) editorRef.current?.scrollIntoView({ block: 'nearest' });
  }, [openEditor]);
  useDraftPreview(draft, fragments, props.onPreview);

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
    else closeDraft(draft.index ?? list.length - 1);
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
    else {
      setImporting(null);
      setFocusAfter('menu');
    }
  };

  return (
    <section
      className={draft || importing ? 'panel context-panel drafting' : 'panel context-panel'}
      aria-label="Context"
      ref={pane}
    >
      <header className="panel-header">
        <h2>Context</h2>
        <span className="count">{fragments.length}</span>
        <span className="grow" />
        <select
          aria-label="Add fragment"
          value=""
          onChange={(event) => {
            if (event.target.value) setDraft(draftOf(null, emptyFragment(event.target.value)));
          }}
        >
          <option value="">+ Add fragment…</option>
          {FRAGMENT_SPECS.map((spec) => (
            <option key={spec.type} value={spec.type}>
              {spec.label}
            </option>
          ))}
        </select>
        <details className="menu" onKeyDown={closeMenuOnEscape}>
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
                // The question takes the focus (the menu item it came from is hidden now).
                setFocusAfter('confirm');
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
                setFocusAfter('menu');
                void saveList([]).then((error) => {
                  setListError(error);
                  if (error === null) {
                    setRemoved(before);
                    setFocusAfter('undo');
                  }
                });
              }}
            >
              Remove all
            </button>
            <button
              type="button"
              data-safe
              onClick={() => {
                setConfirmingRemoval(false);
                setFocusAfter('menu');
              }}
            >
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
                  if (error === null) {
                    setRemoved(null);
                    setFocusAfter('menu');
                  }
                });
              }}
            >
              Undo
            </button>
            <button
              type="button"
              className="icon"
              aria-label="Dismiss"
              onClick={() => {
                setRemoved(null);
                setFocusAfter('menu');
              }}
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
        <FragmentList
          fragments={fragments}
          editing={draft?.index ?? null}
          onMove={move}
          onEdit={(index, item) => setDraft(draftOf(index, item))}
          onRemove={(index) => void change(fragments.filter((_, at) => at !== index))}
        />
        {draft ? (
          <FragmentEditor
            draft={draft}
            onDraft={(next) => {
              if (next === null) closeDraft(draft.index ?? 'add');
              else setDraft(next);
            }}
            onCommit={() => void commitDraft()}
            editorRef={editorRef}
          />
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
              <button
                type="button"
                onClick={() => {
                  setImporting(null);
                  setFocusAfter('menu');
                }}
              >
                Cancel
              </button>
            </div>
          </section>
        ) : null}
      </div>
    </section>
  );
}
