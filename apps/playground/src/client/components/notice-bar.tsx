import type { ReactElement } from 'react';
import type { Notice } from '../state/notice';

/** The notice under the top bar: the last action's error, or what it did. */
export function NoticeBar(props: { notice: Notice; onDismiss: () => void }): ReactElement {
  const { notice } = props;
  return (
    <div
      className={`notice-bar ${notice.kind}`}
      role={notice.kind === 'error' ? 'alert' : 'status'}
    >
      <strong>{notice.title}</strong>
      <span>{notice.message}</span>
      <button type="button" className="icon" aria-label="Dismiss" onClick={props.onDismiss}>
        ×
      </button>
    </div>
  );
}
