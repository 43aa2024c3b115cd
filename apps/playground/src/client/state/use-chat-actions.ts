import {
  type QueryClient,
  useIsMutating,
  useMutation,
  useQueryClient,
} from '@tanstack/react-query';
import { useRef, useState } from 'react';
import {
  api,
  type ChatView,
  type ExchangeAdded,
  type FlatFragment,
  type MessageAdded,
  type RendererName,
  streamReply,
} from '../api';
import { type Notice, noticeFor, type ShowNotice } from './notice';
import { derivedFromChat, queryKeys, refreshChatList } from './query-keys';
import { closeChat, openChat } from './use-open-chat';

/** The key every action's mutation starts with: while one runs, the page is busy. */
const ACTION = 'action';

/** Puts the chat as the server answered it in the cache, and marks what was read from it stale. */
function chatChanged(queryClient: QueryClient, userId: string, view: ChatView): void {
  queryClient.setQueryData(queryKeys.chat(userId, view.chat.id), view);
  void queryClient.invalidateQueries(derivedFromChat(userId, view.chat.id));
}

/**
 * The chat the page holds with one saved message added (what `POST …/messages` answers): the
 * message joins the conversation and the graph, the branch head and records move. The context
 * and prompts did not change.
 */
function withMessageAdded(view: ChatView, change: MessageAdded): ChatView {
  return {
    ...view,
    chat: change.chat,
    branch: change.branch,
    headMessageId: change.headMessageId,
    messages: [...view.messages, change.message],
    graph: {
      ...view.graph,
      nodes: [...view.graph.nodes, change.node],
      branches: change.branches,
    },
  };
}

/**
 * The chat the page holds with a model exchange added (question and reply), or null when the
 * page holds another state than the one the question continued (then the chat is read whole).
 */
function withExchangeAdded(view: ChatView, change: ExchangeAdded): ChatView | null {
  const first = change.added[0];
  if (first === undefined || view.headMessageId !== first.node.parentId) return null;
  return {
    ...view,
    chat: change.chat,
    branch: change.branch,
    headMessageId: change.headMessageId,
    messages: [...view.messages, ...change.added.map((each) => each.message)],
    graph: {
      ...view.graph,
      nodes: [...view.graph.nodes, ...change.added.map((each) => each.node)],
      branches: change.branches,
    },
  };
}

/** What an action does and what it tells. */
interface ActionSpec<Variables, Result> {
  name: string;
  run: (variables: Variables) => Promise<Result>;
  /** The chat after the action, or null when it leaves none (a deleted chat). */
  view: (result: Result) => ChatView | null;
  /** What the notice bar says when it worked (null: nothing). */
  notice?: (result: Result, variables: Variables) => Notice | null;
  /** What else to do once it worked and the chat list was read again. */
  after?: (variables: Variables) => void;
}

/**
 * One action of the page as a mutation: it clears the notice, puts the chat it answers in the
 * cache, says what it did (or its error), and reads the chat list's first page again (the chat it
 * touched moves to the top). Resolves to true when it worked.
 */
function useAction<Variables, Result>(
  userId: string | null,
  show: ShowNotice,
  spec: ActionSpec<Variables, Result>,
): (variables: Variables) => Promise<boolean> {
  const queryClient = useQueryClient();
  const mutation = useMutation({
    mutationKey: [ACTION, spec.name],
    mutationFn: spec.run,
    onMutate: () => show(null),
    onSuccess: async (result, variables) => {
      if (userId === null) return;
      const view = spec.view(result);
      if (view !== null) chatChanged(queryClient, userId, view);
      if (spec.notice) show(spec.notice(result, variables));
      await refreshChatList(queryClient, userId);
      spec.after?.(variables);
    },
    onError: (error) => show(noticeFor(error)),
  });
  return (variables) =>
    mutation.mutateAsync(variables).then(
      () => true,
      () => false,
    );
}

const info = (title: string, message: string): Notice => ({ kind: 'info', title, message });
const itself = (view: ChatView): ChatView => view;
const viewOf = (answer: { view: ChatView }): ChatView => answer.view;

