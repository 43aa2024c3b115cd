import { type ReactElement, type ReactNode, useEffect, useRef, useState } from 'react';

/** Props of {@link DialogFrame}. */
export interface DialogFrameProps {
  /** The dialog's accessible name. */
  label: string;
  /** Extra class of the dialog box (its width). */
  className?: string;
  /** Called on Escape. */
  onClose: () => void;
  /**
   * `false` docks the dialog as a panel beside the page instead of over it: nothing is dimmed
   * or blocked (the message box stays usable), and Escape closes it only while the focus is in it.
   * @default true
   */
  modal?: boolean;
  children: ReactNode;
}

/**
 * A modal dialog over the page: the dimmed overlay, the box, and Escape to close. It takes the
 * focus when it opens (unless a field inside took it), so the keyboard is in it at once, and gives
 * it back to what had it (the button that opened it) when it closes.
 */
export function DialogFrame(props: DialogFrameProps): ReactElement {
  const { onClose } = props;
  const modal = props.modal ?? true;
  // What had the focus before the dialog was drawn (read on the first render, before any field
  // inside takes it).
  const [opener] = useState(() =>
    document.activeElement instanceof HTMLElement ? document.activeElement : null,
  );
  const box = useRef<HTMLElement & HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (element !== null && !element.contains(document.activeElement))
      element.focus({ preventScroll: true });
    return () => {
      // Back to the opener only when the focus went down with the dialog, not when the user
      // had moved on (the docked panel leaves the page usable).
      const now = document.activeElement;
      if ((now === null || now === document.body) && opener?.isConnected)
        opener.focus({ preventScroll: true });
    };
  }, [opener]);
  useEffect(() => {
    if (!modal) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose, modal]);
  if (!modal) {
    return (
      <section
        className={props.className ? `dialog docked ${props.className}` : 'dialog docked'}
        role="dialog"
        aria-modal="false"
        aria-label={props.label}
        ref={box}
        tabIndex={-1}
        onKeyDown={(event) => {
          if (event.key === 'Escape') onClose();
        }}
      >
        {props.children}
      </section>
    );
  }
  return (
    <div className="overlay">
      <div
        className={props.className ? `dialog ${props.className}` : 'dialog'}
        role="dialog"
        aria-label={props.label}
        ref={box}
        tabIndex={-1}
      >
        {props.children}
      </div>
    </div>
  );
}
