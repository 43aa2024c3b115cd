import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type BudgetedCall, type ChatView, type RendererName } from '../api';
import { noticeFor, type ShowNotice } from './notice';

/** The budgeted calls the page made on the open chat, and how to make one more. */
export interface BudgetedCalls {
  /** The calls on `view`'s chat, oldest first. */
  calls: readonly BudgetedCall[];
  /** Makes a budgeted call (`resolve({ budget })`) at the current message. */
  record: () => Promise<void>;
}

/**
 * The cache view's calls: while the budget window is open (`open`), the page calls as an app
 * would, once per new message; the window can add one by hand. Only the open chat's calls are
 * kept.
 */
export function useBudgetedCalls(
  view: ChatView | null,
  open: boolean,
  options: { maxInputTokens: number; renderer: RendererName },
  show: ShowNotice,
): BudgetedCalls {
  const [recorded, setRecorded] = useState<{ chatId: string; list: BudgetedCall[] }>({
    chatId: '',
    list: [],
  });
  const call = useMutation({
    mutationFn: (chatId: string) =>
      api.budgetedCall(chatId, options.maxInputTokens, options.renderer),
    onSuccess: (made, chatId) =>
      setRecorded((old) => ({
        chatId,
        list: old.chatId === chatId ? [...old.list, made] : [made],
      })),
    onError: (error) => show(noticeFor(error)),
  });
  const calls = view !== null && recorded.chatId === view.chat.id ? recorded.list : [];
  const record = async () => {
    if (view === null) return;
    await call.mutateAsync(view.chat.id).catch(() => {});
  };

  const headForCalls = open && view ? `${view.chat.id}:${view.headMessageId}` : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: one call per new head
  useEffect(() => {
    if (headForCalls === null || view === null) return;
    if (calls.at(-1)?.headMessageId === view.headMessageId) return;
    void record();
  }, [headForCalls]);

  return { calls, record };
}