/** The chat list's actions: create (and open), rename, delete. */
export function useChatListActions(userId: string | null, openId: string | null, show: ShowNotice) {
  const queryClient = useQueryClient();
  return {
    create: useAction(userId, show, {
      name: 'create-chat',
      run: async (title: string) => {
        const created = await api.createChat(title);
        openChat(created.chat.id);
        return created;
      },
      view: itself,
    }),
    rename: useAction(userId, show, {
      name: 'rename-chat',
      run: ({ chatId, title }: { chatId: string; title: string }) => api.rename(chatId, title),
      view: itself,
    }),
    remove: useAction(userId, show, {
      name: 'delete-chat',
      run: async (chatId: string) => {
        await api.deleteChat(chatId);
        if (chatId === openId) closeChat();
        return null;
      },
      view: () => null,
      // Forgotten once the page has left it (a query still in use would be read again): going
      // back to its address then reads it afresh and says it is gone.
      after: (chatId) => {
        if (userId !== null)
          queryClient.removeQueries({ queryKey: queryKeys.chat(userId, chatId) });
      },
    }),
  };
}

/** Every action on the open chat `chatId`, each a mutation; `busy` while any action runs. */
export function useChatActions(userId: string | null, chatId: string, show: ShowNotice) {
  const queryClient = useQueryClient();
  // The message sent to the model and its reply so far, while the reply streams.
  const [exchange, setExchange] = useState<{ user: string; reply: string } | null>(null);
  // The streaming reply's stop id (the page's Stop button sends it), and whether it was used.
  const stopping = useRef<{ id: string; stopped: boolean } | null>(null);

  const actions = {
    say: useAction(userId, show, {
      name: 'say',
      run: async ({ role, text }: { role: 'user' | 'assistant'; text: string }) => {
        const change = await api.say(chatId, role, text);
        const held =
          userId === null
            ? undefined
            : queryClient.getQueryData<ChatView>(queryKeys.chat(userId, chatId));
        // The answer is what changed; the chat the page holds takes it in (read whole only
        // when the page holds none, or an older state than the one written to).
        return held !== undefined &&
          held.branch === change.branch &&
          held.headMessageId === change.node.parentId
          ? withMessageAdded(held, change)
          : api.chat(chatId);
      },
      view: itself,
    }),
    ask: useAction(userId, show, {
      name: 'ask',
      run: async ({
        text,
        renderer,
        maxInputTokens,
      }: {
        text: string;
        renderer: RendererName;
        maxInputTokens: number;
      }) => {
        try {
          const stopId = crypto.randomUUID();
          stopping.current = { id: stopId, stopped: false };
          const change = await streamReply(
            chatId,
            text,
            { renderer, maxInputTokens, stopId },
            (delta) =>
              setExchange((old) => (old === null ? old : { ...old, reply: old.reply + delta })),
          );
          const held =
            userId === null
              ? undefined
              : queryClient.getQueryData<ChatView>(queryKeys.chat(userId, chatId));
          const added = held === undefined ? null : withExchangeAdded(held, change);
          return added ?? (await api.chat(chatId));
        } catch (error) {
          // The question is saved before the model is asked (and a failed reply is kept, marked):
          // read the chat again so the page shows what the server holds.
          if (userId !== null) {
            void queryClient.invalidateQueries({ queryKey: queryKeys.chat(userId, chatId) });
          }
          throw error;
        }
      },
      view: itself,
      notice: () =>
        stopping.current?.stopped
          ? info('Stopped', 'The reply so far is saved, marked as stopped.')
          : null,
    }),
    rewind: useAction(userId, show, {
      name: 'rewind',
      run: (messageId: string) => api.rewind(chatId, messageId),
      view: viewOf,
      notice: ({ result }) =>
        info('New branch', `Now on ${result.name}, continuing from that message.`),
    }),
    checkpoint: useAction(userId, show, {
      name: 'checkpoint',
      run: ({ name, messageId }: { name: string; messageId: string | null }) =>
        api.checkpoint(chatId, name, messageId),
      view: viewOf,
      notice: (_answer, { name }) => info('Done', `Checkpoint “${name}” saved.`),
    }),
    restore: useAction(userId, show, {
      name: 'restore',
      run: (name: string) => api.restore(chatId, name),
      view: viewOf,
      notice: ({ result }, name) =>
        info('Restored', `“${name}” restored on the new branch ${result.name}.`),
    }),
    btw: useAction(userId, show, {
      name: 'btw',
      run: () => api.btw(chatId),
      view: viewOf,
      notice: ({ result, view }) =>
        info(
          'Side branch',
          `Side branch ${result.name} starts at the current message; you stay on ${view.branch}.`,
        ),
    }),
    switchBranch: useAction(userId, show, {
      name: 'switch-branch',
      run: (branch: string) => api.switchBranch(chatId, branch),
      view: viewOf,
    }),
    renameBranch: useAction(userId, show, {
      name: 'rename-branch',
      run: ({ from, to }: { from: string; to: string }) => api.renameBranch(chatId, from, to),
      view: viewOf,
      notice: ({ result }, { from }) => info('Branch renamed', `${from} is now ${result.name}.`),
    }),
    deleteBranch: useAction(userId, show, {
      name: 'delete-branch',
      run: ({ branch, activate }: { branch: string; activate: string | undefined }) =>
        api.deleteBranch(chatId, branch, { ...(activate ? { activate } : {}), dryRun: false }),
      view: viewOf,
      notice: ({ result, view }, { branch }) =>
        info(
          'Branch deleted',
          `${branch} is gone, with ${result.nodes} ${result.nodes === 1 ? 'message' : 'messages'} only it reached; you are on ${view.branch}.`,
        ),
    }),
    compact: useAction(userId, show, {
      name: 'compact',
      run: ({ keepTurns, summary }: { keepTurns: number; summary: string | undefined }) =>
        api.compact(chatId, keepTurns, summary),
      view: viewOf,
      notice: ({ result }) =>
        result === null
          ? info('Nothing to compact', 'Every message is within the turns kept.')
          : info(
              'Compacted',
              `${result.compaction.coveredMessages} messages are replaced by a summary, ${result.compaction.tokens.saved} tokens fewer per call.`,
            ),
    }),
  };

  // Saving the context is the context pane's own: its errors show there, not in the notice bar.
  const saveContext = useMutation({
    mutationFn: (fragments: FlatFragment[] | readonly unknown[]) =>
      api.saveContext(chatId, fragments),
    onSuccess: (view) => {
      if (userId !== null) chatChanged(queryClient, userId, view);
    },
  });

  return {
    ...actions,
    /** Sends a user message to the model; the reply streams into `streaming`. */
    ask: async (text: string, renderer: RendererName, maxInputTokens: number): Promise<boolean> => {
      setExchange({ user: text, reply: '' });
      try {
        // What changed comes back (question and reply); a failure reads the chat again.
        return await actions.ask({ text, renderer, maxInputTokens });
      } finally {
        setExchange(null);
        stopping.current = null;
      }
    },
    /**
     * Stops the reply streaming now (the integration's stop: the model call ends, the reply so
     * far is saved with `outcome: 'aborted'`); the stream then ends with it as saved.
     */
    stop: async (): Promise<void> => {
      const current = stopping.current;
      if (current === null || current.stopped) return;
      current.stopped = true;
      try {
        await api.stopReply(chatId, current.id);
      } catch (error) {
        show(noticeFor(error));
      }
    },
    /** The model's reply as it streams in, or null. */
    streaming: exchange?.reply ?? null,
    /** The user message sent to the model, shown until the saved chat comes back. */
    pendingUser: exchange?.user ?? null,
    saveContext: saveContext.mutateAsync,
    busy: useIsMutating({ mutationKey: [ACTION] }) > 0,
  };
}

/** The open chat's actions and their state, as {@link useChatActions} answers them. */
export type ChatActions = ReturnType<typeof useChatActions>;
