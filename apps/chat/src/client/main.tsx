import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { ChatPage } from './chat-page';
import './styles.css';

/** The chat the address names (`#<chat id>`), or undefined when it names none (or a bad one). */
function chatIdInLocation(): string | undefined {
  const fromHash = window.location.hash.slice(1);
  return /^[A-Za-z0-9_-]{1,64}$/.test(fromHash) ? fromHash : undefined;
}

const newChatId = (): string => `chat-${crypto.randomUUID()}`;

/** The page: the chat in the address, a new one when it names none; "New chat" opens another. */
function App() {
  const [chatId, setChatId] = useState(() => {
    const id = chatIdInLocation() ?? newChatId();
    window.history.replaceState(null, '', `#${id}`);
    return id;
  });
  // Back and forward between chats (and a hash typed into the address bar) switch the chat.
  useEffect(() => {
    const onHashChange = () => {
      const id = chatIdInLocation();
      if (id !== undefined) setChatId(id);
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);
  const openNewChat = () => {
    const id = newChatId();
    window.history.pushState(null, '', `${window.location.pathname}#${id}`);
    setChatId(id);
  };
  return <ChatPage key={chatId} chatId={chatId} onNewChat={openNewChat} />;
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
