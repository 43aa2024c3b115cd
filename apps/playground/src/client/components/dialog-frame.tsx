import { type ReactElement, type ReactNode, useEffect } from 'react';

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

/** A modal dialog over the page: the dimmed overlay, the box, and Escape to close. */
export function DialogFrame(props: DialogFrameProps): ReactElement {
  const { onClose } = props;
  const modal = props.modal ?? true;
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
      >
        {props.children}
      </div>
    </div>
  );
}
