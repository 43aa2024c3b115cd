import type { ReactElement } from 'react';

/** A small branch glyph (drawn, so it does not depend on the fonts installed). */
export function BranchIcon(): ReactElement {
  return (
    <svg className="glyph" viewBox="0 0 16 16" width="11" height="11" aria-hidden="true">
      <circle cx="4" cy="3" r="1.8" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <circle cx="4" cy="13" r="1.8" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <circle cx="12" cy="5" r="1.8" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <path d="M4 5v6M12 7c0 3-8 2-8 4" fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

/** A small trash-can glyph. */
export function TrashIcon(): ReactElement {
  return (
    <svg className="glyph" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
      <path
        d="M3 4h10M6.5 4V2.5h3V4M4.5 4l.7 9.5h5.6l.7-9.5"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.4"
        strokeLinejoin="round"
      />
    </svg>
  );
}

/** A small target glyph (centre on the current message). */
export function TargetIcon(): ReactElement {
  return (
    <svg className="glyph" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
      <circle cx="8" cy="8" r="5" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <circle cx="8" cy="8" r="1.6" fill="currentColor" />
      <path d="M8 0.5v3M8 12.5v3M0.5 8h3M12.5 8h3" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

/** A small summary glyph (a compaction node: several messages folded into one). */
export function SummaryIcon(): ReactElement {
  return (
    <svg className="glyph" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
      <rect
        x="2"
        y="2"
        width="9"
        height="9"
        rx="1.5"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.4"
      />
      <rect x="5" y="5" width="9" height="9" rx="1.5" fill="currentColor" opacity="0.35" />
    </svg>
  );
}
