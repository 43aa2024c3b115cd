import { type ReactElement, useEffect } from 'react';

/** Props of {@link InspectDialog}. */
export interface InspectDialogProps {
  snapshot: Record<string, unknown>;
  fileName: string;
  onClose: () => void;
}

interface Estimate {
  tokens?: number;
  cost?: number | null;
  note?: string;
  modelId?: string | null;
  breakdown?: { systemPrompt?: number; persisted?: number; pending?: number };
}

/** The engine's inspect() snapshot: headline figures, then the whole JSON, downloadable. */
export function InspectDialog(props: InspectDialogProps): ReactElement {
  const estimate = (props.snapshot.estimate ?? {}) as Estimate;
  const fragments = (props.snapshot.fragments ?? {}) as Record<string, unknown[]>;
  const graph = (props.snapshot.graph ?? {}) as Record<string, unknown[]>;
  const json = JSON.stringify(props.snapshot, null, 2);
  const { onClose } = props;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  const download = () => {
    const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = props.fileName;
    link.click();
    URL.revokeObjectURL(url);
  };
  const figures: Array<[string, string]> = [
    ['Tokens', String(estimate.tokens ?? '–')],
    ['System prompt', String(estimate.breakdown?.systemPrompt ?? '–')],
    ['Saved messages', String(estimate.breakdown?.persisted ?? '–')],
    ['Cost (input)', estimate.cost == null ? 'unknown' : `$${estimate.cost.toFixed(6)}`],
    ['Context fragments', String(fragments.context?.length ?? 0)],
    ['Pending', String(fragments.pending?.length ?? 0)],
    ['Persisted', String(fragments.persisted?.length ?? 0)],
    [
      'Nodes / branches / checkpoints',
      `${graph.nodes?.length ?? 0} / ${graph.branches?.length ?? 0} / ${graph.checkpoints?.length ?? 0}`,
    ],
  ];
  return (
    <div className="overlay">
      <div className="dialog" role="dialog" aria-label="Inspect">
        <header className="panel-header">
          <h2>inspect()</h2>
          <span className="muted small">{estimate.modelId ? `for ${estimate.modelId}` : ''}</span>
          <span className="grow" />
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
        {estimate.note ? <p className="footnote">{estimate.note}</p> : null}
        <pre className="json">{json}</pre>
      </div>
    </div>
  );
}
