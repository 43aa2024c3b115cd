import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactElement, useState } from 'react';
import { api, type BudgetedCall, type ChatView, type RendererName } from '../api';
import { explainShortfall } from '../budget-explanation';
import { describeError } from '../describe-error';
import { queryKeys } from '../state/query-keys';
import { Bar, nextCallText, tokens } from './budget-figures';
import { CacheView } from './cache-view';
import { DialogFrame } from './dialog-frame';

/** Props of {@link BudgetDialog}. */
export interface BudgetDialogProps {
  /** The user the page acts as (the plan's query is theirs). */
  userId: string;
  view: ChatView;
  renderer: RendererName;
  modelId: string;
  models: readonly string[];
  onModel: (modelId: string) => void;
  /** The budget, kept by the page while it is open. */
  maxInputTokens: number;
  onBudget: (maxInputTokens: number) => void;
  /** The budgeted calls recorded on this chat, oldest first (one per turn). */
  calls: readonly BudgetedCall[];
  /** Records a budgeted call now (`resolve({ budget })`). */
  onRecord: () => Promise<void>;
  onClose: () => void;
}

const RULES: Record<string, string> = {
  'fragment-below-history': 'its priority is below 0, so it goes before any history',
  'history-oldest-first':
    'the oldest history goes first, in chunks (so later calls share a prefix)',
  'fragment-priority': 'no more history could go, so the lowest-priority fragments went',
  'compaction-last':
    "the compaction's summary goes last, when no other history fits (it stands in for what it covers)",
};

/**
 * The budget and cache views: set a token budget and a model, see what the model would receive
 * (each fragment and message with its tokens), what was left out and why (the engine's
 * `inspect({ budget })`, which changes nothing), and per recorded call how much of the prompt's
 * prefix repeated the previous one and what broke it (`resolve({ budget })`'s prefix report).
 */
