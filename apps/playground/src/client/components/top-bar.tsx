import { type ReactElement, useState } from 'react';
import type { PlaygroundInfo } from '../api';
import type { LayoutState } from '../state/use-layout';

/** Props of {@link TopBar}. */
export interface TopBarProps {
  info: PlaygroundInfo | null;
  userId: string | null;
  onSwitchUser: (userId: string) => void;
  /** False while no chat is open: the chat tools are off. */
  chatOpen: boolean;
  onBudget: () => void;
  onInspect: () => void;
  /** The page layout: which panes are shown, and the theme. */
  layout: LayoutState;
  /** Whether the chat list is shown (the docked budget panel may fold it for room). */
  chatsShown: boolean;
  onToggleChats: () => void;
}

/** A button that shows or hides one pane (pressed while the pane is shown). */
function PaneToggle(props: {
  label: string;
  title: string;
  shown: boolean;
  onToggle: () => void;
}): ReactElement {
  return (
    <button
      type="button"
      className="pane-toggle"
      aria-pressed={props.shown}
      title={props.title}
      onClick={props.onToggle}
    >
      {props.label}
    </button>
  );
}

/** The user the page acts as, and a field to act as another. */
function UserForm(props: { userId: string | null; onSwitch: (userId: string) => void }) {
  const [draft, setDraft] = useState(props.userId ?? '');
  const next = draft.trim();
  return (
    <form
      className="user-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (next !== '' && next !== props.userId) props.onSwitch(next);
      }}
    >
      <label className="inline">
        <span className="muted small">user</span>
        <input
          aria-label="User id"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
        />
      </label>
      <button type="submit" disabled={next === props.userId || next === ''}>
        Switch user
      </button>
    </form>
  );
}

/** The page's top bar: the store in use, the user, and the tools on the open chat. */
export function TopBar(props: TopBarProps): ReactElement {
  const { info } = props;
  const { layout } = props.layout;
  return (
    <header className="topbar">
      <div className="brand">
        <span className="logo">◆</span> ctxgraph <span className="muted">playground</span>
      </div>
      {info ? (
        <div className="store-info" data-testid="store-info" title={info.store.location}>
          <span className="pill">{info.store.kind}</span>
          <span className="store-location">{info.store.location}</span>
        </div>
      ) : null}
      <span className="grow" />
      <fieldset className="pane-toggles" aria-label="Panes">
        <PaneToggle
          label="Chats"
          title="Show or hide the chat list"
          shown={props.chatsShown}
          onToggle={props.onToggleChats}
        />
        <PaneToggle
          label="Context"
          title="Show or hide the context and prompt column"
          shown={!layout.middleCollapsed}
          onToggle={() => props.layout.update({ middleCollapsed: !layout.middleCollapsed })}
        />
        <PaneToggle
          label="Conversation"
          title="Show or hide the conversation above the graph"
          shown={!layout.conversationCollapsed}
          onToggle={() =>
            props.layout.update({ conversationCollapsed: !layout.conversationCollapsed })
          }
        />
        <PaneToggle
          label="Graph only"
          title="Give the graph (and its inspector) the whole page, or bring the other panes back"
          shown={props.layout.graphFocused}
          onToggle={props.layout.toggleGraphFocus}
        />
      </fieldset>
      <button
        type="button"
        className="theme-toggle"
        aria-label={layout.theme === 'dark' ? 'Use the light theme' : 'Use the dark theme'}
        title={layout.theme === 'dark' ? 'Use the light theme' : 'Use the dark theme'}
        onClick={() => props.layout.update({ theme: layout.theme === 'dark' ? 'light' : 'dark' })}
      >
        {layout.theme === 'dark' ? '☀' : '☾'}
      </button>
      {/* Keyed by the user: the field starts from the user the page acts as. */}
      <UserForm key={props.userId ?? ''} userId={props.userId} onSwitch={props.onSwitchUser} />
      <button
        type="button"
        disabled={!props.chatOpen}
        onClick={props.onBudget}
        title="Set a token budget: what the model would receive, what is left out and why, and the cache per call"
      >
        Budget & cache
      </button>
      <button type="button" disabled={!props.chatOpen} onClick={props.onInspect}>
        Inspect
      </button>
    </header>
  );
}
