import { type ReactElement, useState } from 'react';
import { api, type ChatView, type PlaygroundInfo } from '../api';
import type { ChatActions } from '../state/use-chat-actions';
import type { Settings } from '../state/use-settings';
import { ContextPane, type DraftPreview } from './context-pane';
import { ConversationPane } from './conversation-pane';
import type { OpenDialog } from './dialogs';
import { GraphPane } from './graph-pane';
import { PromptPanel } from './prompt-panel';

/** Props of {@link OpenChatColumns}. */
export interface OpenChatColumnsProps {
  view: ChatView;
  info: PlaygroundInfo | null;
  settings: Settings;
  actions: ChatActions;
  onDialog: (dialog: OpenDialog) => void;
}

/** The open chat: context and prompts in the middle, conversation and graph on the right. */
export function OpenChatColumns(props: OpenChatColumnsProps): ReactElement {
  const { view, settings, actions, onDialog } = props;
  const [preview, setPreview] = useState<DraftPreview | null>(null);
  return (
    <>
      <div className="column middle-column">
        <ContextPane
          key={view.chat.id}
          view={view}
          onPreview={setPreview}
          onSave={async (fragments) => {
            await actions.saveContext(fragments);
            setPreview(null);
          }}
        />
        <PromptPanel
          prompts={view.prompts}
          draft={preview}
          renderer={settings.renderer}
          onRenderer={settings.chooseRenderer}
        />
      </div>
      <div className="column right-column">
        <ConversationPane
          view={view}
          model={props.info?.model ?? null}
          streaming={actions.streaming}
          pendingUser={actions.pendingUser}
          busy={actions.busy}
          onSend={(role, text) => actions.say({ role, text })}
          onAsk={(text) => actions.ask(text, settings.renderer)}
          onCompact={() => onDialog({ kind: 'compact' })}
        />
        <GraphPane
          view={view}
          busy={actions.busy}
          onRewind={(messageId) => void actions.rewind(messageId)}
          onCheckpoint={(name, messageId) => void actions.checkpoint({ name, messageId })}
          onRestore={(name) => void actions.restore(name)}
          onBtw={() => void actions.btw(undefined)}
          onSwitch={(branch) => void actions.switchBranch(branch)}
          onCompare={(left, right) => onDialog({ kind: 'compare', left, right })}
          onDeleteBranch={(branch) => onDialog({ kind: 'delete-branch', branch })}
          onSearch={(query, scope) => api.search(view.chat.id, query, scope)}
        />
      </div>
    </>
  );
}