export function BudgetDialog(props: BudgetDialogProps): ReactElement {
  const [tab, setTab] = useState<'budget' | 'cache'>('budget');
  const [draft, setDraft] = useState(String(props.maxInputTokens));
  const { view, renderer, modelId, maxInputTokens } = props;
  const texts = new Map(view.graph.nodes.map((node) => [node.id, node]));
  // The plan is read from the chat: a change to the chat marks it stale, and it is read again.
  const plan = useQuery({
    queryKey: queryKeys.inspect(props.userId, view.chat.id, { renderer, modelId, maxInputTokens }),
    queryFn: () => api.inspect(view.chat.id, renderer, modelId, maxInputTokens),
    placeholderData: keepPreviousData,
  });
  // The model calls recorded on this branch, predicted and confirmed (read while the cache tab
  // shows; a change to the chat marks it stale, like the plan).
  const recorded = useQuery({
    queryKey: queryKeys.cacheCalls(props.userId, view.chat.id),
    queryFn: () => api.cacheCalls(view.chat.id),
    enabled: tab === 'cache',
  });
  const snapshot = plan.error ? null : (plan.data ?? null);
  const error = plan.error ? describeError(plan.error).message : null;

  const draftValue = Number(draft);
  const draftValid = Number.isInteger(draftValue) && draftValue >= 1 && draftValue <= 10_000_000;
  const report = snapshot?.budget && !('exceeded' in snapshot.budget) ? snapshot.budget : null;
  const exceeded =
    snapshot?.budget && 'exceeded' in snapshot.budget ? snapshot.budget.exceeded : null;
  const usage = snapshot?.usage;

  return (
    // Docked beside the conversation, not over it: the calls are recorded as messages are added,
    // so the message box must stay usable while it is open.
    <DialogFrame
      label="Budget and cache"
      className="budget-dialog"
      modal={false}
      onClose={props.onClose}
    >
      <header className="panel-header">
        <div className="segmented">
          <button
            type="button"
            className={tab === 'budget' ? 'active' : ''}
            onClick={() => setTab('budget')}
          >
            Budget
          </button>
          <button
            type="button"
            className={tab === 'cache' ? 'active' : ''}
            onClick={() => setTab('cache')}
          >
            Cache
          </button>
        </div>
        <form
          className="inline"
          onSubmit={(event) => {
            event.preventDefault();
            if (draftValid) props.onBudget(draftValue);
          }}
        >
          <label className="inline">
            <span className="muted small">budget</span>
            <input
              aria-label="Token budget"
              aria-invalid={!draftValid}
              inputMode="numeric"
              value={draft}
              onChange={(event) => setDraft(event.target.value)}
              onBlur={() => {
                if (draftValid) props.onBudget(draftValue);
              }}
            />
            <span className="muted small">tokens</span>
          </label>
        </form>
        <label className="inline">
          <span className="muted small">model</span>
          <select
            aria-label="Model"
            value={modelId}
            onChange={(event) => props.onModel(event.target.value)}
          >
            {(props.models.includes(modelId) ? props.models : [modelId, ...props.models]).map(
              (model) => (
                <option key={model} value={model}>
                  {model}
                </option>
              ),
            )}
          </select>
        </label>
        <span className="grow" />
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </header>
      {!draftValid ? (
        <p className="inline-error dialog-error">
          The budget is a whole number of tokens, from 1 to 10,000,000.
        </p>
      ) : null}
      {error ? <p className="inline-error dialog-error">{error}</p> : null}
      {tab === 'budget' ? (
        <div className="budget-body" data-testid="budget-view">
          {exceeded ? (
            <p className="inline-error" data-testid="budget-shortfall">
              {explainShortfall(exceeded)}
            </p>
          ) : null}
          {report ? (
            <>
              <p className="budget-total" data-testid="budget-total">
                The model would receive <strong>{tokens(report.totalTokens)}</strong> of{' '}
                {tokens(report.maxInputTokens)}: the system prompt (
                {tokens(report.systemPromptTokens)}) and {report.messages.length}{' '}
                {report.messages.length === 1 ? 'message' : 'messages'}.
                {snapshot?.nextCall ? (
                  <>
                    {' '}
                    Next call for {modelId}:{' '}
                    <span data-testid="next-call">{nextCallText(snapshot.nextCall)}</span>.
                  </>
                ) : null}
              </p>
              <Bar value={report.totalTokens} of={report.maxInputTokens} tone="kept" />
              <h3>Context fragments</h3>
              <ul className="budget-list" aria-label="Fragments in the budget">
                {report.fragments.map((fragment) => (
                  <li key={fragment.id} className={fragment.kept ? 'kept' : 'left-out'}>
                    <span className="budget-name">{fragment.name}</span>
                    <Bar
                      value={fragment.tokens}
                      of={report.maxInputTokens}
                      tone={fragment.kept ? 'kept' : 'out'}
                    />
                    <span className="budget-figure">{tokens(fragment.tokens)}</span>
                    <span className="budget-state">{fragment.kept ? 'sent' : 'left out'}</span>
                  </li>
                ))}
              </ul>
              <h3>Messages sent</h3>
              <ul className="budget-list" aria-label="Messages in the budget">
                {report.messages.map((message) => (
                  <li key={message.id} className="kept">
                    <span className="budget-name">
                      <span className={`dot ${message.role}`} />{' '}
                      {texts.get(message.id)?.text ?? message.role}
                    </span>
                    <Bar value={message.tokens} of={report.maxInputTokens} tone="kept" />
                    <span className="budget-figure">{tokens(message.tokens)}</span>
                    <span className="budget-state">{message.pending ? 'unsaved' : 'sent'}</span>
                  </li>
                ))}
              </ul>
              <h3>Left out, and why</h3>
              {report.leftOut.length === 0 ? (
                <p className="muted">Nothing: everything fits.</p>
              ) : (
                <ul className="left-out" aria-label="Left out">
                  {report.leftOut.map((item) =>
                    item.kind === 'history' ? (
                      <li key={`history-${item.fromId}`}>
                        The {item.messages} oldest messages ({tokens(item.tokens)}, from “
                        {texts.get(item.fromId)?.text.slice(0, 40) ?? item.fromId}”):{' '}
                        {RULES[item.rule] ?? item.rule}.
                      </li>
                    ) : (
                      <li key={`fragment-${item.id}`}>
                        Fragment “{item.name}” ({tokens(item.tokens)}):{' '}
                        {RULES[item.rule] ?? item.rule}.
                      </li>
                    ),
                  )}
                </ul>
              )}
            </>
          ) : null}
          {usage ? (
            <p className="footnote" data-testid="usage">
              Recorded usage: this branch {tokens(usage.branch.inputTokens)} in,{' '}
              {tokens(usage.branch.outputTokens)} out over {usage.branch.calls} model calls
              {usage.branch.cost === null ? '' : ` ($${usage.branch.cost.toFixed(6)})`}; the whole
              chat {tokens(usage.chat.inputTokens)} in over {usage.chat.calls} calls
              {usage.chat.cost === null ? '' : ` ($${usage.chat.cost.toFixed(6)})`}.
            </p>
          ) : null}
        </div>
      ) : (
        <CacheView
          calls={props.calls}
          texts={texts}
          onRecord={props.onRecord}
          recorded={recorded.data ?? null}
          recordedError={recorded.error ? describeError(recorded.error).message : null}
        />
      )}
    </DialogFrame>
  );
}
