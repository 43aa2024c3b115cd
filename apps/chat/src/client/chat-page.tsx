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
              {message.role === 'user' && status === 'ready' ? (
                <button
                  type="button"
                  onClick={() => setEditing({ id: message.id, text: textOf(message) })}
                >
                  Edit
                </button>
              ) : null}
              {message.role === 'assistant' && status === 'ready' ? (
                <button type="button" onClick={() => void regenerate({ messageId: message.id })}>
                  Regenerate
                </button>
              ) : null}
            </li>
          );
        })}
      </ol>
      {error ? <p role="alert">{error.message}</p> : null}
      <form onSubmit={submit}>
        <input
          aria-label="Message"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
        />
        <button type="submit" disabled={status === 'submitted' || status === 'streaming'}>
          Send
        </button>
        {status === 'streaming' || status === 'submitted' ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : null}
      </form>
      <p data-testid="status">{status}</p>
    </main>
  );
}
