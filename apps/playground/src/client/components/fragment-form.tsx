import type { JsonValue } from '@ctxgraph/fragments-core';
import type { ReactElement } from 'react';
import type { FlatFragment } from '../api';
import {
  emptyFragment,
  type FieldSpec,
  FRAGMENT_SPECS,
  fieldMissing,
  isFlatFragment,
  specFor,
} from '../fragment-catalog';

/** Props of {@link FragmentForm}. */
export interface FragmentFormProps {
  value: FlatFragment;
  onChange: (value: FlatFragment) => void;
  /** How deep this form is nested (indents and limits the menu). */
  depth?: number;
  /**
   * Whether blank required fields are marked: the editor turns it on once something was typed in
   * the draft or it was submitted, so a new form shows no error before anything is typed.
   * @default true
   */
  showProblems?: boolean;
}

function ListField(props: {
  spec: FieldSpec;
  value: JsonValue;
  onChange: (value: JsonValue) => void;
}): ReactElement {
  const items = Array.isArray(props.value) ? props.value.map(String) : [];
  const set = (next: string[]) => props.onChange(next);
  return (
    <div className="list-field">
      {items.map((item, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: items are plain strings edited in place
        <div className="list-row" key={index}>
          <span className="list-number">{index + 1}.</span>
          <input
            value={item}
            aria-label={`${props.spec.label} ${index + 1}`}
            onChange={(event) =>
              set(items.map((old, at) => (at === index ? event.target.value : old)))
            }
          />
          <button
            type="button"
            className="icon"
            title="Remove"
            onClick={() => set(items.filter((_, at) => at !== index))}
          >
            ×
          </button>
        </div>
      ))}
      <button type="button" className="link" onClick={() => set([...items, ''])}>
        + add item
      </button>
    </div>
  );
}

function EntriesField(props: {
  value: JsonValue;
  onChange: (value: JsonValue) => void;
}): ReactElement {
  const source =
    typeof props.value === 'object' && props.value !== null && !Array.isArray(props.value)
      ? props.value
      : {};
  const entries = Object.entries(source).map(
    ([key, meaning]) => [key, String(meaning ?? '')] as const,
  );
  const set = (next: ReadonlyArray<readonly [string, string]>) =>
    props.onChange(Object.fromEntries(next));
  return (
    <div className="list-field">
      {entries.map(([key, meaning], index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the key text itself is being edited
        <div className="list-row" key={index}>
          <input
            className="entry-key"
            placeholder="term"
            value={key}
            onChange={(event) =>
              set(entries.map((old, at) => (at === index ? [event.target.value, old[1]] : old)))
            }
          />
          <input
            placeholder="meaning"
            value={meaning}
            onChange={(event) =>
              set(entries.map((old, at) => (at === index ? [old[0], event.target.value] : old)))
            }
          />
          <button
            type="button"
            className="icon"
            title="Remove"
            onClick={() => set(entries.filter((_, at) => at !== index))}
          >
            ×
          </button>
        </div>
      ))}
      <button
        type="button"
        className="link"
        onClick={() => set([...entries, [`term ${entries.length + 1}`, '']])}
      >
        + add entry
      </button>
    </div>
  );
}

function NestedField(props: {
  spec: FieldSpec;
  value: JsonValue;
  depth: number;
  showProblems: boolean;
  onChange: (value: JsonValue) => void;
}): ReactElement {
  const items: JsonValue[] = Array.isArray(props.value) ? props.value : [];
  const set = (next: JsonValue[]) => props.onChange(next);
  const onlyPolicies = props.spec.kind === 'policies';
  return (
    <div className="nested-field">
      {items.map((item, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: children are edited in place, by position
        <div className="nested-item" key={index}>
          <div className="nested-head">
            <span className="badge">{isFlatFragment(item) ? item.type : 'text'}</span>
            <span className="grow" />
            <button
              type="button"
              className="icon"
              title="Remove"
              onClick={() => set(items.filter((_, at) => at !== index))}
            >
              ×
            </button>
          </div>
          {isFlatFragment(item) ? (
            <FragmentForm
              value={item}
              depth={props.depth + 1}
              showProblems={props.showProblems}
              onChange={(next) => set(items.map((old, at) => (at === index ? next : old)))}
            />
          ) : (
            <input
              value={String(item)}
              aria-label="Text child"
              onChange={(event) =>
                set(items.map((old, at) => (at === index ? event.target.value : old)))
              }
            />
          )}
        </div>
      ))}
      <div className="nested-add">
        {onlyPolicies ? (
          <button
            type="button"
            className="link"
            onClick={() => set([...items, emptyFragment('policy')])}
          >
            + policy
          </button>
        ) : (
          <select
            aria-label="Add a child fragment"
            value=""
            onChange={(event) => {
              if (event.target.value) set([...items, emptyFragment(event.target.value)]);
            }}
          >
            <option value="">+ child fragment…</option>
            {FRAGMENT_SPECS.map((spec) => (
              <option key={spec.type} value={spec.type}>
                {spec.label}
              </option>
            ))}
          </select>
        )}
        <button type="button" className="link" onClick={() => set([...items, ''])}>
          + text
        </button>
      </div>
    </div>
  );
}

