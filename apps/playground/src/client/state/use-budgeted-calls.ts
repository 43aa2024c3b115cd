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
 * would, once per new message, with the budget shown when it opened; the
 * window can add one by hand. Only the open chat's calls are kept.
 */
export function useBudgetedCalls(
  view: ChatView | null,
  open: boolean,
  options: { maxInputTokens: number; renderer: RendererName; modelId: string },
  show: ShowNotice,
): BudgetedCalls {
  const [recorded, setRecorded] = useState<{ chatId: string; list: BudgetedCall[] }>({
    chatId: '',
    list: [],
  });
  // The budget and model travel with each call (not read from a closure), so a call is made with
  // the budget and model shown when it was asked for.
  const call = useMutation({
    mutationFn: ({
      chatId,
      ...asked
    }: {
      chatId: string;
      maxInputTokens: number;
      renderer: RendererName;
      modelId: string;
    }) => api.budgetedCall(chatId, asked),
    onSuccess: (made, { chatId }) =>
      setRecorded((old) => ({
        chatId,
        list: old.chatId === chatId ? [...old.list, made] : [made],
      })),
    onError: (error) => show(noticeFor(error)),
  });
  const calls = view !== null && recorded.chatId === view.chat.id ? recorded.list : [];
  const record = async () => {
    if (view === null) return;
    await call
      .mutateAsync({
        chatId: view.chat.id,
        maxInputTokens: options.maxInputTokens,
        renderer: options.renderer,
        modelId: options.modelId,
      })
      .catch(() => {});
  };

  // A call is due when the window opens and when the head moves, made with the budget the
  // window shows: opening again on the same message after choosing another budget calls again,
  // rather than leaving the last call (made with the earlier budget) as the one shown.
  const headForCalls = open && view ? `${view.chat.id}:${view.headMessageId}` : null;
  // biome-ignore lint/correctness/useExhaustiveDependencies: one call per opening and new head
  useEffect(() => {
    if (headForCalls === null || view === null) return;
    const last = calls.at(-1);
    if (
      last !== undefined &&
      last.headMessageId === view.headMessageId &&
      last.budget.maxInputTokens === options.maxInputTokens &&
      last.renderer === options.renderer &&
      last.modelId === options.modelId
    )
      return;
    void record();
  }, [headForCalls]);

  return { calls, record };
}
