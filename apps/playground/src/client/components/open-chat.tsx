import { type ReactElement, useCallback, useRef, useState } from 'react';
import { api, type ChatView, type PlaygroundInfo } from '../api';
import type { ChatActions } from '../state/use-chat-actions';
import { LAYOUT_BOUNDS, type LayoutState } from '../state/use-layout';
import type { Settings } from '../state/use-settings';
import { ContextPane, type DraftPreview } from './context-pane';
import { ConversationPane } from './conversation-pane';
import type { OpenDialog } from './dialogs';
import { GraphPane } from './graph-pane';
import { PromptPanel } from './prompt-panel';
import { Splitter } from './splitter';

/** Props of {@link OpenChatColumns}. */
export interface OpenChatColumnsProps {
  view: ChatView;
  info: PlaygroundInfo | null;
  settings: Settings;
  actions: ChatActions;
  onDialog: (dialog: OpenDialog) => void;
  layout: LayoutState;
  /** A dialog is open over the page (Escape is its, not the inspector's). */
  dialogOpen: boolean;
}

/** The open chat: context and prompts in the middle, conversation and graph on the right. */
export function OpenChatColumns(props: OpenChatColumnsProps): ReactElement {
  const { view, settings, actions, onDialog } = props;
  const [preview, setPreview] = useState<DraftPreview | null>(null);
  const { layout, update } = props.layout;
  const rightColumn = useRef<HTMLDivElement>(null);
  const chatId = view.chat.id;
  // One function per chat, so the search box searches again only when the query changes.
  const versionsOf = useCallback((nodeId: string) => api.versions(chatId, nodeId), [chatId]);
  const search = useCallback(
    (query: string, scope: 'branch' | 'chat', cursor?: string) =>
      api.search(chatId, query, scope, cursor),
    [chatId],
  );
  return (
    <>
      {layout.middleCollapsed ? null : (
        <>
          <div className="column middle-column" style={{ width: layout.middleWidth }}>
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
          <Splitter
            label="Resize the context column"
            orientation="vertical"
            value={layout.middleWidth}
            min={LAYOUT_BOUNDS.middleWidth.min}
            max={LAYOUT_BOUNDS.middleWidth.max}
            step={20}
            perPixel={1}
            onChange={(middleWidth) => update({ middleWidth })}
          />
        </>
      )}
      <div className="column right-column" ref={rightColumn}>
        {layout.conversationCollapsed ? null : (
          <>
            <ConversationPane
              style={{ flexBasis: `${100 - layout.graphPercent}%` }}
              view={view}
              model={props.info?.model ?? null}
              streaming={actions.streaming}
              pendingUser={actions.pendingUser}
              busy={actions.busy}
              onSend={(role, text) => actions.say({ role, text })}
              onAsk={(text) => actions.ask(text, settings.renderer, settings.maxInputTokens)}
              onStop={() => void actions.stop()}
              onCompact={() => onDialog({ kind: 'compact' })}
            />
            <Splitter
              label="Resize the graph"
              orientation="horizontal"
              value={100 - layout.graphPercent}
              min={100 - LAYOUT_BOUNDS.graphPercent.max}
              max={100 - LAYOUT_BOUNDS.graphPercent.min}
              step={5}
              perPixel={100 / Math.max(1, rightColumn.current?.clientHeight ?? 800)}
              valueText={(conversation) =>
                `conversation ${conversation}%, graph ${100 - conversation}%`
              }
              onChange={(conversationPercent) =>
                update({ graphPercent: 100 - conversationPercent })
              }
            />
          </>
        )}
        <GraphPane
          style={
            layout.conversationCollapsed ? { flex: 1 } : { flexBasis: `${layout.graphPercent}%` }
          }
          dialogOpen={props.dialogOpen}
          theme={layout.theme}
          view={view}
          busy={actions.busy}
          onRewind={(messageId) => void actions.rewind(messageId)}
          onCheckpoint={(name, messageId) => void actions.checkpoint({ name, messageId })}
          onRestore={(name) => void actions.restore(name)}
          onBtw={() => void actions.btw(undefined)}
          onSwitch={(branch) => void actions.switchBranch(branch)}
          onCompare={(left, right) => onDialog({ kind: 'compare', left, right })}
          onDeleteBranch={(branch) => onDialog({ kind: 'delete-branch', branch })}
          onRenameBranch={(branch) => onDialog({ kind: 'rename-branch', branch })}
          onSearch={search}
          onVersions={versionsOf}
        />
      </div>
    </>
  );
}
