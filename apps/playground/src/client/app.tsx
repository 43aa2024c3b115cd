import type { ReactElement } from 'react';
import { ChatList } from './components/chat-list';
import { Dialogs, useDialog } from './components/dialogs';
import { NoticeBar } from './components/notice-bar';
import { OpenChatColumns } from './components/open-chat';
import { TopBar } from './components/top-bar';
import { Welcome } from './components/welcome';
import { useNotice } from './state/notice';
import { useBudgetedCalls } from './state/use-budgeted-calls';
import { useChatActions, useChatListActions } from './state/use-chat-actions';
import { openChat, useChatIdFromHash, useChatList, useOpenChat } from './state/use-open-chat';
import { useSession } from './state/use-session';
import { useSettings } from './state/use-settings';

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
  const chatList = useChatList(userId, show);
  const listActions = useChatListActions(userId, chatId, show);
  const actions = useChatActions(userId, chat.view?.chat.id ?? '', show);
  const { dialog, open, close } = useDialog();
  const view = chat.view;
  const budgetedCalls = useBudgetedCalls(view, dialog?.kind === 'budget', settings, show);

  return (
    <div className="app">
      <TopBar
        info={info}
        userId={userId}
        onSwitchUser={session.switchUser}
        chatOpen={view !== null}
        onBudget={() => open({ kind: 'budget' })}
        onInspect={() => open({ kind: 'inspect' })}
      />
      {notice ? <NoticeBar notice={notice} onDismiss={() => show(null)} /> : null}
      <main className="columns">
        <aside className="column chats-column">
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
        {view ? (
          <OpenChatColumns
            view={view}
            info={info}
            settings={settings}
            actions={actions}
            onDialog={open}
          />
        ) : (
          <Welcome chatId={chatId} error={chat.error} />
        )}
      </main>
      {dialog && view && userId !== null ? (
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
      ) : null}
    </div>
  );
}
