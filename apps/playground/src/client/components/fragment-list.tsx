import type { JsonValue } from '@ctxgraph/fragments-core';
import type { ReactElement } from 'react';
import type { FlatFragment } from '../api';
import { specFor, summarize } from '../fragment-catalog';

/** Props of {@link FragmentList}. */
export interface FragmentListProps {
  fragments: readonly JsonValue[];
  /** The index whose draft is open, or null. */
  editing: number | null;
  /** Moves the fragment at `index` by `by` places (-1 up, 1 down). */
  onMove: (index: number, by: number) => void;
  onEdit: (index: number, fragment: FlatFragment) => void;
  onRemove: (index: number) => void;
}

/** The context's fragments in order, each with its type, a summary, and its row actions. */
export function FragmentList(props: FragmentListProps): ReactElement {
  return (
    <ol className="fragment-list">
      {props.fragments.map((item, index) => {
        const type =
          typeof item === 'object' && item !== null && !Array.isArray(item)
            ? String(item.type)
            : 'text';
        const editing = props.editing === index;
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
                aria-label={`Move up: ${specFor(type)?.label ?? type} ${index + 1}`}
                disabled={index === 0}
                onClick={() => props.onMove(index, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                className="icon"
                title="Move down"
                aria-label={`Move down: ${specFor(type)?.label ?? type} ${index + 1}`}
                disabled={index === props.fragments.length - 1}
                onClick={() => props.onMove(index, 1)}
              >
                ↓
              </button>
              <button
                type="button"
                className="icon"
                title="Edit"
                aria-label={`Edit: ${specFor(type)?.label ?? type} ${index + 1}`}
                onClick={() => props.onEdit(index, item as FlatFragment)}
              >
                ✎
              </button>
              <button
                type="button"
                className="icon"
                title="Remove"
                aria-label={`Remove: ${specFor(type)?.label ?? type} ${index + 1}`}
                onClick={() => props.onRemove(index)}
              >
                ×
              </button>
            </span>
          </li>
        );
      })}
    </ol>
  );
}
