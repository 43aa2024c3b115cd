import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactElement, useCallback, useEffect, useState } from 'react';
import { api, type ChatView, type PlaygroundInfo } from '../api';
import { noticeFor, type ShowNotice } from '../state/notice';
import { queryKeys } from '../state/query-keys';
import type { BudgetedCalls } from '../state/use-budgeted-calls';
import type { ChatActions } from '../state/use-chat-actions';
import type { Settings } from '../state/use-settings';
import { BudgetDialog } from './budget-dialog';
import { CompactDialog } from './compact-dialog';
import { CompareDialog } from './compare-dialog';
import { DeleteBranchDialog } from './delete-branch-dialog';
import { InspectDialog } from './inspect-dialog';
import { RenameBranchDialog } from './rename-branch-dialog';

/** The dialog open over the page (one at a time), with what it starts from. */
export type OpenDialog =
  | { kind: 'budget' }
  | { kind: 'inspect' }
  | { kind: 'compact' }
  | { kind: 'compare'; left: string; right: string }
  | { kind: 'delete-branch'; branch: string }
  | { kind: 'rename-branch'; branch: string };

/** Which dialog is open: `open` one, or `close` it. */
export function useDialog(): {
  dialog: OpenDialog | null;
  open: (dialog: OpenDialog) => void;
  close: () => void;
} {
  const [dialog, setDialog] = useState<OpenDialog | null>(null);
  const close = useCallback(() => setDialog(null), []);
  return { dialog, open: setDialog, close };
}

/** Props of {@link Dialogs}. */
export interface DialogsProps {
  dialog: OpenDialog;
  onClose: () => void;
  userId: string;
  view: ChatView;
  info: PlaygroundInfo | null;
  settings: Settings;
  actions: ChatActions;
  budgetedCalls: BudgetedCalls;
  show: ShowNotice;
}

/**
 * The engine's inspect() snapshot of the open chat, for the model picked; shown once read (a
 * failure is a notice, and the dialog closes).
 */
function InspectWindow(props: DialogsProps): ReactElement | null {
  const { userId, view, settings, show, onClose } = props;
  // With the page's budget, as the Budget window asks (a reply is planned within it): both
  // windows show the one plan and next-call estimate.
  const options = {
    renderer: settings.renderer,
    modelId: settings.modelId,
    maxInputTokens: settings.maxInputTokens,
  };
  const query = useQuery({
    queryKey: queryKeys.inspect(userId, view.chat.id, options),
    queryFn: () =>
      api.inspect(view.chat.id, options.renderer, options.modelId, options.maxInputTokens),
    // The snapshot stays while another model's is read; none is kept once the window closes.
    placeholderData: keepPreviousData,
    gcTime: 0,
  });
  useEffect(() => {
    if (query.error) {
      show(noticeFor(query.error));
      onClose();
    }
  }, [query.error, show, onClose]);
  if (!query.data) return null;
  return (
    <InspectDialog
      snapshot={query.data}
      fileName={`inspect-${view.chat.id}.json`}
      modelId={settings.modelId}
      models={props.info?.pricedModels ?? []}
      onModel={settings.chooseModel}
      onClose={onClose}
    />
  );
}

/** The open dialog over the open chat. */
export function Dialogs(props: DialogsProps): ReactElement | null {
  const { dialog, view, info, settings, actions, onClose } = props;
  const branches = view.graph.branches.map((branch) => branch.name);
  switch (dialog.kind) {
    case 'budget':
      return (
        <BudgetDialog
          userId={props.userId}
          view={view}
          renderer={settings.renderer}
          modelId={settings.modelId}
          models={info?.pricedModels ?? []}
          onModel={settings.chooseModel}
          maxInputTokens={settings.maxInputTokens}
          onBudget={settings.chooseBudget}
          calls={props.budgetedCalls.calls}
          onRecord={props.budgetedCalls.record}
          onClose={onClose}
        />
      );
    case 'inspect':
      return <InspectWindow {...props} />;
    case 'compact':
      return (
        <CompactDialog
          modelId={info?.model?.modelId ?? null}
          messages={view.messages.length}
          onClose={onClose}
          onCompact={(keepTurns, summary) => actions.compact({ keepTurns, summary })}
        />
      );
    case 'compare':
      return (
        <CompareDialog
          userId={props.userId}
          chatId={view.chat.id}
          branches={branches}
          left={dialog.left}
          right={dialog.right}
          onClose={onClose}
        />
      );
    case 'delete-branch':
      return (
        <DeleteBranchDialog
          userId={props.userId}
          chatId={view.chat.id}
          branches={branches}
          activeBranch={view.branch}
          initial={dialog.branch}
          onClose={onClose}
          onDelete={(branch, activate) => actions.deleteBranch({ branch, activate })}
        />
      );
    case 'rename-branch':
      return (
        <RenameBranchDialog
          branches={branches}
          initial={dialog.branch}
          onClose={onClose}
          onRename={(from, to) => actions.renameBranch({ from, to })}
        />
      );
  }
}