/** A form for one serialized fragment, nesting forms for its child fragments. */
export function FragmentForm(props: FragmentFormProps): ReactElement {
  const spec = specFor(props.value.type);
  const depth = props.depth ?? 0;
  const showProblems = props.showProblems ?? true;
  if (spec === undefined) {
    return <p className="muted">Unknown type “{props.value.type}”: edit it as JSON.</p>;
  }
  const update = (key: string, entry: JsonValue) =>
    props.onChange({ ...props.value, [key]: entry });
  const budget =
    typeof props.value.budget === 'object' &&
    props.value.budget !== null &&
    !Array.isArray(props.value.budget)
      ? props.value.budget
      : {};
  const setBudget = (key: 'priority' | 'required', setting: JsonValue | undefined) => {
    const next: Record<string, JsonValue> = { ...budget };
    if (setting === undefined) delete next[key];
    else next[key] = setting;
    const { budget: _old, ...rest } = props.value;
    props.onChange(
      Object.keys(next).length > 0 ? { ...rest, budget: next } : (rest as FlatFragment),
    );
  };
  return (
    <div className={`fragment-form depth-${Math.min(depth, 3)}`}>
      {depth === 0 ? (
        <div
          className="field budget-field"
          title="Under a token budget, lower priority goes first (below 0: before any history); a required fragment never goes."
        >
          <span className="field-label">Budget</span>
          <label className="inline">
            <span className="muted small">priority</span>
            <input
              type="number"
              step="any"
              aria-label="Budget priority"
              placeholder="0"
              value={typeof budget.priority === 'number' ? String(budget.priority) : ''}
              onChange={(event) =>
                setBudget(
                  'priority',
                  event.target.value === '' || Number.isNaN(Number(event.target.value))
                    ? undefined
                    : Number(event.target.value),
                )
              }
            />
          </label>
          <label className="inline">
            <input
              type="checkbox"
              aria-label="Required under a budget"
              checked={budget.required === true}
              onChange={(event) => setBudget('required', event.target.checked ? true : undefined)}
            />
            <span className="muted small">required</span>
          </label>
        </div>
      ) : null}
      {spec.fields.map((item) => {
        const entry =
          props.value[item.key] ?? (item.kind === 'text' || item.kind === 'longtext' ? '' : []);
        const missing = showProblems && fieldMissing(item, props.value[item.key]);
        const label = (
          <span className="field-label">
            {item.label}
            {item.required ? <span className="required">*</span> : null}
            {missing ? <span className="missing"> required</span> : null}
          </span>
        );
        const fieldClass = missing ? 'field invalid' : 'field';
        if (item.kind === 'text' || item.kind === 'longtext') {
          return (
            <div className={fieldClass} key={item.key}>
              {label}
              {item.kind === 'text' ? (
                <input
                  value={String(entry)}
                  placeholder={item.placeholder}
                  aria-label={`${spec.label} ${item.label}`}
                  aria-invalid={missing}
                  onChange={(event) => update(item.key, event.target.value)}
                />
              ) : (
                <textarea
                  rows={2}
                  value={String(entry)}
                  placeholder={item.placeholder}
                  aria-label={`${spec.label} ${item.label}`}
                  aria-invalid={missing}
                  onChange={(event) => update(item.key, event.target.value)}
                />
              )}
            </div>
          );
        }
        return (
          <div className={fieldClass} key={item.key}>
            {label}
            {item.kind === 'list' ? (
              <ListField spec={item} value={entry} onChange={(next) => update(item.key, next)} />
            ) : item.kind === 'entries' ? (
              <EntriesField value={entry} onChange={(next) => update(item.key, next)} />
            ) : (
              <NestedField
                spec={item}
                value={entry}
                depth={depth}
                showProblems={showProblems}
                onChange={(next) => update(item.key, next)}
              />
            )}
          </div>
        );
      })}
    </div>
  );
}
