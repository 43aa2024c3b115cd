import { type ReactElement, useEffect, useState } from 'react';
import { ChatList } from './components/chat-list';
import { Dialogs, useDialog } from './components/dialogs';
import { NoticeBar } from './components/notice-bar';
import { OpenChatColumns } from './components/open-chat';
import { Splitter } from './components/splitter';
import { TopBar } from './components/top-bar';
import { Welcome } from './components/welcome';
import { useNotice } from './state/notice';
import { useBudgetedCalls } from './state/use-budgeted-calls';
import { useChatActions, useChatListActions } from './state/use-chat-actions';
import { LAYOUT_BOUNDS, useLayout } from './state/use-layout';
import { openChat, useChatIdFromHash, useChatList, useOpenChat } from './state/use-open-chat';
import { useSession } from './state/use-session';
import { useSettings } from './state/use-settings';

/** Below this window width (px) the docked budget panel folds the chat list while it is open. */
const BUDGET_FOLDS_CHATS_BELOW = 1600;

/**
 * The playground page: chats | context + prompt | conversation + graph. What the server holds is
 * read through queries (`state/`); this keeps only which chat is open (the address) and which
 * dialog.
 */
export function App(): ReactElement {
  const { notice, show } = useNotice();
  const session = useSession(show);
  const { info, userId } = session;
  const settings = useSettings(info);
  const chatId = useChatIdFromHash();
  const chat = useOpenChat(userId, chatId);
  const chatList = useChatList(userId, show, chatId);
  const listActions = useChatListActions(userId, chatId, show);
  const actions = useChatActions(userId, chat.view?.chat.id ?? '', show);
  const { dialog, open, close } = useDialog();
  const view = chat.view;
  const budgetedCalls = useBudgetedCalls(view, dialog?.kind === 'budget', settings, show);
  // The budget window is a panel docked beside the columns (the page stays usable); every
  // other dialog is modal, over the page.
  const docked = dialog?.kind === 'budget';
  const dialogs =
    dialog && view && userId !== null ? (
      <Dialogs
        dialog={dialog}
        onClose={close}
        userId={userId}
        view={view}
        info={info}
        settings={settings}
        actions={actions}
        budgetedCalls={budgetedCalls}
        show={show}
      />
    ) : null;
  const layoutState = useLayout();
  const { layout, update } = layoutState;
  // The docked budget panel takes the chat list's room on a screen narrower than 1,600 px (at
  // 1,440 px the conversation and the graph would be left under 300 px): the list folds while
  // the panel is open, without changing the kept layout, and the top bar's Chats brings it back.
  const [budgetFoldsChats, setBudgetFoldsChats] = useState(false);
  useEffect(() => {
    setBudgetFoldsChats(docked && window.innerWidth < BUDGET_FOLDS_CHATS_BELOW);
  }, [docked]);
  const chatsShown = !layout.chatsCollapsed && !budgetFoldsChats;

  // `/` focuses the search box, wherever the focus is (but not while typing in a field).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable="true"]')) return;
      const search = document.getElementById('graph-search-input');
      if (search === null) return;
      event.preventDefault();
      search.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <div className="app">
      <TopBar
        info={info}
        userId={userId}
        onSwitchUser={session.switchUser}
        chatOpen={view !== null}
        onBudget={() => open({ kind: 'budget' })}
        onInspect={() => open({ kind: 'inspect' })}
        layout={layoutState}
        chatsShown={chatsShown}
        onToggleChats={() => {
          if (budgetFoldsChats) {
            setBudgetFoldsChats(false);
            if (layout.chatsCollapsed) update({ chatsCollapsed: false });
          } else update({ chatsCollapsed: !layout.chatsCollapsed });
        }}
      />
      {notice ? <NoticeBar notice={notice} onDismiss={() => show(null)} /> : null}
      <main className="columns">
        {chatsShown ? (
          <>
            <aside className="column chats-column" style={{ width: layout.chatsWidth }}>
              <ChatList
                chats={chatList.chats}
                hasMore={chatList.hasMore}
                selectedId={chatId}
                onOpen={openChat}
                onCreate={(title) => void listActions.create(title)}
                onRename={(id, title) => void listActions.rename({ chatId: id, title })}
                onDelete={(id) => void listActions.remove(id)}
                onMore={chatList.more}
              />
            </aside>
            <Splitter
              label="Resize the chat list"
              orientation="vertical"
              value={layout.chatsWidth}
              min={LAYOUT_BOUNDS.chatsWidth.min}
              max={LAYOUT_BOUNDS.chatsWidth.max}
              step={20}
              perPixel={1}
              onChange={(chatsWidth) => update({ chatsWidth })}
            />
          </>
        ) : null}
        {view ? (
          <OpenChatColumns
            view={view}
            info={info}
            settings={settings}
            actions={actions}
            onDialog={open}
            layout={layoutState}
            dialogOpen={dialog !== null && !docked}
          />
        ) : (
          <Welcome chatId={chatId} error={chat.error} />
        )}
        {docked ? dialogs : null}
      </main>
      {docked ? null : dialogs}
    </div>
  );
}
