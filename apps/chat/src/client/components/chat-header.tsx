import type { ReactNode } from 'react';

/** Props of {@link ChatHeader}. */
export interface ChatHeaderProps {
  /** The chat's title (its first question, say); the app's name shows when absent. */
  title?: string | undefined;
  /** Starts a new chat; the button is left out when absent. */
  onNewChat?: (() => void) | undefined;
  /** What the header shows at its end: the context gauge. */
  children?: ReactNode;
}

/** The page's header: the app's name, the chat's title, a gauge and a "New chat" button. */
export function ChatHeader({ title, onNewChat, children }: ChatHeaderProps) {
  return (
    <header className="chat-header">
      <div className="chat-heading">
        <span className="brand" aria-hidden="true">
          ◆
        </span>
        <div className="chat-titles">
          <p className="app-name">ctxgraph chat</p>
          <h1 className="chat-title" data-testid="chat-title">
            {title === undefined || title.trim() === '' ? 'New chat' : title}
          </h1>
        </div>
      </div>
      <div className="chat-header-end">
        {children}
        {onNewChat ? (
          <button type="button" className="button" onClick={onNewChat}>
            New chat
          </button>
        ) : null}
      </div>
    </header>
  );
}
