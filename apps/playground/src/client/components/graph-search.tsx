import { type ReactElement, useState } from 'react';
import type { SearchResults } from '../api';
import { describeError } from '../describe-error';

/** Props of {@link GraphSearch}. */
export interface GraphSearchProps {
  /** Runs the engine's search over the active branch or the whole chat. */
  onSearch: (query: string, scope: 'branch' | 'chat') => Promise<SearchResults>;
  /** Selects a hit's message in the graph and brings it into view. */
  onPick: (messageId: string) => void;
}

/** A search box over the chat's messages; a hit jumps to its message in the graph. */
export function GraphSearch(props: GraphSearchProps): ReactElement {
  const [query, setQuery] = useState('');
  const [scope, setScope] = useState<'branch' | 'chat'>('branch');
  const [results, setResults] = useState<SearchResults | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (nextScope = scope) => {
    if (query.trim() === '') return;
    setError(null);
    try {
      setResults(await props.onSearch(query.trim(), nextScope));
    } catch (failure) {
      setResults(null);
      setError(describeError(failure).message);
    }
  };
  return (
    <div className="graph-search">
      <form
        className="inline"
        aria-label="Search"
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <input
          type="search"
          aria-label="Search messages"
          placeholder="Search messages…"
          value={query}
          onChange={(event) => {
            setQuery(event.target.value);
            if (event.target.value === '') setResults(null);
          }}
        />
        <select
          aria-label="Search in"
          value={scope}
          title="Search the branch you are on, or every branch of the chat"
          onChange={(event) => {
            const next = event.target.value === 'chat' ? 'chat' : 'branch';
            setScope(next);
            if (results !== null) void run(next);
          }}
        >
          <option value="branch">this branch</option>
          <option value="chat">whole chat</option>
        </select>
      </form>
      {error || results ? (
        <div className="search-results" role="listbox" aria-label="Search results">
          {error ? <p className="inline-error">{error}</p> : null}
          {results && results.items.length === 0 ? (
            <p className="muted small menu-note">
              Nothing found {scope === 'branch' ? 'on this branch' : 'in this chat'}.
            </p>
          ) : null}
          {results?.items.map((hit) => (
            <button
              type="button"
              role="option"
              aria-selected={false}
              key={hit.messageId}
              className="search-hit"
              onClick={() => {
                props.onPick(hit.messageId);
                setResults(null);
              }}
            >
              <span className={`dot ${hit.role}`} />
              <span className="search-snippet">{hit.snippet}</span>
              <span className="muted small">{hit.branches.join(', ') || 'no branch'}</span>
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
}
