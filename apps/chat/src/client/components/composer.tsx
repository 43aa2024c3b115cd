import { type FormEvent, type KeyboardEvent, useEffect, useRef } from 'react';

/** Props of {@link Composer}. */
export interface ComposerProps {
  /** The draft. */
  value: string;
  /** Told each change of the draft. */
  onChange: (value: string) => void;
  /** Sends the draft (Enter, or the Send button); not called for a blank draft. */
  onSubmit: () => void;
  /** Sending is refused (a reply is on its way): the draft can still be written. */
  busy: boolean;
  /** Stops the reply being written; the Stop button shows only while this is given. */
  onStop?: (() => void) | undefined;
  /** What the page is doing, in words, announced to screen readers as it changes. */
  statusText: string;
}

/**
 * The message box: a textarea where Enter sends and Shift+Enter starts a new line, a Send
 * button, and a Stop button while a reply streams. Focus stays in the textarea after sending and
 * comes back to it after a stop.
 */
export function Composer({ value, onChange, onSubmit, busy, onStop, statusText }: ComposerProps) {
  const textarea = useRef<HTMLTextAreaElement>(null);
  const stopping = useRef(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (busy || value.trim() === '') return;
    onSubmit();
    // Sent with the button: the next message is written in the textarea, not on a disabled button.
    textarea.current?.focus();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // An input method's Enter (composing a character) is not a send.
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    event.currentTarget.form?.requestSubmit();
  };
  // The Stop button goes once the reply stopped: focus returns to the textarea, not the page.
  useEffect(() => {
    if (onStop === undefined && stopping.current) {
      stopping.current = false;
      textarea.current?.focus();
    }
  }, [onStop]);
  return (
    <form className="composer" onSubmit={submit}>
      <textarea
        ref={textarea}
        className="composer-input"
        aria-label="Message"
        aria-describedby="composer-hint"
        placeholder="Ask anything: try “weather”, “confirm” or some **Markdown**"
        rows={1}
        value={value}
        // A chat page's one job: the textarea has the focus when it opens.
        // biome-ignore lint/a11y/noAutofocus: the page is the composer's; nothing precedes it.
        autoFocus
        onChange={(event) => onChange(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="composer-bar">
        <p id="composer-hint" className="composer-hint">
          <kbd>Enter</kbd> sends · <kbd>Shift</kbd>+<kbd>Enter</kbd> new line
        </p>
        <p className="composer-status" role="status" aria-live="polite">
          {statusText}
        </p>
        {onStop ? (
          <button
            type="button"
            className="button button-danger"
            onClick={() => {
              stopping.current = true;
              onStop();
            }}
          >
            Stop
          </button>
        ) : null}
        <button type="submit" className="button button-primary" disabled={busy}>
          Send
        </button>
      </div>
    </form>
  );
}
