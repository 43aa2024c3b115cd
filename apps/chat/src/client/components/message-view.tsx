import {
  type FormEvent,
  type KeyboardEvent,
  type ReactNode,
  useEffect,
  useId,
  useRef,
  useState,
} from 'react';
import type { ChatUIMessage } from '../../server/tools';
import { type ReplyOutcome, textOfParts } from '../chat-api';
import { MessageParts } from './message-parts';
import { OutcomeMarker } from './outcome-marker';

/** Props of {@link MessageView}. */
export interface MessageViewProps {
  /** The message shown. */
  message: ChatUIMessage;
  /** How the reply ended, when it was stopped or interrupted. */
  outcome?: ReplyOutcome | undefined;
  /** The reply is being written now (shows a typing indicator until its first part). */
  streaming?: boolean;
  /** The branch picker's slot: shown when the message has more than one version. */
  branchPicker?: ReactNode;
  /** Sends `text` as a new version of this (user) message; no Edit button when absent. */
  onEdit?: ((text: string) => void) | undefined;
  /** Writes a new version of this (assistant) reply; no Regenerate button when absent. */
  onRegenerate?: (() => void) | undefined;
  /** Answers the reply's confirmation question (see {@link MessageParts}). */
  onAnswerConfirmation?: ((toolCallId: string, confirmed: boolean) => void) | undefined;
}

/**
 * One message: who wrote it, its content (a user's text as written; an assistant's parts as
 * Markdown and tool cards), a stopped or interrupted reply's marker, the branch picker's slot, and
 * Edit (inline) or Regenerate.
 */
export function MessageView({
  message,
  outcome,
  streaming = false,
  branchPicker,
  onEdit,
  onRegenerate,
  onAnswerConfirmation,
}: MessageViewProps) {
  const [editing, setEditing] = useState<string | null>(null);
  const authorId = useId();
  const editButton = useRef<HTMLButtonElement>(null);
  const editor = useRef<HTMLTextAreaElement>(null);
  const returnFocus = useRef(false);
  const isUser = message.role === 'user';
  // Editing starts with the text in the box, focused; a cancel gives the focus back to Edit.
  useEffect(() => {
    if (editing !== null) return;
    if (returnFocus.current) {
      returnFocus.current = false;
      editButton.current?.focus();
    }
  }, [editing]);
  const startEditing = () => {
    setEditing(textOfParts(message));
    requestAnimationFrame(() => {
      editor.current?.focus();
      editor.current?.select();
    });
  };
  const cancel = () => {
    returnFocus.current = true;
    setEditing(null);
  };
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (editing === null || editing.trim() === '' || onEdit === undefined) return;
    onEdit(editing);
    setEditing(null);
  };
  const onEditorKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      cancel();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      event.currentTarget.form?.requestSubmit();
    }
  };
  const empty = message.parts.every((part) => part.type === 'step-start');
  return (
    <li
      className={`message message-${message.role}`}
      data-role={message.role}
      data-message-id={message.id}
      data-testid="message"
      aria-labelledby={authorId}
    >
      <div className="message-avatar" aria-hidden="true">
        {isUser ? 'You'.slice(0, 1) : '◆'}
      </div>
      <div className="message-main">
        <p className="message-author" id={authorId}>
          {isUser ? 'You' : 'Assistant'}
          {outcome ? <OutcomeMarker outcome={outcome} /> : null}
        </p>
        {editing !== null ? (
          <form className="message-editor" onSubmit={save}>
            <textarea
              ref={editor}
              className="composer-input"
              aria-label="Edit message"
              value={editing}
              rows={Math.min(8, Math.max(2, editing.split('\n').length))}
              onChange={(event) => setEditing(event.target.value)}
              onKeyDown={onEditorKeyDown}
            />
            <div className="message-editor-actions">
              <button type="button" className="button" onClick={cancel}>
                Cancel
              </button>
              <button
                type="submit"
                className="button button-primary"
                disabled={onEdit === undefined}
              >
                Save and send
              </button>
            </div>
          </form>
        ) : (
          <div className="message-bubble">
            <div className="message-content" data-testid="message-text">
              {isUser ? (
                <p className="user-text">{textOfParts(message)}</p>
              ) : (
                <MessageParts message={message} onAnswerConfirmation={onAnswerConfirmation} />
              )}
            </div>
            {streaming && empty ? (
              <span className="typing" aria-hidden="true">
                <span />
                <span />
                <span />
              </span>
            ) : null}
          </div>
        )}
        {editing === null ? (
          <div className="message-actions">
            {branchPicker}
            {isUser && onEdit ? (
              <button ref={editButton} type="button" className="text-button" onClick={startEditing}>
                Edit
              </button>
            ) : null}
            {!isUser && onRegenerate ? (
              <button type="button" className="text-button" onClick={onRegenerate}>
                Regenerate
              </button>
            ) : null}
          </div>
        ) : null}
      </div>
    </li>
  );
}
