import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import type { ChatUIMessage } from '../server/tools';

/** What the server answers for a message's versions. */
interface VersionsAnswer {
  versions: { nodeId: string; messageId: string; leafNodeId: string }[];
}

async function loadMessages(
  apiBase: string,
  chatId: string,
  leaf?: string,
): Promise<ChatUIMessage[]> {
  const query = leaf ? `?leaf=${encodeURIComponent(leaf)}` : '';
  const response = await fetch(
    `${apiBase}/api/chat/${encodeURIComponent(chatId)}/messages${query}`,
  );
  if (response.status === 404) return [];
  if (!response.ok) throw new Error(await response.text());
  return ((await response.json()) as { messages: ChatUIMessage[] }).messages;
}

/** What a stop reads back: the reply the page was streaming, and the question it answers. */
interface Stopped {
  readonly replyId: string | undefined;
  readonly questionId: string | undefined;
}

/**
 * Resolves once the chat's active reply has ended on the server, saved or dropped: the resume
 * route follows the reply's stream to its end, which comes after the save (or answers 204 when
 * the reply already ended).
 */
async function replyEnded(apiBase: string, chatId: string): Promise<void> {
  const response = await fetch(`${apiBase}/api/chat/${encodeURIComponent(chatId)}/stream`);
  await response.text();
}

/**
 * The conversation as stored after a stop: to the stopped reply, or to its question when the
 * reply was dropped (stopped before its first word).
 */
async function storedAfterStop(
  apiBase: string,
  chatId: string,
  stopped: Stopped,
): Promise<ChatUIMessage[]> {
  for (const leaf of [stopped.replyId, stopped.questionId]) {
    if (leaf === undefined) continue;
    const response = await fetch(
      `${apiBase}/api/chat/${encodeURIComponent(chatId)}/messages?leaf=${encodeURIComponent(leaf)}`,
    );
    if (response.status === 404) continue;
    if (!response.ok) throw new Error(await response.text());
    return ((await response.json()) as { messages: ChatUIMessage[] }).messages;
  }
  return loadMessages(apiBase, chatId);
}

/**
 * What the page sends for every message the user writes, a new one or an edited version: the
 * text and its metadata (when it was sent). One place, so an edit is stored as a new message is.
 */
function written(text: string): { text: string; metadata: { sentAt: number } } {
  return { text, metadata: { sentAt: Date.now() } };
}

function textOf(message: ChatUIMessage): string {
  return message.parts
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'tool-getWeather') {
        return part.state === 'output-available'
          ? `[getWeather ${JSON.stringify(part.output)}]`
          : `[getWeather ${part.state}]`;
      }
      return '';
    })
    .join('');
}

/** Props of {@link ChatPage}. */
export interface ChatPageProps {
  /** The chat shown. */
  chatId: string;
  /** Where the API is (the page's own origin when empty). @default '' */
  apiBase?: string;
}

/** One chat: loads the stored path, then talks to the server through useChat. */
export function ChatPage({ chatId, apiBase = '' }: ChatPageProps) {
  const [initial, setInitial] = useState<ChatUIMessage[] | undefined>(undefined);
  useEffect(() => {
    loadMessages(apiBase, chatId).then(setInitial, () => setInitial([]));
  }, [apiBase, chatId]);
  if (initial === undefined) return <p data-testid="loading">Loading…</p>;
  return <Conversation apiBase={apiBase} chatId={chatId} initial={initial} />;
}

function Conversation({
  apiBase,
  chatId,
  initial,
}: {
  apiBase: string;
  chatId: string;
  initial: ChatUIMessage[];
}) {
  const transport = useMemo(
    () => new DefaultChatTransport<ChatUIMessage>({ api: `${apiBase}/api/chat` }),
    [apiBase],
  );
  const { messages, setMessages, sendMessage, regenerate, stop, status, error } =
    useChat<ChatUIMessage>({ id: chatId, messages: initial, transport, resume: true });
  const [draft, setDraft] = useState('');
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [versions, setVersions] = useState<Record<string, VersionsAnswer['versions']>>({});
  const [stopped, setStopped] = useState<Stopped | null>(null);
  const [stopError, setStopError] = useState<string | null>(null);
  const idle = status === 'ready' && stopped === null;
  const busy = status === 'submitted' || status === 'streaming' || stopped !== null;

  // Stop aborts the request: a disconnect, after which the server keeps the reply as far as it
  // got, which can be a word or more past what reached the page. So once useChat has settled,
  // the page waits for the reply to end on the server and shows the stored conversation in place
  // of its own copy: what the page shows after a stop is what a reload shows.
  useEffect(() => {
    if (stopped === null || status === 'submitted' || status === 'streaming') return;
    let cancelled = false;
    (async () => {
      await replyEnded(apiBase, chatId);
      const stored = await storedAfterStop(apiBase, chatId, stopped);
      if (!cancelled) setMessages(stored);
    })()
      .catch((caught: unknown) => {
        if (!cancelled) {
          setStopError(
            `The stopped reply could not be read back (${caught instanceof Error ? caught.message : String(caught)}): reload to see what was kept.`,
          );
        }
      })
      .finally(() => {
        if (!cancelled) setStopped(null);
      });
    return () => {
      cancelled = true;
    };
  }, [apiBase, chatId, setMessages, status, stopped]);

  const stopReply = () => {
    const last = messages.at(-1);
    setStopError(null);
    setStopped({
      replyId: last?.role === 'assistant' ? last.id : undefined,
      questionId: messages.findLast((message) => message.role === 'user')?.id,
    });
    void stop();
  };

  useEffect(() => {
    if (status !== 'ready') return;
    let cancelled = false;
    (async () => {
      const found: Record<string, VersionsAnswer['versions']> = {};
      for (const message of messages) {
        const response = await fetch(
          `${apiBase}/api/chat/${encodeURIComponent(chatId)}/versions/${encodeURIComponent(message.id)}`,
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

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (draft.trim() === '') return;
    void sendMessage(written(draft));
    setDraft('');
  };
  const openVersion = async (leafNodeId: string) => {
    const response = await fetch(
      `${apiBase}/api/chat/${encodeURIComponent(chatId)}/messages?node=${encodeURIComponent(leafNodeId)}`,
    );
    if (response.ok)
      setMessages(((await response.json()) as { messages: ChatUIMessage[] }).messages);
  };

  return (
    <main style={{ maxWidth: 720, margin: '2rem auto', fontFamily: 'system-ui, sans-serif' }}>
      <h1>ctxgraph chat</h1>
      <ol data-testid="messages" style={{ listStyle: 'none', padding: 0 }}>
        {messages.map((message) => {
          const list = versions[message.id];
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
                    void sendMessage({ ...written(editing.text), messageId: message.id });
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
                <button type="button" onClick={() => void regenerate({ messageId: message.id })}>
                  Regenerate
                </button>
              ) : null}
            </li>
          );
        })}
      </ol>
      {error ? <p role="alert">{error.message}</p> : null}
      {stopError ? <p role="alert">{stopError}</p> : null}
      <form onSubmit={submit}>
        <input
          aria-label="Message"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
        {/* Only once the reply streams: before its first chunk the server may not have saved the
            question yet, and the page could not tell what to read back. */}
        {status === 'streaming' && stopped === null ? (
          <button type="button" onClick={stopReply}>
            Stop
          </button>
        ) : null}
      </form>
      <p data-testid="status">{stopped === null ? status : 'stopping'}</p>
    </main>
  );
}
