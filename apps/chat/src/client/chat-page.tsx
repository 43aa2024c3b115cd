import { useChat } from '@ai-sdk/react';
import { type ChatStatus, DefaultChatTransport } from 'ai';
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ChatUIMessage } from '../server/tools';
import {
  chatRoute,
  loadConversation,
  type ReplyOutcome,
  requestStop,
  type StoredConversation,
  textOf,
  type VersionsAnswer,
  written,
} from './chat-api';
import { type ChatEvent, type ChatEventsFollower, followChatEvents } from './chat-events';

/** How the page marks a reply that did not end well. */
const outcomeLabels: Readonly<Record<ReplyOutcome, string>> = {
  aborted: 'stopped',
  interrupted: 'interrupted',
};

const empty: StoredConversation = { messages: [], outcomes: {} };

/** Props of {@link ChatPage}. */
export interface ChatPageProps {
  /** The chat shown. */
  chatId: string;
  /** Where the API is (the page's own origin when empty). @default '' */
  apiBase?: string;
}

/** One chat: loads the stored path, then talks to the server through useChat. */
export function ChatPage({ chatId, apiBase = '' }: ChatPageProps) {
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
  if (initial === undefined) return <p data-testid="loading">Loading…</p>;
  return <Conversation apiBase={apiBase} chatId={chatId} initial={initial} />;
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

function Conversation({
  apiBase,
  chatId,
  initial,
}: {
  apiBase: string;
  chatId: string;
  initial: StoredConversation;
}) {
  const transport = useMemo(
    () => new DefaultChatTransport<ChatUIMessage>({ api: `${apiBase}/api/chat` }),
    [apiBase],
  );
  // `resume`: on mount the page asks GET …/stream for a reply that is live (a reload mid-reply).
  const { messages, setMessages, sendMessage, regenerate, resumeStream, stop, status, error } =
    useChat<ChatUIMessage>({
      id: chatId,
      messages: initial.messages,
      transport,
      resume: true,
    });
  const [outcomes, setOutcomes] = useState(initial.outcomes);
  const [draft, setDraft] = useState('');
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [versions, setVersions] = useState<Record<string, VersionsAnswer['versions']>>({});
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
      const found: Record<string, VersionsAnswer['versions']> = {};
      for (const message of messages) {
        const response = await fetch(
          chatRoute(apiBase, chatId, `/versions/${encodeURIComponent(message.id)}`),
        );
        if (!response.ok) continue;
        const answer = (await response.json()) as VersionsAnswer;
        if (answer.versions.length > 1) found[message.id] = answer.versions;
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
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (draft.trim() === '') return;
    const text = draft;
    request(() => sendMessage(written(text)));
    setDraft('');
  };
  const openVersion = async (leafNodeId: string) => {
    await showStored(`?node=${encodeURIComponent(leafNodeId)}`);
  };

  return (
    <main style={{ maxWidth: 720, margin: '2rem auto', fontFamily: 'system-ui, sans-serif' }}>
      <h1>ctxgraph chat</h1>
      <ol data-testid="messages" style={{ listStyle: 'none', padding: 0 }}>
        {messages.map((message) => {
          const list = versions[message.id];
          const outcome = outcomes[message.id];
          return (
            <li
              key={message.id}
              data-role={message.role}
              data-testid="message"
              style={{ margin: '0.75rem 0' }}
            >
              <strong>{message.role === 'user' ? 'You' : 'Assistant'}: </strong>
              {editing?.id === message.id ? (
                <form
                  onSubmit={(event) => {
                    event.preventDefault();
                    const text = editing.text;
                    request(() => sendMessage({ ...written(text), messageId: message.id }));
                    setEditing(null);
                  }}
                >
                  <input
                    aria-label="Edit message"
                    value={editing.text}
                    onChange={(event) => setEditing({ id: message.id, text: event.target.value })}
                  />
                  <button type="submit">Save and send</button>
                </form>
              ) : (
                <span data-testid="message-text">{textOf(message)}</span>
              )}
              {outcome ? (
                <em data-testid="outcome" data-outcome={outcome} style={{ marginLeft: 8 }}>
                  {outcomeLabels[outcome]}
                </em>
              ) : null}
              {list ? (
                <span data-testid="versions" style={{ marginLeft: 8 }}>
                  {list.map((version, index) => (
                    <button
                      key={version.nodeId}
                      type="button"
                      onClick={() => void openVersion(version.leafNodeId)}
                    >
                      {index + 1} / {list.length}
                    </button>
                  ))}
                </span>
              ) : null}
              {message.role === 'user' && idle ? (
                <button
                  type="button"
                  onClick={() => setEditing({ id: message.id, text: textOf(message) })}
                >
                  Edit
                </button>
              ) : null}
              {message.role === 'assistant' && idle ? (
                <button
                  type="button"
                  onClick={() => request(() => regenerate({ messageId: message.id }))}
                >
                  Regenerate
                </button>
              ) : null}
            </li>
          );
        })}
      </ol>
      {error ? <p role="alert">{error.message}</p> : null}
      {notice ? <p role="alert">{notice}</p> : null}
      <form onSubmit={submit}>
        <input
          aria-label="Message"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
        {/* Once the reply streams, the page knows its id (its start chunk) and stops that one. */}
        {status === 'streaming' && stopping === null ? (
          <button type="button" onClick={stopReply}>
            Stop
          </button>
        ) : null}
      </form>
      <p data-testid="status">{stopping === null ? status : 'stopping'}</p>
    </main>
  );
}
