import {
  readNodeFromUrl,
  type UseCtxgraphChatHelpers,
  useCtxgraphChat,
  writeNodeToUrl,
} from '@ctxgraph/react';
import { type ChatStatus, lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { useEffect, useRef, useState } from 'react';
import type { ChatUIMessage } from '../server/tools';
import { type ContextGaugeAnswer, gaugeOf, textOfParts, written } from './chat-api';
import { BranchPicker } from './components/branch-picker';
import { ChatHeader } from './components/chat-header';
import { Composer } from './components/composer';
import { ContextGauge, type ContextGaugeProps } from './components/context-gauge';
import { MessageView } from './components/message-view';

/** Props of {@link ChatPage}. */
export interface ChatPageProps {
  /** The chat shown. */
  chatId: string;
  /** Where the API is (the page's own origin when empty). @default '' */
  apiBase?: string;
  /** Starts a new chat (the header's "New chat" button; left out when absent). */
  onNewChat?: () => void;
}

type Chat = UseCtxgraphChatHelpers<ChatUIMessage>;

/**
 * One chat, on `useCtxgraphChat` of @ctxgraph/react: it loads the saved chat (a new one when the
 * server has none), shows the version the URL names (`?node=`) and keeps the user's choice there,
 * stops replies through the server, resumes a live reply on open, follows other tabs, and posts
 * only the new message with the node it follows. Everything below is how the page looks.
 */
export function ChatPage({ chatId, apiBase = '', onNewChat }: ChatPageProps) {
  const chat = useCtxgraphChat<ChatUIMessage>({
    id: chatId,
    api: `${apiBase}/api/chat`,
    node: readNodeFromUrl(),
    onNodeChange: writeNodeToUrl,
    // A client-side tool's answer (the confirmation) continues the reply at once.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  });
  if (!chat.loaded) {
    return (
      <div className="chat-shell">
        <ChatHeader onNewChat={onNewChat} />
        <p className="loading" data-testid="loading" role="status">
          Loading…
        </p>
      </div>
    );
  }
  return <Conversation chat={chat} onNewChat={onNewChat} />;
}

const busyStatus = (status: ChatStatus): boolean =>
  status === 'submitted' || status === 'streaming';

/** Words for each state of the page, announced as it changes (the composer's live region). */
const statusWords: Readonly<Record<ChatStatus | 'stopping', string>> = {
  ready: '',
  submitted: 'Sending…',
  streaming: 'The assistant is replying…',
  error: 'The reply failed.',
  stopping: 'Stopping…',
};

/** What a new chat offers to start with: one of each thing the page shows. */
const suggestions: readonly string[] = [
  'What is the weather in Paris?',
  'Please confirm the order before you place it',
  'Show me **bold**, `code` and a list:\n- one\n- two',
];

/** The chat's context use and cost, read again whenever the chat settles (`GET …/context`). */
function useGauge(chat: Chat): ContextGaugeProps | undefined {
  const [gauge, setGauge] = useState<ContextGaugeProps | undefined>(undefined);
  const { status, isNew, readContext, messages } = chat;
  const settled = status === 'ready' && !chat.stopping;
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again after each settled change of the messages.
  useEffect(() => {
    if (!settled || isNew) return;
    let cancelled = false;
    readContext().then(
      (answer) => {
        if (!cancelled) setGauge(gaugeOf(answer as ContextGaugeAnswer));
      },
      () => {
        // The gauge is an extra: a failed read keeps the last one.
      },
    );
    return () => {
      cancelled = true;
    };
  }, [settled, isNew, readContext, messages]);
  return gauge;
}

function Conversation({ chat, onNewChat }: { chat: Chat; onNewChat: (() => void) | undefined }) {
  const {
    messages,
    sendMessage,
    regenerate,
    addToolOutput,
    status,
    error,
    syncError,
    outcomes,
    stopping,
  } = chat;
  const [draft, setDraft] = useState('');
  const gauge = useGauge(chat);
  const idle = status === 'ready' && !stopping;
  const busy = busyStatus(status) || stopping;

  const composerInput = (): HTMLTextAreaElement | null =>
    document.querySelector<HTMLTextAreaElement>('textarea.composer-input[aria-label="Message"]');
  const send = (text: string) => {
    if (text.trim() === '') return;
    void sendMessage(written(text));
    setDraft('');
  };
  const editMessage = (messageId: string, text: string) => {
    void sendMessage({ ...written(text), messageId });
    composerInput()?.focus();
  };
  const regenerateReply = (messageId: string) => {
    void regenerate({ messageId });
    composerInput()?.focus();
  };
  const answerConfirmation = (toolCallId: string, confirmed: boolean) => {
    void addToolOutput({ tool: 'askForConfirmation', toolCallId, output: { confirmed } });
  };
  /** The arrow to focus once a version opened: the message's position and the arrow's name. */
  const focusAfterSwitch = useRef<{ position: number; arrow: string } | null>(null);
  // Another version is another message (a regenerated reply has an id of its own): the focus
  // goes to the same arrow on it, or the other one once that one is disabled at an end.
  const messageList = useRef<HTMLOListElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs after each render of new messages, when the picker may have appeared.
  useEffect(() => {
    const wanted = focusAfterSwitch.current;
    if (wanted === null) return;
    const item = messageList.current?.children.item(wanted.position);
    const arrows = [...(item?.querySelectorAll<HTMLButtonElement>('.branch-picker button') ?? [])];
    if (arrows.length === 0) return;
    focusAfterSwitch.current = null;
    const same = arrows.find((arrow) => arrow.getAttribute('aria-label') === wanted.arrow);
    (same && !same.disabled ? same : arrows.find((arrow) => !arrow.disabled))?.focus();
  }, [messages]);

  // The newest message stays in view as it grows, unless the user scrolled up to read.
  const end = useRef<HTMLDivElement>(null);
  const last = messages.at(-1);
  const lastLength = last === undefined ? 0 : JSON.stringify(last.parts).length;
  useEffect(() => {
    if (messages.length === 0 && lastLength === 0) return;
    const scroller = document.scrollingElement ?? document.documentElement;
    const fromBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
    // Without layout (jsdom) there is nothing to scroll.
    if (fromBottom < 240 && typeof end.current?.scrollIntoView === 'function') {
      end.current.scrollIntoView({ block: 'end' });
    }
  }, [messages.length, lastLength]);

  const title = messages.find((message) => message.role === 'user');
  const shownStatus = stopping ? 'stopping' : status;
  return (
    <div className="chat-shell">
      <ChatHeader title={title ? textOfParts(title) : undefined} onNewChat={onNewChat}>
        {gauge ? <ContextGauge {...gauge} /> : null}
      </ChatHeader>
      <main className="chat-main">
        {messages.length === 0 ? (
          <section className="empty-chat" aria-labelledby="empty-chat-title">
            <h2 id="empty-chat-title">Start a conversation</h2>
            <p>
              Replies are kept as a tree: edit a question or regenerate a reply and switch between
              versions; a reload, a second tab or another server picks up where you are.
            </p>
            <ul className="suggestions">
              {suggestions.map((suggestion) => (
                <li key={suggestion}>
                  <button
                    type="button"
                    className="suggestion"
                    onClick={() => {
                      setDraft(suggestion);
                      composerInput()?.focus();
                    }}
                  >
                    {suggestion.replace(/\n/g, ' ')}
                  </button>
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        <ol ref={messageList} className="messages" data-testid="messages" aria-label="Conversation">
          {messages.map((message, index) => {
            const versions = chat.versionsOf(message.id);
            return (
              <MessageView
                key={message.id}
                message={message}
                outcome={outcomes[message.id]}
                streaming={busy && index === messages.length - 1 && message.role === 'assistant'}
                branchPicker={
                  versions ? (
                    <BranchPicker
                      index={versions.index}
                      count={versions.count}
                      disabled={!idle}
                      onSelect={(next) => {
                        const arrow = next < versions.index ? 'Previous version' : 'Next version';
                        focusAfterSwitch.current = { position: index, arrow };
                        void versions.select(next);
                      }}
                    />
                  ) : null
                }
                onEdit={
                  message.role === 'user' && idle
                    ? (text) => editMessage(message.id, text)
                    : undefined
                }
                onRegenerate={
                  message.role === 'assistant' && idle
                    ? () => regenerateReply(message.id)
                    : undefined
                }
                onAnswerConfirmation={idle ? answerConfirmation : undefined}
              />
            );
          })}
        </ol>
        {busy && last?.role === 'user' ? (
          <p className="pending-reply" aria-hidden="true">
            <span className="typing">
              <span />
              <span />
              <span />
            </span>
          </p>
        ) : null}
        {error ? (
          <p className="notice notice-error" role="alert">
            {error.message}
          </p>
        ) : null}
        {syncError ? (
          <p className="notice notice-error" role="alert">
            {syncError.message}
          </p>
        ) : null}
        <div ref={end} />
      </main>
      <footer className="chat-footer">
        <Composer
          value={draft}
          onChange={setDraft}
          onSubmit={() => send(draft)}
          busy={busy}
          // Once the reply streams, the page knows its id (its start chunk) and stops that one.
          onStop={status === 'streaming' && !stopping ? () => void chat.stop() : undefined}
          statusText={statusWords[shownStatus]}
        />
        {/* The page's state in one word, for scripts and tests: ready, submitted, streaming, stopping, error. */}
        <p className="visually-hidden" data-testid="status">
          {shownStatus}
        </p>
      </footer>
    </div>
  );
}
