import type { ReactElement } from 'react';
import { type NextCallFigures, nextCallText } from './budget-figures';
import { DialogFrame } from './dialog-frame';

/** Props of {@link InspectDialog}. */
export interface InspectDialogProps {
  snapshot: Record<string, unknown>;
  fileName: string;
  /** The model the cost is estimated for. */
  modelId: string;
  /** The models whose price is known, offered in the picker. */
  models: readonly string[];
  /** Asks for the snapshot again, for another model. */
  onModel: (modelId: string) => void;
  onClose: () => void;
}

function count(value: number, noun: string, nouns = `${noun}s`): string {
  return `${value.toLocaleString('en-US')} ${value === 1 ? noun : nouns}`;
}

interface Estimate {
  note?: string;
}

/** The budget plan the server reads with the snapshot (for the whole branch, see the route). */
interface Plan {
  totalTokens?: number;
  systemPromptTokens?: number;
  messages?: Array<{ tokens: number; pending?: boolean }>;
}

function sum(messages: Plan['messages'], pending: boolean): number | undefined {
  return messages
    ?.filter((message) => (message.pending === true) === pending)
    .reduce((total, message) => total + message.tokens, 0);
}

/** The engine's inspect() snapshot: headline figures, then the whole JSON, downloadable. */
export function InspectDialog(props: InspectDialogProps): ReactElement {
  const estimate = (props.snapshot.estimate ?? {}) as Estimate;
  // Token figures come from the budget plan, as in the Budget window (text plus each message's
  // framing), so the two windows agree; the plan's `exceeded` form has no figures.
  const budget = (props.snapshot.budget ?? {}) as Plan & { exceeded?: unknown };
  const plan: Plan = budget.exceeded === undefined ? budget : {};
  const nextCall = (props.snapshot.nextCall ?? null) as NextCallFigures | null;
  const fragments = (props.snapshot.fragments ?? {}) as Record<string, unknown[]>;
  const graph = (props.snapshot.graph ?? {}) as Record<string, unknown[]>;
  const json = JSON.stringify(props.snapshot, null, 2);
  const download = () => {
    const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = props.fileName;
    link.click();
    URL.revokeObjectURL(url);
  };
  const tokens = (value: number | undefined) => (value === undefined ? '–' : count(value, 'token'));
  // Tokens first, then costs, then counts of things: each figure says its unit.
  const figures: Array<[string, string]> = [
    ['Input in total', tokens(plan.totalTokens)],
    ['System prompt', tokens(plan.systemPromptTokens)],
    ['Saved messages', tokens(sum(plan.messages, false))],
    ['Unsaved messages', tokens(sum(plan.messages, true))],
    [`Next call (${props.modelId})`, nextCall === null ? '–' : nextCallText(nextCall)],
    ['Context', count(fragments.context?.length ?? 0, 'fragment')],
    ['On this branch', count(fragments.persisted?.length ?? 0, 'message')],
    [
      'Whole chat',
      `${count(graph.nodes?.length ?? 0, 'message')} · ${count(graph.branches?.length ?? 0, 'branch', 'branches')} · ${count(graph.checkpoints?.length ?? 0, 'checkpoint')}`,
    ],
  ];
  const models = props.models.includes(props.modelId)
    ? props.models
    : [props.modelId, ...props.models];
  return (
    <DialogFrame label="Inspect" onClose={props.onClose}>
      <header className="panel-header">
        <h2>inspect()</h2>
        <span className="grow" />
        <label className="inline">
          <span className="muted small">cost for</span>
          <select
            aria-label="Model for the cost"
            value={props.modelId}
            onChange={(event) => props.onModel(event.target.value)}
          >
            {models.map((model) => (
              <option key={model} value={model}>
                {model}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="primary" onClick={download}>
          Download JSON
        </button>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </header>
      <dl className="figures">
        {figures.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p className="footnote">
        Tokens as the Budget window counts them: each message's text plus its framing (role and
        separators), what the next reply would send within the page's budget; the next call is the
        engine's estimate the Budget window shows too (the tokens the model's cache is predicted to
        read, at the cache-read price).
      </p>
      {estimate.note ? <p className="footnote">{estimate.note}</p> : null}
      <pre className="json">{json}</pre>
    </DialogFrame>
  );
}
