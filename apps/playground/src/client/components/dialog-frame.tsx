import { type ReactElement, type ReactNode, useEffect } from 'react';

/** Props of {@link DialogFrame}. */
export interface DialogFrameProps {
  /** The dialog's accessible name. */
  label: string;
  /** Extra class of the dialog box (its width). */
  className?: string;
  /** Called on Escape. */
  onClose: () => void;
  children: ReactNode;
}

/** A modal dialog over the page: the dimmed overlay, the box, and Escape to close. */
export function DialogFrame(props: DialogFrameProps): ReactElement {
  const { onClose } = props;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
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
