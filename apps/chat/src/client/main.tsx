import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ChatPage } from './chat-page';

function chatIdFromLocation(): string {
  const fromHash = window.location.hash.slice(1);
  if (/^[A-Za-z0-9_-]{1,64}$/.test(fromHash)) return fromHash;
  const id = `chat-${crypto.randomUUID()}`;
  window.location.hash = id;
  return id;
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <ChatPage chatId={chatIdFromLocation()} />
    </StrictMode>,
  );
}
