import { useState } from 'react';
import type { PlaygroundInfo, RendererName } from '../api';

/** A setting the page keeps in localStorage under `key`, read once when the page opens. */
function useStoredSetting<T>(
  key: string,
  read: (stored: string | null) => T,
  write: (value: T) => string,
): [T, (value: T) => void] {
  const [value, setValue] = useState(() => read(window.localStorage.getItem(key)));
  const change = (next: T) => {
    setValue(next);
    window.localStorage.setItem(key, write(next));
  };
  return [value, change];
}

/** The page's remembered choices: the renderer, the model estimates are for, and the budget. */
export interface Settings {
  renderer: RendererName;
  chooseRenderer: (renderer: RendererName) => void;
  /** The model cost estimates are for: the one picked, else the server's default. */
  modelId: string;
  chooseModel: (modelId: string) => void;
  /** The token budget of the budget window. */
  maxInputTokens: number;
  chooseBudget: (maxInputTokens: number) => void;
}

/** The remembered choices, with the server's defaults where none was made. */
export function useSettings(info: PlaygroundInfo | null): Settings {
  const [renderer, chooseRenderer] = useStoredSetting<RendererName>(
    'ctxgraph.renderer',
    (stored) => (stored === 'markdown' || stored === 'toon' ? stored : 'xml'),
    (value) => value,
  );
  const [costModel, chooseModel] = useStoredSetting<string | null>(
    'ctxgraph.cost-model',
    (stored) => stored,
    (value) => value ?? '',
  );
  const [maxInputTokens, chooseBudget] = useStoredSetting(
    'ctxgraph.budget',
    (stored) => Number(stored) || 4000,
    String,
  );
  return {
    renderer,
    chooseRenderer,
    modelId: costModel ?? info?.defaultModelId ?? 'gpt-4o-mini',
    chooseModel,
    maxInputTokens,
    chooseBudget,
  };
}
