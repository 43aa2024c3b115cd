import type { ReactElement } from 'react';

/** What the page shows where the chat would be: how to start, or why the chat did not open. */
export function Welcome(props: {
  /** The chat the address names, or null. */
  chatId: string | null;
  /** Why it could not be opened, or null. */
  error: string | null;
}): ReactElement {
  return (
    <div className="column placeholder-column">
      <div className="welcome">
        <h1>Compose context, chat, branch, rewind.</h1>
        <p>
          Create a chat on the left. Add context fragments and watch the system prompt under each
          renderer; send messages; select a message in the graph to branch from it or checkpoint it;
          restore; inspect what the engine would send.
        </p>
        {props.chatId && props.error === null ? <p className="muted">Loading chat…</p> : null}
        {props.chatId && props.error !== null ? (
          <p className="inline-error" data-testid="chat-error">
            This chat could not be opened: {props.error}
          </p>
        ) : null}
      </div>
    </div>
  );
}
