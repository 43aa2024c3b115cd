import type { ChatRecord, JsonValue } from '@ctxgraph/fragments-core';
import { type ReactElement, useCallback, useEffect, useState } from 'react';
import {
  api,
  type ChatView,
  type PlaygroundInfo,
  type RendererName,
  setApiUser,
  streamReply,
} from './api';
import { BudgetDialog, type RecordedCall } from './components/budget-dialog';
import { ChatList } from './components/chat-list';
import { CompactDialog } from './components/compact-dialog';
import { CompareDialog } from './components/compare-dialog';
import { ContextPane, type DraftPreview } from './components/context-pane';
import { ConversationPane } from './components/conversation-pane';
import { DeleteBranchDialog } from './components/delete-branch-dialog';
import { GraphPane } from './components/graph-pane';
import { InspectDialog } from './components/inspect-dialog';
import { PromptPanel } from './components/prompt-panel';
import { describeError } from './describe-error';

interface Notice {
  kind: 'error' | 'info';
  title: string;
  message: string;
}

function noticeFor(error: unknown): Notice {
  return { kind: 'error', ...describeError(error) };
}

function chatFromHash(): string | null {
  const match = /^#\/chat\/(.+)$/.exec(window.location.hash);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

const storedRenderer = (): RendererName => {
  const value = window.localStorage.getItem('ctxgraph.renderer');
  return value === 'markdown' || value === 'toon' ? value : 'xml';
};

/** The playground page: chats | context + prompt | conversation + graph. */
export function App(): ReactElement {
  const [info, setInfo] = useState<PlaygroundInfo | null>(null);
  const [userId, setUserId] = useState<string | null>(null);
  const [userDraft, setUserDraft] = useState('');
  const [chats, setChats] = useState<ChatRecord[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [chatId, setChatId] = useState<string | null>(chatFromHash());
  const [view, setView] = useState<ChatView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const [streaming, setStreaming] = useState<string | null>(null);
  const [renderer, setRenderer] = useState<RendererName>(storedRenderer);
  const [preview, setPreview] = useState<DraftPreview | null>(null);
  const [snapshot, setSnapshot] = useState<Record<string, unknown> | null>(null);
  const [budgetOpen, setBudgetOpen] = useState(false);
  const [maxInputTokens, setMaxInputTokens] = useState(
    () => Number(window.localStorage.getItem('ctxgraph.budget')) || 4000,
  );
  const [calls, setCalls] = useState<{ chatId: string; list: RecordedCall[] }>({
    chatId: '',
    list: [],
  });
  const [comparing, setComparing] = useState<{ left: string; right: string } | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [compacting, setCompacting] = useState(false);
  const [costModel, setCostModel] = useState<string | null>(() =>
    window.localStorage.getItem('ctxgraph.cost-model'),
  );
  const [chatError, setChatError] = useState<string | null>(null);
  const [pendingUser, setPendingUser] = useState<string | null>(null);

  useEffect(() => {
    api
      .info()
      .then((result) => {
        setInfo(result);
        const user = window.localStorage.getItem('ctxgraph.user') || result.defaultUserId;
        setApiUser(user);
        setUserId(user);
        setUserDraft(user);
      })
      .catch((error: unknown) => setNotice(noticeFor(error)));
  }, []);

  const refreshChats = useCallback(async () => {
    const page = await api.listChats();
    setChats([...page.items]);
    setCursor(page.nextCursor);
  }, []);

  useEffect(() => {
    if (userId === null) return;
    refreshChats().catch((error: unknown) => setNotice(noticeFor(error)));
  }, [userId, refreshChats]);

  useEffect(() => {
    const onHash = () => setChatId(chatFromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (userId === null) return;
    if (chatId === null) {
      setView(null);
      return;
    }
    setView(null);
    setChatError(null);
    api
      .chat(chatId)
      .then(setView)
      .catch((error: unknown) => {
        // Told once, where the chat would be (not in the notice bar as well).
        setChatError(describeError(error).message);
      });
  }, [chatId, userId]);

  /** Runs an action, shows its error, refreshes the chat list's order; true when it worked. */
  const run = useCallback(
    async (action: () => Promise<ChatView | null>, success?: string): Promise<boolean> => {
      setBusy(true);
      // Cleared before, not after: an action may set a notice of its own (which branch it made).
      setNotice(null);
      try {
        const next = await action();
        if (next) setView(next);
        if (success) setNotice({ kind: 'info', title: 'Done', message: success });
        await refreshChats();
        return true;
      } catch (error) {
        setNotice(noticeFor(error));
        return false;
      } finally {
        setBusy(false);
      }
    },
    [refreshChats],
  );

  const openChat = (id: string) => {
    window.location.hash = `#/chat/${encodeURIComponent(id)}`;
  };

  const switchUser = () => {
    const next = userDraft.trim();
    if (next === '' || next === userId) return;
    window.localStorage.setItem('ctxgraph.user', next);
    setApiUser(next);
    setUserId(next);
    // The open chat is reloaded as the new user (the effect on userId): another user's chat is
    // refused by the store, and the page shows its message.
    setNotice({
      kind: 'info',
      title: `Now acting as “${next}”`,
      message: 'Your chats are listed on the left.',
    });
  };

  const chooseRenderer = (name: RendererName) => {
    setRenderer(name);
    window.localStorage.setItem('ctxgraph.renderer', name);
  };

  const active = view?.chat.id === chatId ? view : null;
  const ask = async (text: string): Promise<boolean> => {
    if (!active) return false;
    setStreaming('');
    setPendingUser(text);
    try {
      return await run(() =>
        streamReply(active.chat.id, text, renderer, (delta) =>
          setStreaming((old) => (old ?? '') + delta),
        ),
      );
    } finally {
      setStreaming(null);
      setPendingUser(null);
      // The user message is saved even when the model fails: show it.
      api.chat(active.chat.id).then(setView, () => {});
    }
  };

  const modelId = costModel ?? info?.defaultModelId ?? 'gpt-4o-mini';
  const chooseModel = (next: string) => {
    setCostModel(next);
    window.localStorage.setItem('ctxgraph.cost-model', next);
  };

  /** Makes a budgeted call (`resolve({ budget })`) at the current message, for the cache view. */
  const recordCall = useCallback(
    async (chatId: string) => {
      try {
        const call = await api.budgetedCall(chatId, maxInputTokens, renderer);
        setCalls((old) => ({
          chatId,
          list: old.chatId === chatId ? [...old.list, call] : [call],
        }));
      } catch (error) {
        setNotice(noticeFor(error));
      }
    },
    [maxInputTokens, renderer],
  );

  // While the budget window is open, the page calls as an app would: once per new message.
  const headForCalls = budgetOpen && active ? `${active.chat.id}:${active.headMessageId}` : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: one call per new head
  useEffect(() => {
    if (headForCalls === null || !active) return;
    const recorded = calls.chatId === active.chat.id ? calls.list : [];
    if (recorded.at(-1)?.headMessageId === active.headMessageId) return;
    void recordCall(active.chat.id);
  }, [headForCalls]);
  const showInspect = async (forModel = modelId) => {
    if (!active) return;
    try {
      setSnapshot(await api.inspect(active.chat.id, renderer, forModel));
    } catch (error) {
      setNotice(noticeFor(error));
    }
  };

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="logo">◆</span> ctxgraph <span className="muted">playground</span>
        </div>
        {info ? (
          <div className="store-info" data-testid="store-info" title={info.store.location}>
            <span className="pill">{info.store.kind}</span>
            <span className="store-location">{info.store.location}</span>
          </div>
        ) : null}
        <span className="grow" />
        <form
          className="user-form"
          onSubmit={(event) => {
            event.preventDefault();
            switchUser();
          }}
        >
          <label className="inline">
            <span className="muted small">user</span>
            <input
              aria-label="User id"
              value={userDraft}
              onChange={(event) => setUserDraft(event.target.value)}
            />
          </label>
          <button type="submit" disabled={userDraft.trim() === userId || userDraft.trim() === ''}>
            Switch user
          </button>
        </form>
        <button
          type="button"
          disabled={!active}
          onClick={() => setBudgetOpen(true)}
          title="Set a token budget: what the model would receive, what is left out and why, and the cache per call"
        >
          Budget & cache
        </button>
        <button type="button" disabled={!active} onClick={() => void showInspect()}>
          Inspect
        </button>
      </header>
      {notice ? (
        <div
          className={`notice-bar ${notice.kind}`}
          role={notice.kind === 'error' ? 'alert' : 'status'}
        >
          <strong>{notice.title}</strong>
          <span>{notice.message}</span>
          <button
            type="button"
            className="icon"
            aria-label="Dismiss"
            onClick={() => setNotice(null)}
          >
            ×
          </button>
        </div>
      ) : null}
      <main className="columns">
        <aside className="column chats-column">
          <ChatList
            chats={chats}
            hasMore={cursor !== null}
            selectedId={chatId}
            onOpen={openChat}
            onCreate={(title) =>
              void run(async () => {
                const created = await api.createChat(title);
                openChat(created.chat.id);
                return created;
              })
            }
            onRename={(id, title) => void run(() => api.rename(id, title))}
            onDelete={(id) =>
              void run(async () => {
                await api.deleteChat(id);
                if (id === chatId) window.location.hash = '';
                return null;
              })
            }
            onMore={() => {
              if (cursor === null) return;
              api
                .listChats(cursor)
                .then((page) => {
                  setChats((old) => [...old, ...page.items]);
                  setCursor(page.nextCursor);
                })
                .catch((error: unknown) => setNotice(noticeFor(error)));
            }}
          />
        </aside>
        {active ? (
          <>
            <div className="column middle-column">
              <ContextPane
                key={active.chat.id}
                view={active}
                onPreview={setPreview}
                onSave={async (fragments: JsonValue[]) => {
                  const next = await api.saveContext(active.chat.id, fragments);
                  setView(next);
                  setPreview(null);
                }}
              />
              <PromptPanel
                prompts={active.prompts}
                draft={preview}
                renderer={renderer}
                onRenderer={chooseRenderer}
              />
            </div>
            <div className="column right-column">
              <ConversationPane
                view={active}
                model={info?.model ?? null}
                streaming={streaming}
                pendingUser={pendingUser}
                busy={busy}
                onSend={(role, text) => run(() => api.say(active.chat.id, role, text))}
                onAsk={ask}
                onCompact={() => setCompacting(true)}
              />
              <GraphPane
                view={active}
                busy={busy}
                onRewind={(messageId) =>
                  void run(async () => {
                    const { result, view: next } = await api.rewind(active.chat.id, messageId);
                    setNotice({
                      kind: 'info',
                      title: 'New branch',
                      message: `Now on ${result.name}, continuing from that message.`,
                    });
                    return next;
                  })
                }
                onCheckpoint={(name, messageId) =>
                  void run(
                    async () => (await api.checkpoint(active.chat.id, name, messageId)).view,
                    `Checkpoint “${name}” saved.`,
                  )
                }
                onRestore={(name) =>
                  void run(async () => {
                    const { result, view: next } = await api.restore(active.chat.id, name);
                    setNotice({
                      kind: 'info',
                      title: 'Restored',
                      message: `“${name}” restored on the new branch ${result.name}.`,
                    });
                    return next;
                  })
                }
                onBtw={() =>
                  void run(async () => {
                    const { result, view: next } = await api.btw(active.chat.id);
                    setNotice({
                      kind: 'info',
                      title: 'Side branch',
                      message: `Side branch ${result.name} starts at the current message; you stay on ${next.branch}.`,
                    });
                    return next;
                  })
                }
                onSwitch={(branch) =>
                  void run(async () => (await api.switchBranch(active.chat.id, branch)).view)
                }
                onCompare={(left, right) => setComparing({ left, right })}
                onDeleteBranch={(branch) => setDeleting(branch)}
                onSearch={(query, scope) => api.search(active.chat.id, query, scope)}
              />
            </div>
          </>
        ) : (
          <div className="column placeholder-column">
            <div className="welcome">
              <h1>Compose context, chat, branch, rewind.</h1>
              <p>
                Create a chat on the left. Add context fragments and watch the system prompt under
                each renderer; send messages; select a message in the graph to branch from it or
                checkpoint it; restore; inspect what the engine would send.
              </p>
              {chatId && !view && chatError === null ? (
                <p className="muted">Loading chat…</p>
              ) : null}
              {chatId && chatError !== null ? (
                <p className="inline-error" data-testid="chat-error">
                  This chat could not be opened: {chatError}
                </p>
              ) : null}
            </div>
          </div>
        )}
      </main>
      {budgetOpen && active ? (
        <BudgetDialog
          view={active}
          renderer={renderer}
          modelId={modelId}
          models={info?.pricedModels ?? []}
          onModel={chooseModel}
          maxInputTokens={maxInputTokens}
          onBudget={(next) => {
            setMaxInputTokens(next);
            window.localStorage.setItem('ctxgraph.budget', String(next));
          }}
          calls={calls.chatId === active.chat.id ? calls.list : []}
          onRecord={() => recordCall(active.chat.id)}
          onClose={() => setBudgetOpen(false)}
        />
      ) : null}
      {comparing && active ? (
        <CompareDialog
          chatId={active.chat.id}
          branches={active.graph.branches.map((branch) => branch.name)}
          left={comparing.left}
          right={comparing.right}
          onClose={() => setComparing(null)}
        />
      ) : null}
      {deleting !== null && active ? (
        <DeleteBranchDialog
          chatId={active.chat.id}
          branches={active.graph.branches.map((branch) => branch.name)}
          activeBranch={active.branch}
          initial={deleting}
          onClose={() => setDeleting(null)}
          onDelete={(branch, activate) =>
            run(async () => {
              const { result, view: next } = await api.deleteBranch(active.chat.id, branch, {
                ...(activate ? { activate } : {}),
                dryRun: false,
              });
              setNotice({
                kind: 'info',
                title: 'Branch deleted',
                message: `${branch} is gone, with ${result.nodes} ${result.nodes === 1 ? 'message' : 'messages'} only it reached; you are on ${next.branch}.`,
              });
              return next;
            })
          }
        />
      ) : null}
      {compacting && active ? (
        <CompactDialog
          modelId={info?.model?.modelId ?? null}
          messages={active.messages.length}
          onClose={() => setCompacting(false)}
          onCompact={(keepTurns, summary) =>
            run(async () => {
              const { result, view: next } = await api.compact(active.chat.id, keepTurns, summary);
              setNotice(
                result === null
                  ? {
                      kind: 'info',
                      title: 'Nothing to compact',
                      message: 'Every message is within the turns kept.',
                    }
                  : {
                      kind: 'info',
                      title: 'Compacted',
                      message: `${result.compaction.coveredMessages} messages are replaced by a summary, ${result.compaction.tokens.saved} tokens fewer per call.`,
                    },
              );
              return next;
            })
          }
        />
      ) : null}
      {snapshot && active ? (
        <InspectDialog
          snapshot={snapshot}
          fileName={`inspect-${active.chat.id}.json`}
          modelId={modelId}
          models={info?.pricedModels ?? []}
          onModel={(next) => {
            chooseModel(next);
            void showInspect(next);
          }}
          onClose={() => setSnapshot(null)}
        />
      ) : null}
    </div>
  );
}
