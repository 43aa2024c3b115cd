import type { ReactElement } from 'react';
import type { ChatView, RendererName } from '../api';
import type { DraftPreview } from './context-pane';

/** Props of {@link PromptPanel}. */
export interface PromptPanelProps {
  /** The saved context's prompts. */
  prompts: ChatView['prompts'];
  /** The open draft's preview, or null when no draft is open. */
  draft: DraftPreview | null;
  renderer: RendererName;
  onRenderer: (renderer: RendererName) => void;
}

const labels: Record<RendererName, string> = { xml: 'XML', markdown: 'Markdown', toon: 'TOON' };

/** The system prompt under the chosen renderer, with every renderer's token count side by side. */
export function PromptPanel(props: PromptPanelProps): ReactElement {
  const { draft } = props;
  const prompts = draft?.kind === 'ready' ? draft.prompts : props.prompts;
  const current = prompts.find((prompt) => prompt.renderer === props.renderer);
  const smallest = Math.min(
    ...prompts.filter((prompt) => prompt.tokens > 0).map((prompt) => prompt.tokens),
  );
  return (
    <section className="panel prompt-panel" aria-label="System prompt">
      <header className="panel-header">
        <h2>System prompt</h2>
        {draft?.kind === 'ready' ? (
          <span className="pill warn">preview of unsaved edit</span>
        ) : null}
        {draft && draft.kind !== 'ready' ? (
          <span className="pill warn">showing the saved context</span>
        ) : null}
      </header>
      {draft?.kind === 'incomplete' ? (
        <p className="draft-state" data-testid="draft-state">
          {draft.problems.length === 0
            ? 'The draft is previewed once its required fields are filled.'
            : `The draft is incomplete, so it is not previewed: ${draft.problems.join('; ')}.`}
        </p>
      ) : null}
      {draft?.kind === 'refused' ? (
        <p className="draft-state refused" data-testid="draft-state">
          The draft cannot be previewed: {draft.message}
        </p>
      ) : null}
      <div className="renderer-tabs" role="tablist">
        {prompts.map((prompt) => (
          <button
            type="button"
            role="tab"
            key={prompt.renderer}
            aria-selected={prompt.renderer === props.renderer}
            className={prompt.renderer === props.renderer ? 'tab active' : 'tab'}
            onClick={() => props.onRenderer(prompt.renderer)}
          >
            <span className="tab-name">{labels[prompt.renderer]}</span>
            <span className="tab-tokens" data-renderer={prompt.renderer}>
              {prompt.error ? 'error' : `${prompt.tokens} tokens`}
              {prompt.tokens > 0 && prompt.tokens === smallest ? ' ★' : ''}
            </span>
          </button>
        ))}
      </div>
      <div className="panel-body">
        {current?.error ? <p className="inline-error">{current.error}</p> : null}
        {current && current.prompt !== '' ? (
          <pre className="prompt" data-testid="system-prompt">
            {current.prompt}
          </pre>
        ) : current?.error ? null : (
          <p className="muted">The prompt is empty: add context fragments above.</p>
        )}
        <p className="footnote">Token counts: OpenAI o200k_base. ★ marks the smallest.</p>
      </div>
    </section>
  );
}
