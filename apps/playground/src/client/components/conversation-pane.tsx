import { type CSSProperties, type ReactElement, useEffect, useMemo, useRef, useState } from 'react';
import { MODEL_VARIABLES } from '../../shared/wire';
import type { ChatView, PlaygroundInfo } from '../api';
import { textOf } from '../message-text';
import { BranchIcon } from './icons';

/** Where the page remembers that the no-model notice was dismissed. */
const HINT_KEY = 'ctxgraph.no-model-notice';

/** How many of the latest messages are drawn at first, and how many more each "earlier" adds. */
const PAGE = 200;

/** Props of {@link ConversationPane}. */
export interface ConversationPaneProps {
  view: ChatView;
  model: PlaygroundInfo['model'];
  /** The model's reply as it streams in, or null. */
  streaming: string | null;
  /** The user message sent to the model, shown until the saved chat comes back. */
  pendingUser: string | null;
  busy: boolean;
  onSend: (role: 'user' | 'assistant', text: string) => Promise<boolean>;
  onAsk: (text: string) => Promise<boolean>;
  /** Stops the model's reply while it streams (what was written so far is saved). */
  onStop: () => void;
  /** Opens the compaction of the active branch. */
  onCompact: () => void;
  /** Its size in the column (set by the layout). */
  style?: CSSProperties;
}

/**
 * The ids of the summaries a compaction put in place of older messages: the graph's compaction
 * nodes (the engine keeps its records beside the messages, never in what the page gets).
 */
function summaryIds(view: ChatView): ReadonlySet<string> {
  return new Set(view.graph.nodes.flatMap((node) => (node.compaction === null ? [] : [node.id])));
}

/** The active branch's messages and the composer. */
export function ConversationPane(props: ConversationPaneProps): ReactElement {
  const [text, setText] = useState('');
  const [reply, setReply] = useState('');
  const [shown, setShown] = useState(PAGE);
  const hidden = Math.max(0, props.view.messages.length - shown);
  const [hintDismissed, setHintDismissed] = useState(
    () => window.localStorage.getItem(HINT_KEY) === 'dismissed',
  );
  const bottom = useRef<HTMLDivElement>(null);
  const last = props.view.messages.at(-1);
  const awaitingReply = props.model === null && last?.role === 'user';
  const summaries = useMemo(() => summaryIds(props.view), [props.view]);
  const isSummary = (message: { id: string }): boolean => summaries.has(message.id);
  // Replies whose model call did not complete (stopped, or failed), from their recorded usage.
  const unfinished = useMemo(
    () =>
      new Map(
        props.view.graph.nodes.flatMap((node) =>
          node.outcome === null ? [] : [[node.id, node.outcome] as const],
        ),
      ),
    [props.view.graph.nodes],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll whenever the conversation grows
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: 'end' });
  }, [props.view.messages.length, props.streaming]);

  const send = async () => {
    if (text.trim() === '') return;
    const sent = props.model ? await props.onAsk(text) : await props.onSend('user', text);
    if (sent) setText('');
  };
  const sendReply = async () => {
    if (reply.trim() === '') return;
    if (await props.onSend('assistant', reply)) setReply('');
  };

  return (
    <section className="panel conversation-panel" aria-label="Conversation" style={props.style}>
      <header className="panel-header">
        <h2>Conversation</h2>
        <span className="pill branch-pill" title="The active branch">
          <BranchIcon /> {props.view.branch}
        </span>
        <span className="grow" />
        <span className="muted small">
          {props.model ? `model: ${props.model.modelId}` : 'no model: you write the replies'}
        </span>
        <button
          type="button"
          disabled={props.busy || props.view.messages.length < 2}
          onClick={props.onCompact}
          title="Replace the older messages of this branch by a summary"
        >
          Compact…
        </button>
      </header>
      <div className="panel-body messages">
        {props.view.messages.length === 0 && props.streaming === null ? (
          <p className="muted center">No messages on this branch yet.</p>
        ) : null}
        {hidden > 0 ? (
          <button type="button" className="link earlier" onClick={() => setShown(shown + PAGE)}>
            Show {Math.min(hidden, PAGE).toLocaleString('en-US')} earlier messages (
            {hidden.toLocaleString('en-US')} not shown)
          </button>
        ) : null}
        {props.view.messages.slice(hidden).map((message) => (
          <div
            key={message.id}
            className={`message ${message.role}${isSummary(message) ? ' summary-message' : ''}`}
            data-message-id={message.id}
          >
            <div className="message-role">
              {isSummary(message) ? 'summary of earlier messages' : message.role}
              {unfinished.has(message.id) ? (
                <span className="outcome-mark" data-testid="reply-outcome">
                  {unfinished.get(message.id) === 'aborted' ? ' · stopped' : ' · failed'}
                </span>
              ) : null}
            </div>
            <div className="message-text">{textOf(message.parts)}</div>
          </div>
        ))}
        {props.pendingUser !== null ? (
          <div className="message user">
            <div className="message-role">user</div>
            <div className="message-text">{props.pendingUser}</div>
          </div>
        ) : null}
        {props.streaming !== null ? (
          <div className="message assistant streaming">
            <div className="message-role">assistant</div>
            <div className="message-text">{props.streaming || '…'}</div>
          </div>
        ) : null}
        <div ref={bottom} />
      </div>
      <div className="composer">
        {props.model === null && !hintDismissed ? (
          <p className="notice" data-testid="no-model-notice">
            <span>
              No model: you write the replies. For a model, start the server with{' '}
              <code>{MODEL_VARIABLES.kind}=echo</code> (offline), or{' '}
              <code>{MODEL_VARIABLES.apiKey}</code> or <code>{MODEL_VARIABLES.baseURL}</code> (any
              OpenAI-compatible server) and <code>{MODEL_VARIABLES.modelId}</code>.
            </span>
            <button
              type="button"
              className="icon"
              aria-label="Dismiss the no-model notice"
              onClick={() => {
                window.localStorage.setItem(HINT_KEY, 'dismissed');
                setHintDismissed(true);
              }}
            >
              ×
            </button>
          </p>
        ) : null}
        {awaitingReply ? (
          <div className="composer-row">
            <textarea
              rows={2}
              aria-label="Assistant reply"
              placeholder="Write the assistant’s reply… (Ctrl/⌘ + Enter adds it)"
              value={reply}
              onChange={(event) => setReply(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) void sendReply();
              }}
            />
            <button
              type="button"
              className="primary"
              disabled={props.busy || reply.trim() === ''}
              onClick={() => void sendReply()}
            >
              Add reply
            </button>
          </div>
        ) : (
          <div className="composer-row">
            <textarea
              rows={2}
              aria-label="User message"
              placeholder={
                props.model
                  ? 'Ask the model… (Ctrl/⌘ + Enter sends)'
                  : 'Write a user message… (Ctrl/⌘ + Enter sends)'
              }
              value={text}
              onChange={(event) => setText(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) void send();
              }}
            />
            {props.streaming !== null ? (
              <button
                type="button"
                className="danger"
                aria-label="Stop the reply"
                title="Stop the model here: what it wrote so far is saved, marked as stopped"
                onClick={props.onStop}
              >
                ■ Stop
              </button>
            ) : (
              <button
                type="button"
                className="primary"
                disabled={props.busy || text.trim() === ''}
                onClick={() => void send()}
              >
                Send
              </button>
            )}
          </div>
        )}
      </div>
    </section>
  );
}
