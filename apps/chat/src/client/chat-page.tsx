import { useChat } from '@ai-sdk/react';
import {
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ChatUIMessage } from '../server/tools';
import {
  chatRoute,
  currentVersionIndex,
  loadConversation,
  type MessageVersionEntry,
  requestStop,
  type StoredConversation,
  textOfParts,
  type VersionsAnswer,
  written,
} from './chat-api';
import { type ChatEvent, type ChatEventsFollower, followChatEvents } from './chat-events';
import { BranchPicker } from './components/branch-picker';
import { ChatHeader } from './components/chat-header';
import { Composer } from './components/composer';
import { ContextGauge, type ContextGaugeProps } from './components/context-gauge';
import { MessageView } from './components/message-view';

const empty: StoredConversation = { messages: [], outcomes: {} };

/** Props of {@link ChatPage}. */
export interface ChatPageProps {
  /** The chat shown. */
  chatId: string;
  /** Where the API is (the page's own origin when empty). @default '' */
  apiBase?: string;
  /** Starts a new chat (the header's "New chat" button; left out when absent). */
  onNewChat?: () => void;
  /** The chat's context use and cost, for the header's gauge (hidden when absent). */
  gauge?: ContextGaugeProps;
}

/** One chat: loads the stored path, then talks to the server through useChat. */
export function ChatPage({ chatId, apiBase = '', onNewChat, gauge }: ChatPageProps) {
  const [initial, setInitial] = useState<StoredConversation | undefined>(undefined);
  useEffect(() => {
    let cancelled = false;
    loadConversation(apiBase, chatId).then(
      (stored) => {
        if (!cancelled) setInitial(stored ?? empty);
      },
      () => {
        if (!cancelled) setInitial(empty);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [apiBase, chatId]);
  if (initial === undefined) {
    return (
      <div className="chat-shell">
        <ChatHeader onNewChat={onNewChat} />
        <p className="loading" data-testid="loading" role="status">
          Loading…
        </p>
      </div>
    );
  }
  return (
    <Conversation
      apiBase={apiBase}
      chatId={chatId}
      initial={initial}
      onNewChat={onNewChat}
      gauge={gauge}
    />
  );
}

/** A stop the page asked for: the reply, and whether the server answered yet. */
interface Stopping {
  readonly replyId: string | undefined;
  readonly answered: boolean;
}

/** What the page's callbacks read as it is now, not as it was when they were made. */
interface Now {
  status: ChatStatus;
  /** Counts the requests the page started: a read that started before one is stale. */
  requests: number;
  /** The chat's latest change event. */
  event: ChatEvent | null;
  /** Live replies this page streamed or followed (never followed twice). */
  followed: Set<string>;
  stopping: boolean;
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

function Conversation({
  apiBase,
  chatId,
  initial,
  onNewChat,
  gauge,
}: {
  apiBase: string;
  chatId: string;
  initial: StoredConversation;
  onNewChat: (() => void) | undefined;
  gauge: ContextGaugeProps | undefined;
}) {
  const transport = useMemo(
    () => new DefaultChatTransport<ChatUIMessage>({ api: `${apiBase}/api/chat` }),
    [apiBase],
  );
  // `resume`: on mount the page asks GET …/stream for a reply that is live (a reload mid-reply).
  const {
    messages,
    setMessages,
    sendMessage,
    regenerate,
    resumeStream,
    stop,
    addToolOutput,
    status,
    error,
  } = useChat<ChatUIMessage>({
    id: chatId,
    messages: initial.messages,
    transport,
    resume: true,
    // A client-side tool's answer (the confirmation) continues the reply at once.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  });
  const [outcomes, setOutcomes] = useState(initial.outcomes);
  const [draft, setDraft] = useState('');
  const [versions, setVersions] = useState<Record<string, MessageVersionEntry[]>>({});
  // The version the user last picked of each message (its node id), to mark it as current.
  const [picked, setPicked] = useState<Record<string, string>>({});
  const [stopping, setStopping] = useState<Stopping | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const now = useRef<Now>({
    status,
    requests: 0,
    event: null,
    followed: new Set(),
    stopping: false,
  });
  now.current.status = status;
  now.current.stopping = stopping !== null;
  const idle = status === 'ready' && stopping === null;
  const busy = busyStatus(status) || stopping !== null;

  /**
   * Shows the stored conversation (`query`: `?leaf=…`, or the newest path) in place of the page's
   * own copy, unless a request started meanwhile (its stream owns the messages then). True when
   * it did.
   */
  const showStored = useCallback(
    async (query: string): Promise<boolean> => {
      const requests = now.current.requests;
      const stored = await loadConversation(apiBase, chatId, query);
      if (stored === null || now.current.requests !== requests) return false;
      if (busyStatus(now.current.status)) return false;
      setMessages(stored.messages);
      setOutcomes(stored.outcomes);
      return true;
    },
    [apiBase, chatId, setMessages],
  );

  /**
   * Brings the page up to the chat's latest event while it streams nothing itself: follows a
   * reply that is live and new to it (another tab's, or one that went on without this page),
   * else shows what is stored.
   */
  const catchUp = useCallback(() => {
    const { event, followed } = now.current;
    if (event === null || busyStatus(now.current.status) || now.current.stopping) return;
    const replyId = event.live;
    if (replyId !== null && !followed.has(replyId)) {
      followed.add(replyId);
      now.current.requests += 1;
      const requests = now.current.requests;
      void (async () => {
        // The question the reply answers first (written with the reply's record), then the reply.
        const stored = await loadConversation(apiBase, chatId);
        if (now.current.requests !== requests || busyStatus(now.current.status)) return;
        if (stored !== null) {
          setMessages(stored.messages);
          setOutcomes(stored.outcomes);
        }
        await resumeStream();
      })().catch(() => {
        // The next event catches up again.
        followed.delete(replyId);
      });
      return;
    }
    void showStored('').catch(() => {
      // The next event shows it.
    });
  }, [apiBase, chatId, resumeStream, setMessages, showStored]);
  const catchUpNow = useRef(catchUp);
  catchUpNow.current = catchUp;

  // The chat's change events: another tab's turn, a stop, a reply ended by another process.
  const follower = useRef<ChatEventsFollower | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    follower.current = followChatEvents({
      url: chatRoute(apiBase, chatId, '/events'),
      signal: controller.signal,
      onEvent: (event) => {
        now.current.event = event;
        catchUpNow.current();
      },
    });
    return () => controller.abort();
  }, [apiBase, chatId]);

  // A reply this page streams is one it follows; a stream that ended catches the page up.
  const previousStatus = useRef(status);
  useEffect(() => {
    const before = previousStatus.current;
    previousStatus.current = status;
    const last = messages.at(-1);
    if (status === 'streaming' && last?.role === 'assistant') {
      now.current.followed.add(last.id);
      // A new chat exists now: its events can be followed.
      follower.current?.retryNow();
    }
    if (before === status) return;
    // A stream cut off (the server went away): the reply may still be live elsewhere.
    if (status === 'error' && last?.role === 'assistant') now.current.followed.delete(last.id);
    if (status === 'ready' || status === 'error') catchUpNow.current();
  }, [messages, status]);

  // Stop asks the server (POST …/stop), which stops the reply wherever it runs and answers once
  // the reply is saved; then the page shows the stored conversation, marked, as a reload would.
  useEffect(() => {
    if (stopping === null || !stopping.answered || busyStatus(status)) return;
    let cancelled = false;
    (async () => {
      const { replyId } = stopping;
      const shown =
        replyId !== undefined && (await showStored(`?leaf=${encodeURIComponent(replyId)}`));
      if (!shown) await showStored('');
    })()
      .catch((caught: unknown) => {
        if (!cancelled) {
          setNotice(
            `The stopped reply could not be read back (${caught instanceof Error ? caught.message : String(caught)}): reload to see what was kept.`,
          );
        }
      })
      .finally(() => {
        if (!cancelled) setStopping(null);
      });
    return () => {
      cancelled = true;
    };
  }, [showStored, status, stopping]);

  const stopReply = () => {
    const last = messages.at(-1);
    const replyId = last?.role === 'assistant' ? last.id : undefined;
    setNotice(null);
    setStopping({ replyId, answered: false });
    requestStop(apiBase, chatId, replyId).then(
      () => {
        // The reply is saved: what of its stream is still on the way adds nothing the stored
        // copy lacks.
        void stop();
        setStopping({ replyId, answered: true });
      },
      (caught: unknown) => {
        setNotice(
          `The reply could not be stopped (${caught instanceof Error ? caught.message : String(caught)}).`,
        );
        setStopping(null);
      },
    );
  };

  useEffect(() => {
    if (status !== 'ready') return;
    let cancelled = false;
    (async () => {
      const found: Record<string, MessageVersionEntry[]> = {};
      for (const message of messages) {
        const response = await fetch(
          chatRoute(apiBase, chatId, `/versions/${encodeURIComponent(message.id)}`),
        );
        if (!response.ok) continue;
        const answer = (await response.json()) as VersionsAnswer;
        if (answer.versions.length <= 1) continue;
        found[message.id] = answer.versions;
        // A regenerated reply's versions have ids of their own: each one opened has its picker
        // at once, without waiting for the next read.
        for (const version of answer.versions) found[version.messageId] ??= answer.versions;
      }
      if (!cancelled) setVersions(found);
    })().catch(() => {
      // The versions are an extra: a failed read leaves the buttons out.
    });
    return () => {
      cancelled = true;
    };
  }, [apiBase, chatId, messages, status]);

  /** Starts a request of the page's own: reads that started before it are stale. */
  const request = (run: () => Promise<void>): void => {
    now.current.requests += 1;
    void run();
  };
  const composerInput = (): HTMLTextAreaElement | null =>
    document.querySelector<HTMLTextAreaElement>('textarea.composer-input[aria-label="Message"]');
  const send = (text: string) => {
    if (text.trim() === '') return;
    request(() => sendMessage(written(text)));
    setDraft('');
  };
  const editMessage = (messageId: string, text: string) => {
    setPicked(({ [messageId]: _, ...others }) => others);
    request(() => sendMessage({ ...written(text), messageId }));
    composerInput()?.focus();
  };
  const regenerateReply = (messageId: string) => {
    request(() => regenerate({ messageId }));
    composerInput()?.focus();
  };
  const answerConfirmation = (toolCallId: string, confirmed: boolean) => {
    request(async () => {
      await addToolOutput({ tool: 'askForConfirmation', toolCallId, output: { confirmed } });
    });
  };
  /** The arrow to focus once a version opened: the message's position and the arrow's name. */
  const focusAfterSwitch = useRef<{ position: number; arrow: string } | null>(null);
  const openVersion = async (version: MessageVersionEntry, position: number, arrow: string) => {
    setPicked((before) => ({ ...before, [version.messageId]: version.nodeId }));
    focusAfterSwitch.current = { position, arrow };
    await showStored(`?node=${encodeURIComponent(version.leafNodeId)}`);
  };
  // Another version is another message (a regenerated reply has an id of its own): the focus
  // goes to the same arrow on it, or the other one once that one is disabled at an end.
  const messageList = useRef<HTMLOListElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs after each render of new messages or versions, when the picker may have appeared.
  useEffect(() => {
    const wanted = focusAfterSwitch.current;
    if (wanted === null) return;
    const item = messageList.current?.children.item(wanted.position);
    const arrows = [...(item?.querySelectorAll<HTMLButtonElement>('.branch-picker button') ?? [])];
    if (arrows.length === 0) return;
    focusAfterSwitch.current = null;
    const same = arrows.find((arrow) => arrow.getAttribute('aria-label') === wanted.arrow);
    (same && !same.disabled ? same : arrows.find((arrow) => !arrow.disabled))?.focus();
  }, [messages, versions]);

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
  const shownStatus = stopping === null ? status : 'stopping';
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
            const list = versions[message.id];
            const current =
              list === undefined ? 0 : currentVersionIndex(list, message, picked[message.id]);
            return (
              <MessageView
                key={message.id}
                message={message}
                outcome={outcomes[message.id]}
                streaming={busy && index === messages.length - 1 && message.role === 'assistant'}
                branchPicker={
                  list ? (
                    <BranchPicker
                      index={current}
                      count={list.length}
                      disabled={!idle}
                      onSelect={(next) => {
                        const version = list[next];
                        const arrow = next < current ? 'Previous version' : 'Next version';
                        if (version) void openVersion(version, index, arrow);
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
        {notice ? (
          <p className="notice notice-error" role="alert">
            {notice}
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
          onStop={status === 'streaming' && stopping === null ? stopReply : undefined}
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
