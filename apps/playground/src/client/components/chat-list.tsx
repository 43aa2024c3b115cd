import type { ChatRecord } from '@ctxgraph/fragments-core';
import { type ReactElement, useState } from 'react';
import { BranchIcon, TrashIcon } from './icons';

/** Props of {@link ChatList}. */
export interface ChatListProps {
  chats: readonly ChatRecord[];
  hasMore: boolean;
  selectedId: string | null;
  onOpen: (chatId: string) => void;
  onCreate: (title: string) => void;
  onRename: (chatId: string, title: string) => void;
  onDelete: (chatId: string) => void;
  onMore: () => void;
}

function when(milliseconds: number): string {
  const date = new Date(milliseconds);
  const today = new Date();
  return date.toDateString() === today.toDateString()
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString();
}

/** The user's chats, newest first, by page. */
export function ChatList(props: ChatListProps): ReactElement {
  const [title, setTitle] = useState('');
  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  /** The chat whose deletion is being confirmed (in the list, not a browser dialog), or null. */
  const [confirming, setConfirming] = useState<string | null>(null);
  return (
    <section className="panel chats-panel" aria-label="Chats">
      <form
        className="new-chat"
        onSubmit={(event) => {
          event.preventDefault();
          props.onCreate(title.trim());
          setTitle('');
        }}
      >
        <input
          aria-label="New chat title"
          placeholder="New chat title"
          value={title}
          onChange={(event) => setTitle(event.target.value)}
        />
        <button type="submit" className="primary">
          New chat
        </button>
      </form>
      <ul className="chat-list">
        {props.chats.map((chat) => (
          <li key={chat.id} className={chat.id === props.selectedId ? 'selected' : undefined}>
            {renaming?.id === chat.id ? (
              <form
                className="rename"
                onSubmit={(event) => {
                  event.preventDefault();
                  props.onRename(chat.id, renaming.title.trim());
                  setRenaming(null);
                }}
              >
                <input
                  aria-label="Chat title"
                  // biome-ignore lint/a11y/noAutofocus: the field appears because the user asked to rename
                  autoFocus
                  value={renaming.title}
                  onChange={(event) => setRenaming({ id: chat.id, title: event.target.value })}
                  onKeyDown={(event) => {
                    if (event.key === 'Escape') setRenaming(null);
                  }}
                />
              </form>
            ) : (
              <button type="button" className="chat-open" onClick={() => props.onOpen(chat.id)}>
                <span className="chat-title">{chat.title ?? 'Untitled chat'}</span>
                <span className="chat-meta">
                  {when(chat.updatedAt)} · <BranchIcon /> {chat.activeBranch}
                </span>
              </button>
            )}
            {chat.id === props.selectedId && renaming?.id !== chat.id ? (
              <span className="row-actions">
                <button
                  type="button"
                  className="icon"
                  title="Rename"
                  aria-label={`Rename ${chat.title ?? 'Untitled chat'}`}
                  onClick={() => setRenaming({ id: chat.id, title: chat.title ?? '' })}
                >
                  ✎
                </button>
                <button
                  type="button"
                  className="icon"
                  title="Delete chat"
                  aria-label={`Delete ${chat.title ?? 'Untitled chat'}`}
                  onClick={() => setConfirming(chat.id)}
                >
                  <TrashIcon />
                </button>
              </span>
            ) : null}
            {confirming === chat.id ? (
              <div
                className="inline-confirm"
                role="alertdialog"
                aria-label="Confirm chat deletion"
                onKeyDown={(event) => {
                  if (event.key === 'Escape') {
                    event.stopPropagation();
                    setConfirming(null);
                  }
                }}
              >
                <span>Delete “{chat.title ?? chat.id}” and its whole graph?</span>
                <button
                  type="button"
                  className="danger"
                  onClick={() => {
                    setConfirming(null);
                    props.onDelete(chat.id);
                  }}
                >
                  Delete
                </button>
                <button
                  type="button"
                  // biome-ignore lint/a11y/noAutofocus: the safe choice takes the focus when asked
                  autoFocus
                  onClick={() => setConfirming(null)}
                >
                  Keep
                </button>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      {props.chats.length === 0 ? <p className="muted center">No chats yet.</p> : null}
      {props.hasMore ? (
        <button type="button" className="link more" onClick={props.onMore}>
          Load more
        </button>
      ) : null}
    </section>
  );
}
